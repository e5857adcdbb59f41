"""Where the reference's values wait for the candidate's: in memory up to a budget, then spilled to disk.

A decomposed candidate is a different graph, so the two programs cannot be stepped together node by node; the
reference runs first and keeps only the values some candidate node will be compared with, each dropped as soon as it
has been compared. Past `budget_bytes` held at once, values go to `torch.save` files in `folder` (read back with
`weights_only=True`), so a big program never holds every intermediate tensor of both runs in memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def nbytes(value: Any) -> int:
    """Bytes of the tensors in a value (a tensor, or a tuple/list of them)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.element_size() * value.numel()
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v) for v in value)
    return 0


@dataclass
class MemoryUse:
    """What comparing held: the most bytes of compared values in memory at once, and what went to disk."""

    peak_held_bytes: int = 0
    spilled_bytes: int = 0
    spilled_values: int = 0
    peak_rss_bytes: int = 0  # the whole worker process's peak resident memory

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class ReferenceStore:
    folder: Path
    budget_bytes: int
    memory: MemoryUse = field(default_factory=MemoryUse)
    _held: dict[str, Any] = field(default_factory=dict)
    _sizes: dict[str, int] = field(default_factory=dict)
    _spilled: dict[str, Path] = field(default_factory=dict)
    _held_bytes: int = 0

    def put(self, name: str, value: Any) -> None:
        import torch

        size = nbytes(value)
        if self._held_bytes + size > self.budget_bytes:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{len(self._spilled) + self.memory.spilled_values}.pt"
            torch.save(value, path)
            self._spilled[name] = path
            self.memory.spilled_bytes += size
            self.memory.spilled_values += 1
            return
        self._held[name] = value
        self._sizes[name] = size
        self._held_bytes += size
        self.memory.peak_held_bytes = max(self.memory.peak_held_bytes, self._held_bytes)

    def __contains__(self, name: str) -> bool:
        return name in self._held or name in self._spilled

    def pop(self, name: str) -> Any:
        import torch

        if name in self._held:
            self._held_bytes -= self._sizes.pop(name)
            return self._held.pop(name)
        path = self._spilled.pop(name)
        try:
            return torch.load(path, weights_only=True)
        finally:
            path.unlink(missing_ok=True)
