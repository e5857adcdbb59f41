"""The `pt2-viewer` command line.

`pt2-viewer [FILE ...] [--screenshot OUT.png]` opens the window; the subcommands below run without one and import
only what they need (no Qt for `info`, no torch unless a worker job needs it). Each subcommand lives in its own module
exposing `configure(parser)` and `main(args) -> int`, so the window and the command line call the same core code.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from pt2_viewer.core.platform import desktop

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "info": ("pt2_viewer.core.cli.info", "summarise a .pt2 archive (--json for scripts)"),
    "render": ("pt2_viewer.app.graph.render_command", "render a program's graph to SVG or PNG without a window"),
    "export": ("pt2_viewer.core.cli.export", "run a model script in the worker and save every exported program"),
    "decompose": ("pt2_viewer.core.cli.decompose", "decompose a program (functional, core ATen or a custom table)"),
    "run": ("pt2_viewer.core.cli.run", "run a program on CPU or CUDA and print output summaries and latency"),
    "numerics": ("pt2_viewer.core.cli.numerics", "compare a program with a candidate node by node; find the first "
                 "divergence"),
    "lower": ("pt2_viewer.core.cli.lower", "lower a program to an ExecuTorch .pte (portable or XNNPACK) with its "
              "ETRecord, saying why each op was not delegated, or to ONNX (--to onnx)"),
    "report": ("pt2_viewer.core.cli.report", "write one self-contained HTML report of a .pt2 or a model script"),
    "diff": ("pt2_viewer.core.cli.diff", "what changed between two programs, by module (--fail-on for CI)"),
    "trace": ("pt2_viewer.core.cli.trace", "list a torch.compile trace's compiles, graph breaks and "
              "recompiles (given a script: run it under TORCH_TRACE first)"),
    "profile": ("pt2_viewer.core.cli.profile", "attribute a torch.profiler trace or ONNX Runtime profile to a "
                "program's nodes"),
}
# the subcommands that run a torch job in the worker: the worker Python chosen in the window's Preferences applies
WORKER_COMMANDS = frozenset({"export", "decompose", "run", "numerics", "report", "lower"})


def uses_worker(name: str, args: list[str]) -> bool:
    """Whether subcommand `name` with `args` runs a worker job (then the worker chosen in Preferences applies, which
    loads Qt's settings): `trace` does for a script (`trace SCRIPT.py`), not for a trace it only reads."""
    return name in WORKER_COMMANDS or (name == "trace" and any(a.endswith(".py") for a in args))


def _gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pt2-viewer",
        description="Look inside torch.export programs. Subcommands: "
        + ", ".join(f"{k} ({v[1]})" for k, v in SUBCOMMANDS.items()),
    )
    p.add_argument("files", nargs="*", help=".pt2 archives, .pte or .onnx programs, Python model scripts, or "
                   "TORCH_TRACE folders or logs to open")
    p.add_argument("--screenshot", metavar="OUT.png", help="open FILE, wait for the graph, save the window, exit")
    p.add_argument("--program", help="name of the program to show when an archive holds several")
    p.add_argument("--install-desktop", action="store_true", help="install the menu entry and .pt2 file type")
    p.add_argument("--uninstall-desktop", action="store_true", help="remove what --install-desktop installed")
    p.add_argument("--new-instance", action="store_true", help="do not hand files to an already running window")
    return p


# Qt messages that say nothing to a user: the offscreen platform (--screenshot, render, CI) warns this each time a
# window's size limits change.
QUIET_QT_MESSAGES = frozenset({"This plugin does not support propagateSizeHints()"})
QT_COMMANDS = frozenset({"render"})  # the subcommands that start Qt


def silence_qt_noise() -> None:
    """Drop the messages of QUIET_QT_MESSAGES; every other Qt message still reaches stderr (through the handler
    installed before, or as Qt's own handler prints it)."""
    from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

    previous = None

    def handler(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if message.strip() in QUIET_QT_MESSAGES:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            print(message, file=sys.stderr, flush=True)

    previous = qInstallMessageHandler(handler)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUBCOMMANDS or argv[0] in QT_COMMANDS:
        silence_qt_noise()
    if argv and argv[0] in SUBCOMMANDS:
        name = argv.pop(0)
        module_name, help_text = SUBCOMMANDS[name]
        if uses_worker(name, argv):
            from pt2_viewer.app.jobs.worker_choice import apply_saved_choice  # deferred: Qt

            apply_saved_choice()  # core reads no Qt settings; PT2V_WORKER_PYTHON still wins over it
        module = importlib.import_module(module_name)
        parser = argparse.ArgumentParser(prog=f"pt2-viewer {name}", description=help_text)
        module.configure(parser)
        return int(module.main(parser.parse_args(argv)) or 0)

    args = _gui_parser().parse_args(argv)
    if args.install_desktop or args.uninstall_desktop:
        from pt2_viewer.core.formats.registry import desktop_file_types  # deferred: it loads every format's reader

        return desktop.cli_main(install=args.install_desktop, types=desktop_file_types())
    from pt2_viewer.app.main import run_gui  # deferred: Qt (a subcommand never loads it)

    return run_gui(args)


def entry() -> int:
    """Console entry: a closed pipe (`pt2-viewer info --json | head`) ends quietly."""
    try:
        return main()
    except BrokenPipeError:
        sys.stderr.close()
        return 1


if __name__ == "__main__":
    sys.exit(entry())
