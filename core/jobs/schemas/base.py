"""How a job's request and result are written down: small dataclasses, read from JSON with validation and written
back to exactly the JSON the documents describe (docs/jobs.md, docs/numerics.md, docs/worker.md).

Shaped after torch's own `torch/_export/serde/schema.py`: one dataclass per message, one place that says what a field
means, enums for closed sets of words. Each job kind has its schema module beside this one (export, decompose, run,
numerics, report, warm); the worker writes through it and the window and the command line read through it, so a
field's name and type are written once.

- `Schema.from_json(data)` checks every field's type (a JSON number where an `int` is wanted, a list of strings...)
  and raises `SchemaError` naming the field; unknown keys are kept in `extra` and written back, so a newer worker's
  result read by an older window loses nothing.
- `Schema.to_json()` gives the documented JSON: field names as they are, nested schemas as objects, enums as their
  values. A field marked `omit_none` is left out when it is None (a block that is there only when asked for). A
  message read and written back is the same JSON, keys in the same order (plus `version`): the worker passes every
  result through its schema before writing it.
- A request or a result carries `"version"`: a reader refuses a version newer than its own, naming it.
- `local_path(...)` marks a field that holds a path on the machine that wrote the message (a `.pt2`, an output
  folder): a worker on another machine must carry those files (`Schema.local_paths()` lists them).
"""
from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar, Union

LOCAL_PATH = "local_path"  # field metadata: the value is a path on the writer's machine (or a list/dict of them)
OMIT_NONE = "omit_none"  # field metadata: left out of the JSON when None

S = TypeVar("S", bound="Schema")
# JSON has no NaN or infinity: the jobs write those numbers as strings ("nan", "inf", "-inf").
Number = float | str


class SchemaError(ValueError):
    """A message does not have the shape its schema says: which field, what was wanted, what came."""


def local_path(*, default: Any = None, omit_none: bool = False) -> Any:
    """A field holding a local path (str or None): what a remote worker must copy there, or back."""
    return dataclasses.field(default=default, metadata={LOCAL_PATH: True, OMIT_NONE: omit_none})


def optional(*, default: Any = None, local: bool = False) -> Any:
    """A field left out of the JSON when it is None (a block present only when asked for, e.g. run's `compile`)."""
    return dataclasses.field(default=default, metadata={OMIT_NONE: True, LOCAL_PATH: local})


def items(factory: Any = list, *, local: bool = False) -> Any:
    """A list or dict field with an empty default (`local`: its strings are local paths)."""
    return dataclasses.field(default_factory=factory, metadata={LOCAL_PATH: local})


@dataclasses.dataclass(kw_only=True)
class Schema:
    """Base of every message. Subclasses are dataclasses; `KIND` names the message, `VERSION` its format."""

    KIND: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    VERSIONED: ClassVar[bool] = False  # a request or a result: its JSON says `"version": VERSION`
    # keys this schema does not know (a newer writer's), kept so that they are written back as they came
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    # the order the keys came in, so that a message read and written back is the same text (`--json` prints it)
    key_order: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)

    @classmethod
    def from_json(cls: type[S], data: object, where: str = "") -> S:
        """Read and check `data` (a JSON object); `SchemaError` names the first field that does not fit."""
        where = where or cls.KIND or cls.__name__
        if not isinstance(data, Mapping):
            raise SchemaError(f"{where}: expected a JSON object, got {_kind(data)}")
        version = data.get("version", 1) if cls.VERSIONED else 1
        if not isinstance(version, int) or isinstance(version, bool) or version > cls.VERSION:
            raise SchemaError(f"{where}: format version {version!r}, newer than this PT2 Viewer reads "
                              f"({cls.VERSION}): update PT2 Viewer, or use the one that wrote it")
        hints = _hints(cls)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if not f.init or f.name in ("extra", "key_order"):
                continue
            if f.name in data:
                values[f.name] = _convert(data[f.name], hints[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SchemaError(f"{where}: the field '{f.name}' is missing")
        known = {f.name for f in dataclasses.fields(cls)} | ({"version"} if cls.VERSIONED else set())
        return cls(**values, extra={str(k): v for k, v in data.items() if k not in known},
                   key_order=[str(k) for k in data])

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form: plain dicts, lists, strings and numbers."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("extra", "key_order"):
                continue
            value = getattr(self, f.name)
            if value is None and f.metadata.get(OMIT_NONE):
                continue
            if self.key_order and f.name not in self.key_order and value == _default(f):
                continue  # read without it, still its default: written back without it
            out[f.name] = _plain(value)
        out.update(self.extra)
        if self.VERSIONED:
            out["version"] = self.VERSION
        if self.key_order:  # as it was read; what is new after
            rank = {k: i for i, k in enumerate(self.key_order)}
            out = dict(sorted(out.items(), key=lambda kv: rank.get(kv[0], len(rank))))
        return out

    @classmethod
    def local_paths(cls) -> list[str]:
        """The fields that hold local paths (nested schemas as 'field.sub')."""
        hints = _hints(cls)
        names: list[str] = []
        for f in dataclasses.fields(cls):
            if f.metadata.get(LOCAL_PATH):
                names.append(f.name)
            for sub in _schemas_in(hints[f.name]):
                names += [f"{f.name}.{n}" for n in sub.local_paths()]
        return names


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The class's field types, resolved once (the modules write `from __future__ import annotations`)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _schemas_in(tp: Any) -> list[type[Schema]]:
    if isinstance(tp, type) and issubclass(tp, Schema):
        return [tp]
    return [s for arg in typing.get_args(tp) for s in _schemas_in(arg)]


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _convert(value: Any, tp: Any, where: str) -> Any:
    """`value` checked against the type hint `tp` (and nested schemas and enums built)."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise SchemaError(f"{where}: expected {_name(tp)}, got null")
        choices = [a for a in args if a is not type(None)]
        if len(choices) == 1:  # X | None: the error inside X says more
            return _convert(value, choices[0], where)
        for arg in choices:
            try:
                return _convert(value, arg, where)
            except SchemaError:
                continue
        raise SchemaError(f"{where}: expected {_name(tp)}, got {_kind(value)}")
    if origin is list:
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list, got {_kind(value)}")
        (arg,) = typing.get_args(tp) or (Any,)
        return [_convert(v, arg, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        key_t, value_t = typing.get_args(tp) or (str, Any)
        return {str(k): _convert(v, value_t, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Schema):
        return tp.from_json(value, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            words = ", ".join(repr(m.value) for m in tp)
            raise SchemaError(f"{where}: {value!r} is not one of {words}") from None
    if tp is float:  # a whole number is a number too, and stays as written (the JSON written back is the same)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise SchemaError(f"{where}: expected a number, got {_kind(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SchemaError(f"{where}: expected a whole number, got {_kind(value)}")
    if tp in (str, bool):
        if type(value) is tp:
            return value
        raise SchemaError(f"{where}: expected {_name(tp)}, got {_kind(value)}")
    raise SchemaError(f"{where}: the schema's type {tp!r} is not one a message can hold")  # a bug in a schema


def _name(tp: Any) -> str:
    if tp is str:
        return "a string"
    if tp is bool:
        return "true or false"
    if tp in (int, float):
        return "a number"
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if args:
        return " or ".join(_name(a) for a in args) + (" or null" if len(args) < len(typing.get_args(tp)) else "")
    return getattr(tp, "__name__", str(tp))


def _plain(value: Any) -> Any:
    if isinstance(value, Schema):
        return value.to_json()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


__all__ = ["LOCAL_PATH", "Number", "OMIT_NONE", "Schema", "SchemaError", "items", "local_path", "optional"]
