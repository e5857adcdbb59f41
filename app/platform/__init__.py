"""The window's place on the desktop: one instance per user, the trust prompt."""
