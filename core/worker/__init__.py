"""Worker subprocesses: torch work (exporting scripts, decomposing, running) away from the GUI process.

`protocol` defines the events and exit words, `client.WorkerJob` starts and drives one job (Qt-free; a Qt wrapper
watches its file descriptors), `__main__` is the child's entry point, `cli_export` is `pt2-viewer export`.
See docs/worker.md.
"""
