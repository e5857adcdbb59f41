"""`python -m app` starts PT2 Viewer, exactly as the `pt2-viewer` command does."""
import sys

from app.cli import main

sys.exit(main())
