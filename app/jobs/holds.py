"""Which programs the window's tabs show, for the warm workers (core/jobs/warm.py): a program's warm worker lives as
long as a tab shows that program, whether or not its Run panel was ever built.

Kept apart from the job driver so that a document can say what it shows without importing the worker client before
its first view (tests/app/test_lazy_imports.py): the pool, once the driver makes it (`attach`), takes the holds made
so far and every later one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from pt2_viewer.core.jobs.warm import WarmPool

_HOLDS: dict[int, tuple[str, object]] = {}  # id(token) -> (program, token)
_POOL: WarmPool | None = None


def hold(program: str, owner: QObject) -> None:
    """`owner` (a document) shows `program` until it is destroyed."""
    token = object()  # outlives `owner` in the slot below, unlike `owner` itself
    _HOLDS[id(token)] = (program, token)
    if _POOL is not None:
        _POOL.hold(program, token)
    owner.destroyed.connect(lambda *_args, token=token: _release(token))


def _release(token: object) -> None:
    _HOLDS.pop(id(token), None)
    if _POOL is not None:
        _POOL.release(token)


def attach(pool: WarmPool) -> None:
    """`pool` is the application's warm pool: it learns every program held so far, and later holds as they come."""
    global _POOL
    _POOL = pool
    for program, token in _HOLDS.values():
        pool.hold(program, token)
