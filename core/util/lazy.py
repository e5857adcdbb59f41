"""`lazy`: compute an attribute on first use and keep it, like `functools.cached_property` WITHOUT its lock.

On Python < 3.12, `functools.cached_property` holds one lock per class while computing: when a reader thread warms
`GraphIndex.symbol_users` (0.7 s on a 10k-node program), every other `GraphIndex` cached property asked for by the GUI
thread waits for it, and the window freezes. Computing twice in a rare race is harmless here: values are pure.

The value is kept with `object.__setattr__` (it passes a frozen dataclass's guard), never by writing `obj.__dict__`:
on CPython 3.11+ an instance keeps its attributes in a compact inline table until its `__dict__` is asked for, and
from then on every attribute read of that object is slower (2.4x for a field of a 14k-edge list; a 10k-node model,
whose every node computes `module_stack`, was built in 75-102 ms against 68-86 ms).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class lazy(Generic[T]):  # noqa: N801 (used as a decorator, like property)
    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, cls: type | None = None) -> lazy[T]: ...

    @overload
    def __get__(self, obj: object, cls: type | None = None) -> T: ...

    def __get__(self, obj: object | None, cls: type | None = None) -> T | lazy[T]:
        if obj is None:
            return self
        value = self.fn(obj)
        object.__setattr__(obj, self.name, value)  # a non-data descriptor: from now on the instance attribute wins
        return value
