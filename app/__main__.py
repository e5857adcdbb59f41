"""`python -m app` from a checkout, as before the one `pt2_viewer` package: the same as `python -m pt2_viewer`."""
import sys

from pt2_viewer.app.cli import entry

sys.exit(entry())
