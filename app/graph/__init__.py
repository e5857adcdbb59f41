"""Views of one program's graph: the document tab, the graph scene and view, layout and loading off the GUI thread,
image export."""
