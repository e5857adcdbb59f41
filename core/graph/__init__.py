"""Questions the views ask of one graph: the index (users, modules, search), the scene (what is drawn where), the
document (selection, highlights), details, summaries, readable code."""
