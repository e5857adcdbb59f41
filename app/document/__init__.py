"""One open program as a tab of the window: the document widget (the graph, its toolbar, breadcrumb and minimap, the
panels beside it), the tab contract every tab keeps, the graph's tools (history, arrow keys, going through nodes,
overlays), Find, and what --screenshot says of the documents on screen. Above app/graph (the view and its items),
app/run and app/numerics (panels the document holds)."""
