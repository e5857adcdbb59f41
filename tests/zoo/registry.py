"""Every zoo entry, by name, in table order, and the `-k PATTERN` match."""
from __future__ import annotations

import fnmatch

from tests.zoo import blocks, exportdb, families, hf, second_zoo, vision
from tests.zoo.entry import ZooEntry

MODULES = (vision, hf, families, second_zoo, blocks, exportdb)
ENTRIES: dict[str, ZooEntry] = {e.name: e for m in MODULES for e in m.ENTRIES}


def matches(pattern: str, *names: str) -> bool:
    """`pattern` is a substring of one of `names`, or a glob (`*`, `?`, `[`) matching one."""
    glob = any(ch in pattern for ch in "*?[")
    return any(fnmatch.fnmatch(n, pattern) if glob else pattern in n for n in names)
