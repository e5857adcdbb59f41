"""The Decompose dialog."""
