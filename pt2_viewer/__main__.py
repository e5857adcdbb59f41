"""`python -m pt2_viewer` starts PT2 Viewer, exactly as the `pt2-viewer` command does."""
import sys

from pt2_viewer.app.cli import entry

sys.exit(entry())
