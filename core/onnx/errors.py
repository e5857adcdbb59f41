"""The one error a user sees when a `.onnx` cannot be read (core/formats/registry.py turns it into an
`ArchiveError`). This package sits below `core/formats`, beside `core/pte`, so it has its own error type;
`str(error)` is meant for the user."""
from __future__ import annotations


class OnnxError(Exception):
    """A `.onnx` could not be read: damaged, truncated, hostile (external data outside its folder), or not ONNX."""
