"""PT2 Viewer's logic: reading `.pt2` archives, indexing, layout, worker jobs. Never imports Qt.

torch is imported only inside worker jobs that run in a child process (see docs/ARCHITECTURE.md).
"""
