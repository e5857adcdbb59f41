"""The kinds of file the viewer opens, in one list (`registry.FORMATS`): how each is recognised, its reader, and
what it opens as."""
