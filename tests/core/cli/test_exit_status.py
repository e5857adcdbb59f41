"""What a user gets from each command for a bad file (issue 30 §4): the same exit status everywhere (the rule of
core/cli/exit_status.py and README.md "Exit status": 1 for a file that cannot be used), one message that says it once
("Check the path." not twice, a text file renamed .pt2 not called truncated), no traceback; and a job's files never
in the user's folder, whether the job failed or succeeded. Each test is a real `python -m pt2_viewer` process."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

TIMEOUT_S = 300
SCRIPTS = REPO_ROOT / "tests" / "scripts"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pt2_viewer", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=REPO_ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def command(name: str, file: Path, out: Path) -> list[str]:
    """`name` on `file`, writing (if it writes) into `out`."""
    return {
        "info": ["info", str(file)],
        "render": ["render", str(file), "-o", str(out / "graph.svg")],
        "report": ["report", str(file), "-o", str(out / "report.html")],
        "decompose": ["decompose", str(file), "-o", str(out / "model.core.pt2"), "-q"],
        "run": ["run", str(file), "-q"],
        "numerics": ["numerics", str(file), "--candidate", "core", "-q"],
    }[name]


COMMANDS = ("info", "render", "report", "decompose", "run", "numerics")


@pytest.mark.parametrize("name", COMMANDS)
def test_a_text_file_renamed_pt2_exits_1_everywhere_and_leaves_nothing(name: str, tmp_path: Path) -> None:
    bad = tmp_path / "notes.pt2"
    bad.write_text("meeting notes, not a program\n" * 10)
    out = tmp_path / "out"
    out.mkdir()
    done = cli(*command(name, bad, out))
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "notes.pt2" in done.stderr and "text file" in done.stderr and "truncated" not in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert list(out.iterdir()) == []  # a failed job leaves nothing in the user's folder


@pytest.mark.parametrize("name", COMMANDS)
def test_a_missing_file_exits_1_and_says_check_the_path_once(name: str, tmp_path: Path) -> None:
    done = cli(*command(name, tmp_path / "missing.pt2", tmp_path))
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "missing.pt2" in done.stderr and "does not exist" in done.stderr
    assert done.stderr.count("Check the path") == 1, done.stderr


def test_export_of_a_missing_script_exits_1(tmp_path: Path) -> None:
    done = cli("export", str(tmp_path / "missing.py"), "-o", str(tmp_path / "out"))
    assert done.returncode == 1 and "missing.py" in done.stderr and "Traceback" not in done.stderr


def test_report_on_a_folder_says_what_it_takes(tmp_path: Path) -> None:
    folder = tmp_path / "bad" / "dir.pt2"
    folder.mkdir(parents=True)
    done = cli("report", str(folder), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 1
    assert "Errno" not in done.stderr and "folder" in done.stderr and "pt2-viewer export" in done.stderr


def test_a_wrong_command_line_exits_2() -> None:
    assert cli("run").returncode == 2
    assert cli("info", "--no-such-flag", "x.pt2").returncode == 2


@pytest.mark.parametrize("made", ["missing", "folder", "text"])
def test_run_etdump_of_a_pte_that_is_not_there_names_the_file_and_exits_1(made: str, tmp_path: Path) -> None:
    pte = tmp_path / "phone.pte"  # the .pte the user named; --etdump's "name the .pte it ran" would mislead here
    if made == "folder":
        pte.mkdir()
    elif made == "text":
        pte.write_text("not a program\n")
    done = cli("run", str(pte), "--etdump", str(tmp_path / "run.etdp"), "-q")
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "phone.pte" in done.stderr and "name the .pte it ran" not in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_run_etdump_of_a_pt2_is_a_wrong_command_line(pt2_path: Callable[[str], Path],  # noqa: F811
                                                     tmp_path: Path) -> None:
    done = cli("run", str(pt2_path("batchnorm_train")), "--etdump", str(tmp_path / "run.etdp"), "-q")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.strip() == ("error: --etdump and --debug-buffer read a recording of an ExecuTorch .pte: "
                                   "name the .pte it ran")


@pytest.mark.parametrize("to", ["onnx", "portable"])
def test_lower_to_a_folder_asks_for_a_file_name(to: str, pt2_path: Callable[[str], Path],  # noqa: F811
                                                tmp_path: Path) -> None:
    source = pt2_path("batchnorm_train")
    done = cli("lower", str(source), "--to", to, "-o", str(tmp_path), "-q")
    assert done.returncode == 2, (done.returncode, done.stderr)
    example = tmp_path / f"{source.stem}.{'onnx' if to == 'onnx' else 'pte'}"
    assert done.stderr == f"error: -o {tmp_path} is a folder: name the file to write (e.g. {example})\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("made", ["missing", "folder"])
def test_numerics_against_an_onnx_that_is_not_there_says_check_the_path(made: str, pt2_path: Callable[[str], Path],  # noqa: F811
                                                                       tmp_path: Path) -> None:
    onnx = tmp_path / "model.onnx"
    if made == "folder":
        onnx.mkdir()
    done = cli("numerics", str(pt2_path("batchnorm_train")), "--candidate", str(onnx), "-q")
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "model.onnx" in done.stderr and "Check the path" in done.stderr
    assert "Open the .onnx in the viewer" not in done.stderr and "Traceback" not in done.stderr


def test_decompose_leaves_only_what_was_asked_for(pt2_path: Callable[[str], Path], tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "mine"
    out.mkdir()
    (out / "request.json").write_text('{"the user": "owns this"}')
    done = cli("decompose", str(pt2_path("batchnorm_train")), "-o", str(out / "bn.core.pt2"), "-q")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["bn.core.mapping.json", "bn.core.pt2", "request.json"]
    assert (out / "request.json").read_text() == '{"the user": "owns this"}'


def test_export_leaves_only_programs_and_report_in_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "exported"
    out.mkdir()
    (out / "result.json").write_text("mine")
    done = cli("export", str(SCRIPTS / "doctor" / "two_exports.py"), "-o", str(out), "--diagnose", "-q")
    assert done.returncode == 1, done.stderr  # the script stops at its second export
    assert sorted(p.name for p in out.iterdir()) == ["00_Proj.pt2", "01_Proj.draft.pt2", "report.json",
                                                      "result.json"]
    assert (out / "result.json").read_text() == "mine"


def test_a_strict_exports_partial_graph_is_printed_once(tmp_path: Path) -> None:
    script = tmp_path / "branchy.py"
    script.write_text("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                      "        if x.sum() > 0:\n            return x.sin()\n        return x.cos()\n\n\n"
                      "ep = torch.export.export(M(), (torch.randn(3),), strict=True)\n")
    done = cli("export", str(script), "-o", str(tmp_path / "out"))
    assert done.returncode == 1
    assert (done.stdout + done.stderr).count("class GraphModule") == 1, done.stderr


def test_report_of_a_script_keeps_only_programs_and_report_in_export_dir(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    done = cli("report", str(SCRIPTS / "several_exports.py"), "-o", str(tmp_path / "r.html"), "--export-dir",
               str(kept))
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in kept.iterdir())
    assert "report.json" in names and any(n.endswith(".pt2") for n in names)
    assert not {"request.json", "result.json"} & set(names)
    assert all(p.is_file() for p in kept.iterdir())
