"""Changes rolled up the module tree: `encoder.layer.3.attention: +2 ops, -1, 1 dtype change` (and, against a
`.pte`, `, 14 lowered`: what lowering was expected to do, counted apart).

A change counts in its own module and in every module above it that either program knows (a `ModuleList` that is
never called is no module of the tree, so `layer.3` rolls up into `encoder`, not `encoder.layer`). The root ("") holds
the totals.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.diff.nodes import ADDED, CHANGED, LOWERED, REMOVED, NodeChange
from pt2_viewer.core.util.words import plural

_WHAT_WORDS = {"op": "op change", "dtype": "dtype change", "shape": "shape change", "args": "argument change",
               "module": "module change", "dynamic": "static/dynamic change"}


@dataclass
class ModuleRollup:
    path: str  # module path, "" for the whole program
    added: int = 0
    removed: int = 0
    changed: int = 0
    # changed nodes by what changed ("dynamic" for a shape static on one side; args not counted beside an op change)
    what: Counter[str] = field(default_factory=Counter)
    depth: int = 0
    lowered: int = 0  # what lowering was expected to do (core/diff/lowering.py): not in `total`

    @property
    def total(self) -> int:
        return self.added + self.removed + self.changed

    def text(self) -> str:
        """'+2 ops, -1, 1 dtype change'."""
        parts = []
        if self.added:
            parts.append(f"+{plural(self.added, 'op')}")
        if self.removed:
            parts.append(f"-{self.removed}" if self.added else f"-{plural(self.removed, 'op')}")
        parts.extend(plural(self.what[w], _WHAT_WORDS[w]) for w in _WHAT_WORDS if self.what[w])
        if self.lowered:
            parts.append(f"{self.lowered} lowered")
        return ", ".join(parts) or "no change"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "added": self.added, "removed": self.removed, "changed": self.changed}


def roll_up(changes: list[NodeChange], modules: set[str]) -> list[ModuleRollup]:
    """Every module with a change (the root first, then in tree order), counting its submodules' changes."""
    known = set(modules) | {""}
    rows: dict[str, ModuleRollup] = {}
    for c in changes:
        for path in _ancestors(c.module, known):
            row = rows.get(path)
            if row is None:
                row = rows[path] = ModuleRollup(path)
            if c.kind == ADDED:
                row.added += 1
            elif c.kind == REMOVED:
                row.removed += 1
            elif c.kind == LOWERED:
                row.lowered += 1
            elif c.kind == CHANGED:
                row.changed += 1
                for w in c.what:
                    if w == "args" and "op" in c.what:
                        continue  # another op takes other arguments: the op change says it
                    row.what["dynamic" if w == "shape" and c.dynamic else w] += 1
    if not rows:
        rows[""] = ModuleRollup("")
    ordered = sorted(rows.values(), key=lambda r: _sort_key(r.path))
    for r in ordered:
        r.depth = sum(1 for p in _ancestors(r.path, known) if p != r.path)
    return ordered


def _ancestors(path: str, known: set[str]) -> list[str]:
    """The path itself and every known module above it, the root last."""
    out = [path]
    parts = path.split(".") if path else []
    for k in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in known:
            out.append(prefix)
    if path:
        out.append("")
    return out


def _sort_key(path: str) -> tuple[tuple[int, int | str], ...]:
    """Tree order with numbered children in number order (`layer.2` before `layer.10`)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in path.split(".")) if path else ()
