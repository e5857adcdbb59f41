"""`pt2-viewer render FILE -o OUT.svg|OUT.png`: draw a program's graph without a window.

Uses the same scene model and drawing as the window (so pictures match what users see), with layouts computed
in-process: there is no event loop to keep responsive here.
"""
from __future__ import annotations

import argparse
import os
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .pt2 archive")
    parser.add_argument("-o", "--output", required=True, help="OUT.svg or OUT.png")
    parser.add_argument("--program", help="the program to draw when the archive holds several")
    parser.add_argument("--expand", choices=("auto", "all", "none"), default="auto",
                        help="module groups: as the window opens them (auto), all expanded, or all collapsed")


def main(args: argparse.Namespace) -> int:
    if not args.output.lower().endswith((".svg", ".png")):
        print("pt2-viewer: the output must end in .svg or .png", file=sys.stderr)
        return 2
    from core.errors import ArchiveError
    from core.reader import read_archive

    try:
        archive = read_archive(args.file)
    except ArchiveError as e:
        print(f"pt2-viewer: {e}", file=sys.stderr)
        return 2
    if not archive.programs:
        print(f"pt2-viewer: '{args.file}' holds no program graph (an AOTInductor package?)", file=sys.stderr)
        return 2
    try:
        program = archive.program(args.program)
    except KeyError:
        print(f"pt2-viewer: no program '{args.program}'; the archive holds "
              f"{', '.join(p.name for p in archive.programs)}", file=sys.stderr)
        return 2

    from core.document_model import DocumentModel
    from core.layout.engine import layout

    model = DocumentModel(archive, program)
    scene = model.level.scene
    if args.expand == "all":
        scene.expand_all()
    elif args.expand == "none":
        scene.collapse_all()
    while True:
        pending = scene.pending_requests()
        if not pending:
            break
        scene.set_layouts({path: (req, layout(req)) for path, req in pending.items()})

    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.export_image import export_scene
    from app.graph_view import GraphView

    app = QApplication.instance() or QApplication([])  # noqa: F841 (Qt needs it for fonts and painting)
    view = GraphView()
    composed = scene.compose()
    looks = model.looks(n.node for n in composed.nodes)
    view.show_layout(composed, looks, model.edge_labeller())
    try:
        export_scene(view.scene(), args.output)
    except OSError as e:
        print(f"pt2-viewer: could not write '{args.output}': {e}", file=sys.stderr)
        return 1
    print(args.output)
    return 0
