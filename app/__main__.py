"""`python -m app` starts PT2 Viewer, exactly as the `pt2-viewer` command does."""
import sys

from app.cli import entry

sys.exit(entry())
