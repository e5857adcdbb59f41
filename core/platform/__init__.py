"""The user's machine: desktop integration, remembered trust decisions, the app's temporary folders."""
