"""The side-by-side compare view."""
