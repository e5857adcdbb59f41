"""Tensor metadata: the `TensorMeta` and `SymDim` records, and parsing them from torch's serialized schema JSON.

Both the reader (at read time) and `Value.meta` (lazily, on first look) parse tensor metadata, so the parser lives
here, below both, with the few schema-JSON helpers it needs (objects, lists, unions). It raises ValueError on JSON of
the wrong shape; the reader turns that into an ArchiveError naming the archive.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.model.expr import parse_srepr
from pt2_viewer.core.util.lazy import lazy


@dataclass(frozen=True)
class SymDim:
    """A symbolic size or stride, e.g. `s77` or `2*s77`, with the example value export traced with."""

    text: str
    symbols: tuple[str, ...]
    hint: int | float | bool | None = None

    def __str__(self) -> str:
        return self.text


Dim = int | SymDim


@dataclass(frozen=True)
class TensorMeta:
    """A tensor's metadata as the archive holds it (torch's `TensorMeta`), dims either ints or symbols."""

    dtype: str  # torch spelling without the prefix: "float32", "int64", "bool"
    sizes: tuple[Dim, ...]
    strides: tuple[Dim, ...]
    device: str  # "cpu", "cuda:0", "meta"
    requires_grad: bool
    layout: str = "strided"
    storage_offset: Dim = 0

    @property
    def symbols(self) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for d in (*self.sizes, *self.strides):
            if isinstance(d, SymDim):
                out.update(dict.fromkeys(d.symbols))
        return tuple(out)

    @lazy
    def shape_text(self) -> str:
        """`[s77, 3]`. Kept once computed (in the instance's `__dict__`, outside the frozen fields): one
        `TensorMeta` is shared by every value of its shape, and node labels and widths ask for it per node."""
        return "[" + ", ".join(str(d) for d in self.sizes) + "]"

    @lazy
    def short(self) -> str:
        """`f32[s77, 3]`, as torch's print_readable writes it; a tensor of another layout than strided says which:
        `f32[5, 5] sparse_coo` (its values, min and max mean something else than a dense tensor's)."""
        layout = "" if self.layout == "strided" else f" {self.layout.lstrip('_')}"
        return f"{DTYPE_SHORT.get(self.dtype, self.dtype)}{self.shape_text}{layout}"

    def numel(self) -> int | None:
        n = 1
        for d in self.sizes:
            if not isinstance(d, int):
                return None
            n *= d
        return n


DTYPE_SHORT = {
    "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32",
    "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8", "complex64": "c64", "complex128": "c128",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}
SCALAR_TYPES = {
    0: "unknown", 1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float16", 7: "float32", 8: "float64",
    9: "complex32", 10: "complex64", 11: "complex128", 12: "bool", 13: "bfloat16", 28: "uint16", 29: "float8_e4m3fn",
    30: "float8_e5m2", 31: "float8_e4m3fnuz", 32: "float8_e5m2fnuz", 33: "float8_e8m0fnu", 34: "uint32", 35: "uint64",
}
LAYOUTS = {0: "unknown", 1: "sparse_coo", 2: "sparse_csr", 3: "sparse_csc", 4: "sparse_bsr", 5: "sparse_bsc",
           6: "_mkldnn", 7: "strided"}


def json_object(v: Any, what: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"{what} should be an object, found {type(v).__name__}")
    return v


def json_list(v: Any, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise ValueError(f"{what} should be a list, found {type(v).__name__}")
    return v


def json_union(v: Any, what: str) -> tuple[str, Any]:
    """torch's schema unions are objects with exactly one meaningful key."""
    if type(v) is dict and len(v) == 1:  # the usual case, first: the reader asks this ~50,000 times at 10k nodes
        (item,) = v.items()
        return item
    d = json_object(v, what)
    if len(d) != 1:
        # Tolerate extra null members some writers emit; pick the one set member.
        set_items = [(k, x) for k, x in d.items() if x is not None]
        if len(set_items) != 1:
            raise ValueError(f"{what} should hold exactly one member, found {sorted(d)}")
        return set_items[0]
    return next(iter(d.items()))


def device_text(d: Any) -> str:
    d = json_object(d, "device")
    t = str(d.get("type", "?"))
    return t if d.get("index") is None else f"{t}:{d['index']}"


def sym_value(v: Any, what: str) -> int | float | bool | SymDim:
    kind, x = json_union(v, what)
    if kind == "as_expr":
        x = json_object(x, what)
        parsed = parse_srepr(str(x["expr_str"]))
        hint = x.get("hint")
        hint_value = json_union(hint, "hint")[1] if isinstance(hint, dict) and hint else None
        return SymDim(parsed.text, parsed.symbols, hint_value)
    if kind in ("as_int", "as_float", "as_bool"):
        return x
    raise ValueError(f"{what}: unknown symbolic kind '{kind}'")


def dim_value(s: Any, what: str) -> int | float | bool | SymDim:
    if type(s) is dict and len(s) == 1:
        v = s.get("as_int")
        if v is not None:
            return v
    return sym_value(s, what)


def tensor_meta(d: Any) -> TensorMeta:
    d = json_object(d, "tensor metadata")
    return TensorMeta(
        dtype=SCALAR_TYPES.get(d["dtype"], f"dtype{d['dtype']}"),
        sizes=tuple(dim_value(s, "size") for s in json_list(d["sizes"], "sizes")),  # type: ignore[misc]
        strides=tuple(dim_value(s, "stride") for s in json_list(d.get("strides", []), "strides")),  # type: ignore[misc]
        device=device_text(d.get("device") or {"type": "cpu"}),
        requires_grad=bool(d.get("requires_grad", False)),
        layout=LAYOUTS.get(d.get("layout", 7), "unknown"),
        storage_offset=dim_value(d["storage_offset"], "storage_offset") if d.get("storage_offset") else 0,  # type: ignore
    )


def tensor_meta_or_none(d: Any) -> TensorMeta | None:
    """Lazy parsing (see `Value.meta`): metadata that was checked for shape at read time but still cannot be
    understood shows as unknown rather than failing a view."""
    try:
        return tensor_meta(d)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecursionError):
        return None
