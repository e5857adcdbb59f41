"""Hostile `.onnx` files for the tests, the ONNX part of the hostile suite (tests/hostile_archives.py has the `.pt2`
part), each made from one real export (tests/onnx_programs.py) by changing what an attacker would:
- a weight whose external data `location` climbs out of the model's folder (`../`), is absolute, or goes through a
  link that points out: onnx's path-traversal CVE class (CVE-2024-27318 and its kin);
- a protobuf nested deeper than protobuf parses (If inside If inside If ...: a "bomb" for a recursive reader);
- the file cut in half (a truncated download), and a text file under a `.onnx` name.
And one friendly file: a weight kept in external data beside the model, its file missing: the viewer never reads it.
"""
from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx import TensorProto

WEIGHT = "conv1.weight"  # an initializer of the CNN (tests/onnx_programs.py CNN)


def _external(src: Path, dst: Path, location: str) -> Path:
    """`src` with WEIGHT's data said to be at `location` (its bytes dropped from the model)."""
    model = onnx.load(str(src))
    t = next(t for t in model.graph.initializer if t.name == WEIGHT)
    length = len(t.raw_data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(length))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(dst))
    return dst


def outside_folder(src: Path, dst: Path) -> Path:
    return _external(src, dst, "../outside.onnx.data")


def absolute_location(src: Path, dst: Path) -> Path:
    return _external(src, dst, "/etc/passwd")


def linked_out(src: Path, dst: Path) -> Path:
    """The location names a file beside the model that is a link to a file outside its folder."""
    outside = dst.parent.parent / "secret.bin"
    outside.write_bytes(b"secret" * 100)
    link = dst.parent / "weights.data"
    if not link.is_symlink():
        os.symlink(outside, link)
    return _external(src, dst, "weights.data")


def beside_missing(src: Path, dst: Path) -> Path:
    """A weight in external data beside the model, in a file that is not there (a model copied without its `.data`):
    the graph opens all the same, as nothing reads it."""
    return _external(src, dst, f"{dst.name}.data")


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: a varint for an int, else length-delimited bytes."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def nesting_bomb(src: Path, dst: Path, depth: int = 200) -> Path:
    """If nodes nested `depth` deep (three protobuf messages a level), far past protobuf's recursion limit (100).
    Written as protobuf's wire format by hand: protobuf itself refuses to build a message this deep."""
    graph = _field(1, _field(1, "x") + _field(2, "y") + _field(4, "Identity")) + _field(2, "leaf")
    for i in range(depth):  # GraphProto.node(1) -> NodeProto.attribute(5) -> AttributeProto.g(6)
        attribute = _field(1, "then_branch") + _field(6, graph) + _field(20, 5)  # type GRAPH
        node = _field(1, "c") + _field(2, "y") + _field(3, f"if_{i}") + _field(4, "If") + _field(5, attribute)
        graph = _field(1, node) + _field(2, f"level_{i}") + _field(12, _field(1, "y"))
    model = _field(1, 9) + _field(7, graph) + _field(8, _field(2, 20))  # ir_version, graph, opset_import
    dst.write_bytes(model)
    return dst


def truncated(src: Path, dst: Path) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])
    return dst


def text_file(src: Path, dst: Path) -> Path:
    dst.write_text("These are my notes about the model, not the model.\n" * 20, encoding="utf-8")
    return dst


HOSTILE = {  # name -> (builder, what the one line says)
    "outside folder": (outside_folder, "outside the model's folder"),
    "absolute location": (absolute_location, "outside the model's folder"),
    "linked out": (linked_out, "outside the model's folder"),
    "nesting bomb": (nesting_bomb, "is not a readable ONNX model"),
    "truncated": (truncated, "is not a readable ONNX model"),
    "text file": (text_file, "ONNX model"),
}
