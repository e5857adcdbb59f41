"""The parsed-program cache's key holds `FORMAT_VERSION` (core/pt2/parsed_cache.py), a constant bumped by hand when
what an entry holds changes. This keeps the layout of what it holds at that version: every dataclass and msgspec
struct an entry holds (reached from `Archive` through its fields' types, and those graph_columns.py builds), each
field's name and type, each enum's members, the entry's extension codes. A change to any of them without a bump
would decode old entries into the new classes: this fails first, and says what to do."""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import typing

import msgspec

from pt2_viewer.core.model.metadata import ModuleScope
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.model.tensor_meta import TensorMeta
from pt2_viewer.core.pt2 import graph_columns, parsed_cache

# FORMAT_VERSION -> the digest of the layout it was written with (`layout_digest()` below)
LAYOUTS = {3: "5f03bc4dacb2d650", 4: "44bb04f7dd0fd509", 5: "cc3e1d8d18581828", 6: "ed11c0707e762b05"}


def _reached(root: object, seen: dict[type, None]) -> None:
    for arg in typing.get_args(root):
        _reached(arg, seen)
    if not isinstance(root, type) or root in seen:
        return
    if dataclasses.is_dataclass(root) or issubclass(root, msgspec.Struct):
        seen[root] = None
        hints = typing.get_type_hints(root)
        for name in _field_names(root):
            _reached(hints[name], seen)
    elif issubclass(root, enum.Enum):
        seen[root] = None


def _field_names(cls: type) -> list[str]:
    if issubclass(cls, msgspec.Struct):
        return [f.name for f in msgspec.structs.fields(cls)]
    return [f.name for f in dataclasses.fields(cls)]


def layout() -> list[str]:
    seen: dict[type, None] = {}
    for root in (Archive, TensorMeta, ModuleScope):
        _reached(root, seen)
    lines = []
    for cls in sorted(seen, key=lambda c: (c.__module__, c.__qualname__)):
        name = f"{cls.__module__}.{cls.__qualname__}"
        if dataclasses.is_dataclass(cls) or issubclass(cls, msgspec.Struct):
            hints = typing.get_type_hints(cls)
            lines += [f"{name}.{f}: {hints[f]}" for f in _field_names(cls)]
        else:
            lines += [f"{name}.{m.name} = {m.value!r}" for m in typing.cast(type[enum.Enum], cls)]
    codes = (graph_columns.EXT_REF, graph_columns.EXT_GRAPH, graph_columns.EXT_COMPLEX, parsed_cache._EXT_META)
    return [*lines, f"extension codes {codes}", f"header {parsed_cache.HEADER.format}"]


def layout_digest() -> str:
    return hashlib.sha256("\n".join(layout()).encode()).hexdigest()[:16]


def test_the_cached_layout_changes_only_with_the_format_version() -> None:
    version = parsed_cache.FORMAT_VERSION
    assert parsed_cache.MAGIC == b"PT2VPC%02d" % version
    assert version in LAYOUTS, f"record FORMAT_VERSION {version}'s layout here: {layout_digest()!r}"
    assert LAYOUTS[version] == layout_digest(), (
        "what a parsed-program cache entry holds has changed (a model dataclass's fields, an enum, an extension "
        f"code): bump FORMAT_VERSION in core/pt2/parsed_cache.py and record {layout_digest()!r} for it here")
    assert len(layout()) > 100  # the walk reached the model's classes
