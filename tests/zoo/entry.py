"""One zoo entry: a named recipe that builds a real model with random weights and the inputs to export it with.

The builder returns a `Recipe` rather than an exported program so the cache (`tests/zoo/cache.py`) owns how every
entry is exported, timed and saved, the same way for all of them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recipe:
    """What `torch.export.export` is called with."""

    model: Any  # torch.nn.Module, in eval mode unless the entry is about training behaviour
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None
    strict: bool = False


@dataclass(frozen=True)
class ZooEntry:
    name: str  # file stem in the cache and the row name in the zoo table
    family: str  # "torchvision", "hf-decoder", "nn", "exportdb", ...
    build: Callable[[], Recipe]
    note: str = ""  # what this entry covers (GQA + RoPE, unbounded batch, ...)
