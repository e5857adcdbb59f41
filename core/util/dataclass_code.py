"""The methods `@dataclass` writes, compiled once and kept beside this package's bytecode.

Why: `@dataclass` writes each class's `__init__`, `__repr__` and `__eq__` (a frozen class's `__setattr__`,
`__delattr__` and `__hash__` too) as Python source, and compiles each with `exec` while the class is created. Python
keeps a module's bytecode in `__pycache__`, but not these: the window's start-up creates 76 dataclasses, some 400
compiles, 30-40 ms of CPU on every launch (compiling was 23 ms of 23.4 for 305 of them; bench/README.md).

`install()` gives the `dataclasses` module an `exec` of its own (a name in its globals, found before the builtin) that
looks each text up in a table of code objects, compiled as `exec` would compile it (same file name, no inherited
`__future__` flags): the classes are the ones `@dataclass` would make. `save()` (at exit) writes the table, when it
grew, to one marshal file in this package's `__pycache__` (or under `sys.pycache_prefix`, as Python puts the `.pyc`
files), trusted as the `.pyc` files Python runs from there and written as they are: not where bytecode is not written
(`sys.dont_write_bytecode`), atomically, and read back only if it is a table of texts and code objects. A table made
by another Python (its bytecode differs) is in another file: the name holds the interpreter's cache tag.
"""
from __future__ import annotations

import atexit
import dataclasses
import importlib.util
import marshal
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from pt2_viewer.core.util.files import write_atomically

MAX_ENTRIES = 5000  # past this (many versions' classes), the table keeps only what this process used
_table: dict[str, CodeType] = {}  # the method's source text -> its code
_used: set[str] = set()  # the texts this process made classes with
_compiled: set[str] = set()  # those it found nowhere and compiled, not yet saved
_builtin_exec = exec


def table_path() -> Path | None:
    """Where the table is kept: beside this module's bytecode. None where Python keeps no bytecode."""
    try:
        pyc = importlib.util.cache_from_source(__file__)
    except (NotImplementedError, ValueError):  # no cache tag (an interpreter without bytecode files)
        return None
    return Path(pyc).with_name(f"dataclass_methods.{sys.implementation.cache_tag}.marshal")


def install() -> None:
    """Compile `@dataclass`'s methods through the table from now on, and save it at exit (once per process)."""
    if vars(dataclasses).get("exec") is _exec:
        return
    _table.update(_load())
    vars(dataclasses)["exec"] = _exec
    atexit.register(save)


def _exec(source: Any, scope: Any = None, names: Any = None) -> None:
    """`exec` as `dataclasses` calls it, with the text's code from the table."""
    if not isinstance(source, str):
        return _builtin_exec(source, scope, names)
    code = _table.get(source)
    if code is None:
        # as exec(source) compiles it from inside dataclasses: "<string>", and none of this module's __future__ flags
        code = _table[source] = compile(source, "<string>", "exec", dont_inherit=True)
        _compiled.add(source)
    _used.add(source)
    return _builtin_exec(code, scope, names)


def counts() -> tuple[int, int]:
    """(methods made through the table since `install()`, of which compiled by this process and not saved yet)."""
    return len(_used), len(_compiled)


def _load() -> dict[str, CodeType]:
    path = table_path()
    if path is None:
        return {}
    try:
        table = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):  # none yet, unreadable, or not marshal data
        return {}
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, CodeType)
                                              for k, v in table.items()):
        return {}
    return table


def save() -> bool:
    """Write the table if it grew since it was read or saved; True if written. A failure to write costs only time."""
    path = table_path()
    if not _compiled or path is None or sys.dont_write_bytecode:
        return False
    table = _table if len(_table) <= MAX_ENTRIES else {k: _table[k] for k in _used}
    try:
        write_atomically(path, marshal.dumps(table))
    except (OSError, ValueError):
        return False
    _compiled.clear()
    return True
