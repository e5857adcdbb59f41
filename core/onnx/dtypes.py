"""ONNX's element types and shapes in the viewer's spelling: torch's dtype names (`float32`), a dim as an int, its
symbolic name (`batch`, `s77`), or None where the file does not say. No `onnx` import: the enum values are ONNX's
`TensorProto.DataType`, fixed by the standard."""
from __future__ import annotations

from typing import Any

# TensorProto.DataType -> (torch's dtype name, bytes per element; 0: not a fixed size)
ELEMENT_TYPES: dict[int, tuple[str, float]] = {
    1: ("float32", 4), 2: ("uint8", 1), 3: ("int8", 1), 4: ("uint16", 2), 5: ("int16", 2), 6: ("int32", 4),
    7: ("int64", 8), 8: ("string", 0), 9: ("bool", 1), 10: ("float16", 2), 11: ("float64", 8), 12: ("uint32", 4),
    13: ("uint64", 8), 14: ("complex64", 8), 15: ("complex128", 16), 16: ("bfloat16", 2), 17: ("float8_e4m3fn", 1),
    18: ("float8_e4m3fnuz", 1), 19: ("float8_e5m2", 1), 20: ("float8_e5m2fnuz", 1), 21: ("uint4", 0.5),
    22: ("int4", 0.5), 23: ("float4_e2m1", 0.5), 24: ("float8_e8m0fnu", 1), 25: ("uint2", 0.25), 26: ("int2", 0.25),
}

Dim = int | str | None


def dtype_name(elem_type: int) -> str:
    entry = ELEMENT_TYPES.get(elem_type)
    return entry[0] if entry else f"onnx_type_{elem_type}"


def shape_of(shape_proto: Any) -> list[Dim]:
    """A `TensorShapeProto`'s dims: `dim_value`, `dim_param` by name, None for a dim the file leaves unknown."""
    out: list[Dim] = []
    for d in shape_proto.dim:
        which = d.WhichOneof("value")
        out.append(d.dim_value if which == "dim_value" else d.dim_param if which == "dim_param" else None)
    return out


def type_of(type_proto: Any) -> tuple[str, list[Dim] | None]:
    """(dtype, shape) of a `TypeProto`: a tensor's element type and shape (None: rank unknown); a sequence, map or
    optional as its kind with the element's type; ("unknown", None) when the file gives none."""
    which = type_proto.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        t = getattr(type_proto, which)
        return dtype_name(t.elem_type), shape_of(t.shape) if t.HasField("shape") else None
    if which == "sequence_type":
        inner, _ = type_of(type_proto.sequence_type.elem_type)
        return f"sequence<{inner}>", None
    if which == "optional_type":
        inner, shape = type_of(type_proto.optional_type.elem_type)
        return f"optional<{inner}>", shape
    if which == "map_type":
        inner, _ = type_of(type_proto.map_type.value_type)
        return f"map<{dtype_name(type_proto.map_type.key_type)}, {inner}>", None
    return "unknown", None


def tensor_nbytes(dims: list[int], elem_type: int) -> int:
    n = 1
    for d in dims:
        n *= max(d, 0)
    return int(n * ELEMENT_TYPES.get(elem_type, ("", 0))[1])
