"""Entry point of the PyInstaller bundle: `pt2-viewer [ARGS]`, plus `pt2-viewer -m MODULE [ARGS]`.

In a bundle `sys.executable` is this program, not a Python, so code that starts a helper child process as
`[sys.executable, "-m", "pt2_viewer.core.something", ...]` (the Graphviz layout child, for example) would start a second
window instead. Accepting `-m MODULE` here keeps that one spelling working in both worlds. Only `pt2_viewer.` modules
are run this way; torch jobs never run here (they need the user's own Python, see docs/packaging.md).
"""
from __future__ import annotations

import multiprocessing
import runpy
import sys

RUNNABLE_PACKAGES = ("pt2_viewer.",)


def main() -> int:
    multiprocessing.freeze_support()  # a multiprocessing child of the bundle runs its target and exits here
    if len(sys.argv) >= 3 and sys.argv[1] == "-m":
        module = sys.argv[2]
        if not module.startswith(RUNNABLE_PACKAGES):
            print(f"pt2-viewer: this bundle runs only pt2_viewer.* modules with -m, not {module!r}",
                  file=sys.stderr)
            return 2
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    from pt2_viewer.app.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
