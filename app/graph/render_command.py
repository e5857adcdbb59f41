"""`pt2-viewer render FILE -o OUT.svg|OUT.png`: draw a program's graph without a window.

Uses the same scene model and drawing as the window (so pictures match what users see), with layouts computed
in-process: there is no event loop to keep responsive here.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.formats import registry
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.records import LayoutError
from pt2_viewer.core.pt2.errors import ArchiveError

if TYPE_CHECKING:
    from pt2_viewer.app.graph.view import GraphView
    from pt2_viewer.core.model.program import Archive, Program


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .pt2 archive, an ExecuTorch .pte or an .onnx model")
    parser.add_argument("-o", "--output", required=True, help="OUT.svg or OUT.png")
    parser.add_argument("--program", help="the program to draw when the file holds several")
    parser.add_argument("--expand", choices=("auto", "all", "none"), default="auto",
                        help="module groups: as the window opens them (auto), all expanded, or all collapsed")


def main(args: argparse.Namespace) -> int:
    if not args.output.lower().endswith((".svg", ".png")):
        print("pt2-viewer: the output must end in .svg or .png", file=sys.stderr)
        return 2

    try:
        archive = registry.read(args.file)  # by its format's reader (core/formats/registry.py)
    except ArchiveError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return exit_status.FAILED
    if not archive.programs:
        print(f"pt2-viewer: '{args.file}' holds no program graph (an AOTInductor package?)", file=sys.stderr)
        return exit_status.FAILED
    try:
        program = archive.program(args.program)
    except KeyError:
        print(f"pt2-viewer: no program '{args.program}'; the archive holds "
              f"{', '.join(p.name for p in archive.programs)}", file=sys.stderr)
        return exit_status.FAILED

    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from pt2_viewer.app.graph.export_image import export_scene  # deferred: Qt (QtSvg)

    app = QApplication.instance() or QApplication([])  # noqa: F841 (Qt needs it for fonts and painting)
    try:
        view = _draw(archive, program, args.expand)
    except LayoutError as e:
        print(f"pt2-viewer: could not lay out the graph of '{args.file}': {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug, or an archive nobody foresaw: one line, never a traceback
        print(f"pt2-viewer: could not draw the graph of '{args.file}': internal error {type(e).__name__}: {e}. "
              "Try --expand none; please report this with the file.", file=sys.stderr)
        return 1
    try:
        size = export_scene(view.scene(), args.output)
    except OSError as e:
        print(f"pt2-viewer: could not write '{args.output}': {e}", file=sys.stderr)
        return 1
    print(args.output)
    note = size.note() if size is not None else ""
    if note:  # a folded or cut picture says so (stderr: stdout is the file's name, for scripts)
        print(f"pt2-viewer: {size.width} x {size.height} px: {note}.", file=sys.stderr)  # type: ignore[union-attr]
    return 0


def _draw(archive: Archive, program: Program, expand: str) -> GraphView:
    """A view holding the program's graph as the window draws it, laid out in this process."""
    from pt2_viewer.app.graph.view import GraphView  # deferred: Qt
    from pt2_viewer.core.layout.engine import layout  # deferred: pygraphviz

    model = DocumentModel(archive, program)
    scene = model.level.scene
    if expand == "all":
        scene.expand_all()
    elif expand == "none":
        scene.collapse_all()
    lay_out_all(scene, layout)
    view = GraphView()
    composed = scene.compose()
    view.show_layout(composed, model.looks(n.node for n in composed.nodes), model.edge_labeller())
    return view
