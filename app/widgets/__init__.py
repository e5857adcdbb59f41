"""Small widgets shared by the views: helpers, the source view and its highlighter."""
