"""Decomposition: the worker job, a user's decomposition table, provenance from torch's metadata, op statistics."""
