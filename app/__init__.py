"""PT2 Viewer's Qt views. Everything that answers questions about programs lives in `core/`."""
