"""Opening one .pt2 imports only what its first view needs: a fresh process that opens a program offscreen has not
imported the script, compare or decompose views (they load when first used), nor torch, nor a profile's or a compile
trace's reader, nor the .pte reader's flatbuffers runtime (which imports numpy), nor pygraphviz (the layout child
runs Graphviz); nor the Run and Numerics tabs' panels and the job driver under them (built when their tab is first
shown, app/document/job_tabs.py) and the worker client (File > Preferences imports it only for a saved cap), the
AOTInductor package's tab, pygments (the Code tab colours its Python when first shown), the comparison models and
diffs (a comparison imports them); nor the start page, which a window opened on a file never shows, nor the dialogs
of the menus (Preferences, Keyboard Shortcuts, export and save), nor the side panels but Details (built when their
tab is first shown), nor the worker's Python choice and SSH target (imported once Preferences holds a choice)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.programs import REPO_ROOT

NOT_NEEDED = ("pt2_viewer.app.export.script_document", "pt2_viewer.app.compare.view",
              "pt2_viewer.app.decompose.dialog", "torch", "flatbuffers", "numpy",
              "onnx", "google.protobuf", "pt2_viewer.core.onnx.reader",  # a .onnx's reader, loaded when one opens
              "pygraphviz",  # the layout child lays out; the window keys cached layouts by its files (engine_id.py)
              # View > Overlay > Import Profile's reader, and a compile trace's (the registry knows a trace by
              # core/trace/files.py alone)
              "pt2_viewer.app.document.profile_import", "pt2_viewer.core.profile.load",
              "pt2_viewer.core.trace.reader", "pt2_viewer.core.trace.model")
FIRST_SHOWN = ("pt2_viewer.app.run.panel", "pt2_viewer.app.numerics.panel", "pt2_viewer.app.jobs.driver",
               "pt2_viewer.core.jobs.client", "pt2_viewer.app.deploy.aoti_tab", "pygments",
               "pt2_viewer.core.compare.session", "pt2_viewer.core.diff.chain", "pt2_viewer.core.deploy.delegation",
               # the start page (a window opened on a file never shows it), File > Preferences, Help > Keyboard
               # Shortcuts, the export and save dialogs, a .pte's panel, an AOTInductor package's text
               "pt2_viewer.app.start_page", "pt2_viewer.app.jobs.preferences_dialog",
               "pt2_viewer.app.graph.shortcuts_dialog", "pt2_viewer.app.window.file_actions",
               "pt2_viewer.app.deploy.pte_panel", "pt2_viewer.core.pt2.info",
               # the side panels but Details (app/document/side_panels.py)
               "pt2_viewer.app.panels.signature", "pt2_viewer.app.panels.symbols", "pt2_viewer.app.panels.code",
               "pt2_viewer.app.panels.summary",
               # the worker chosen in Preferences (app/jobs/worker_choice.py): nothing is chosen here
               "pt2_viewer.core.jobs.python_env", "pt2_viewer.core.jobs.remote.target",
               # the jobs' request and result schemas: a comparison or a job's tab imports them
               "pt2_viewer.core.jobs.schemas.decompose", "pt2_viewer.core.jobs.schemas.run")

OPEN_ONE = """
import json, sys
from PySide6.QtWidgets import QApplication
from pt2_viewer.app.main_window import MainWindow
app = QApplication([])
window = MainWindow(interactive=False)
window.show()
shown = []
window.document_ready.connect(lambda doc: (shown.append(doc), app.quit()))
window.open_failed.connect(lambda message: (shown.append(message), app.quit()))
window.open_path(sys.argv[1])
app.exec()
window.layouts.close()
print(json.dumps({"shown": not isinstance(shown[0], str), "modules": sorted(sys.modules)}))
"""


def test_opening_a_program_imports_no_script_compare_or_decompose_view_nor_a_tab_not_shown() -> None:
    example = REPO_ROOT / "resources" / "examples" / "example.pt2"
    run = subprocess.run([sys.executable, "-c", OPEN_ONE, str(example)], capture_output=True,
                         text=True, timeout=300, cwd=REPO_ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["shown"]
    assert "pt2_viewer.app.document.widget" in report["modules"]  # the first view itself was built
    assert [m for m in NOT_NEEDED if m in report["modules"]] == []
    assert [m for m in FIRST_SHOWN if m in report["modules"]] == []
