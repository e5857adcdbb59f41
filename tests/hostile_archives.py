"""Hostile `.pt2` archives for the tests, each made from one real exported archive by changing what an attacker would.

Every builder takes the real archive (`pt2_path("dynamic_shapes")`), a folder and a `Payload` (a marker file the
attack would create if its code ran, and a module name whose import would create it too) and writes one archive. The
attacks are the ones torch's loader falls for: pickles with a `__reduce__` (in a weight, a constant, an opaque object,
the sample inputs, a legacy-format weight file), a size expression that `sympy.sympify` would evaluate, modules the
file names (a custom-op namespace, a pytree type, an enum in a pytree context; `named_type` names any module), an
AOTInductor part; and broken files:
a flipped byte in the central directory, JSON nested 100,000 deep, NaN/Infinity or min > max in a symbol range, zip
bombs, a ZIP64 size no file holds, control characters in archive_format, member names that climb out of the archive or
are not UTF-8, the same member twice, too many members.
"""
from __future__ import annotations

import io
import json
import os
import struct
import warnings
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from tests.programs import member_named, read_members, with_model_json, write_members


@dataclass
class Payload:
    """What a hostile file tries to do: create `marker`, by shell or by importing `module` (found under `path`)."""

    marker: Path
    module: str
    path: Path  # a folder on the worker's import path holding `module`

    @classmethod
    def make(cls, folder: Path) -> Payload:
        marker = folder / "PWNED"
        module = f"pt2v_hostile_{os.getpid()}_{abs(hash(str(folder))) % 10**8}"
        path = folder / "modules"
        path.mkdir(parents=True, exist_ok=True)
        (path / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n", encoding="utf-8")
        return cls(marker, module, path)

    def shell(self) -> str:
        return f"touch {self.marker}"


class _Reduce:
    """Pickles as a call of os.system: what a hostile pickle in a .pt2 does when torch fully unpickles it."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (self.command,))


def evil_pickle(payload: Payload) -> bytes:
    return __import__("pickle").dumps(_Reduce(payload.shell()), protocol=2)


def evil_torch_save(obj_of: Callable[[object], object], payload: Payload) -> bytes:
    """`torch.save` of a structure holding the hostile object (the format torch writes for pickled weights)."""
    buffer = io.BytesIO()
    torch.save(obj_of(_Reduce(payload.shell())), buffer)
    return buffer.getvalue()


def _edit_config(src: Path, dst: Path, config: str, entry: dict[str, object], member: str, data: bytes) -> Path:
    members = read_members(src)
    name = member_named(members, config)
    doc = json.loads(members[name])
    doc["config"]["evil"] = entry
    members[name] = json.dumps(doc).encode()
    root = name.split("/")[0]
    members[f"{root}/{member}"] = data
    return write_members(dst, members)


@contextmanager
def _rewritten(src: Path, dst: Path, compression: int = zipfile.ZIP_STORED,
               replace: dict[str, bytes] | None = None) -> Iterator[tuple[zipfile.ZipFile, str]]:
    """A copy of `src` being written at `dst` (members in `replace` swapped): (the open zip, the root folder)."""
    members = read_members(src)
    with zipfile.ZipFile(dst, "w", compression) as zf:
        for n, d in members.items():
            zf.writestr(n, (replace or {}).get(n, d))
        yield zf, next(iter(members)).split("/")[0]


def _add(src: Path, dst: Path, extra: dict[str, bytes], replace: dict[str, bytes] | None = None) -> Path:
    members = read_members(src)
    root = next(iter(members)).split("/")[0]
    for suffix, data in (replace or {}).items():
        members[member_named(members, suffix)] = data
    for name, data in extra.items():
        members[f"{root}/{name}"] = data
    return write_members(dst, members)


# --- code it would run ----------------------------------------------------------------------------------------------
def pickled_weight(src: Path, dst: Path, p: Payload) -> Path:
    return _edit_config(src, dst, "data/weights/model_weights_config.json",
                        {"path_name": "weight_evil", "is_param": False, "use_pickle": True, "tensor_meta": None},
                        "data/weights/weight_evil", evil_torch_save(lambda e: e, p))


def pickled_constant(src: Path, dst: Path, p: Payload) -> Path:
    return _edit_config(src, dst, "data/constants/model_constants_config.json",
                        {"path_name": "tensor_constant_evil", "is_param": False, "use_pickle": True,
                         "tensor_meta": None}, "data/constants/tensor_constant_evil", evil_pickle(p))


def opaque_constant(src: Path, dst: Path, p: Payload) -> Path:
    return _edit_config(src, dst, "data/constants/model_constants_config.json",
                        {"path_name": "opaque_obj_evil", "is_param": False, "use_pickle": True, "tensor_meta": None},
                        "data/constants/opaque_obj_evil", evil_pickle(p))


def pickled_sample_inputs(src: Path, dst: Path, p: Payload) -> Path:
    return _add(src, dst, {}, {"data/sample_inputs/model.pt": evil_torch_save(lambda e: ((e,), {}), p)})


def legacy_weights(src: Path, dst: Path, p: Payload) -> Path:
    return _add(src, dst, {"data/weights/model.pt": evil_torch_save(lambda e: {"w": e}, p)})


def sympy_expression(src: Path, dst: Path, p: Payload) -> Path:
    def change(doc: dict) -> None:
        values = doc["graph_module"]["graph"]["sym_int_values"]
        first = next(iter(values))
        values[first]["as_expr"]["expr_str"] = f"__import__('os').system({p.shell()!r})"

    return with_model_json(src, dst, change)


def aoti_part(src: Path, dst: Path, p: Payload) -> Path:
    flags = {"compiler": "sh", "cflags": [f"-c '{p.shell()}'"], "ldflags": [f"; {p.shell()} ;"]}
    return _add(src, dst, {"data/aotinductor/model/model.so": b"\x7fELF" + os.urandom(64),
                           "data/aotinductor/model/model.wrapper.cpp": b"int main() { return 0; }\n",
                           "data/aotinductor/model/model_compile_flags.json": json.dumps(flags).encode(),
                           "data/aotinductor/model/model_metadata.json": b'{"AOTI_DEVICE_KEY": "cpu"}'})


def op_namespace(src: Path, dst: Path, p: Payload) -> Path:
    def change(doc: dict) -> None:
        node = next(n for n in doc["graph_module"]["graph"]["nodes"] if n["target"].startswith("torch.ops.aten."))
        node["target"] = f"torch.ops.{p.module}.evil.default"

    return with_model_json(src, dst, change)


HUGE_TARGET_CHARS = 50_000_000


def huge_target(src: Path, dst: Path, p: Payload) -> Path:
    """An op whose target string is 50 MB: every label, index entry or message that copied it whole made `render`
    use 3.4 GB (issue 30 §5). Not in ALL: the worker tests would each load 50 MB for no new finding."""
    def change(doc: dict) -> None:
        node = next(n for n in doc["graph_module"]["graph"]["nodes"] if n["target"].startswith("torch.ops.aten."))
        node["target"] = "torch.ops.pt2v_huge." + "x" * HUGE_TARGET_CHARS + ".default"

    return with_model_json(src, dst, change)


def _edit_in_spec(src: Path, dst: Path, edit: Callable[[list], None]) -> Path:
    def change(doc: dict) -> None:
        for sig in doc["graph_module"]["module_call_graph"]:
            if sig.get("signature"):
                spec = json.loads(sig["signature"]["in_spec"])
                edit(spec)
                sig["signature"]["in_spec"] = json.dumps(spec)
                return

    return with_model_json(src, dst, change)


def pytree_type(src: Path, dst: Path, p: Payload) -> Path:
    def edit(spec: list) -> None:
        spec[1]["type"] = f"{p.module}.Inputs"

    return _edit_in_spec(src, dst, edit)


def named_type(src: Path, dst: Path, type_name: str) -> Path:
    """The program's input spec names the pytree type `type_name`: torch would import its module to load it."""
    def edit(spec: list) -> None:
        spec[1]["type"] = type_name

    return _edit_in_spec(src, dst, edit)


def enum_context(src: Path, dst: Path, p: Payload) -> Path:
    def edit(spec: list) -> None:
        kwargs = spec[1]["children_spec"][1]
        kwargs["context"] = json.dumps([{"__enum__": True, "fqn": f"{p.module}:Key", "name": "A"}])

    return _edit_in_spec(src, dst, edit)


CODE = {"pickled_weight": pickled_weight, "pickled_constant": pickled_constant, "opaque_constant": opaque_constant,
        "pickled_sample_inputs": pickled_sample_inputs, "legacy_weights": legacy_weights,
        "sympy_expression": sympy_expression, "op_namespace": op_namespace, "pytree_type": pytree_type,
        "enum_context": enum_context}


# --- broken files -------------------------------------------------------------------------------------------------
def _central_directory(data: bytes) -> int:
    return struct.unpack("<I", data[data.rindex(b"PK\x05\x06") + 16:][:4])[0]


def flipped_name_byte(src: Path, dst: Path, p: Payload) -> Path:
    """A byte of the first name in the central directory turned into invalid UTF-8, with the UTF-8 flag set."""
    data = bytearray(src.read_bytes())
    cd = _central_directory(bytes(data))
    flags = struct.unpack("<H", data[cd + 8:cd + 10])[0]
    data[cd + 8:cd + 10] = struct.pack("<H", flags | 0x800)
    data[cd + 46 + 2] = 0xFF
    dst.write_bytes(bytes(data))
    return dst


def deep_json(src: Path, dst: Path, p: Payload) -> Path:
    return _add(src, dst, {}, {"models/model.json": b"[" * 100_000 + b"]" * 100_000})


def _range(src: Path, dst: Path, low: object, high: object) -> Path:
    def change(doc: dict) -> None:
        symbol = next(iter(doc["range_constraints"]))
        doc["range_constraints"][symbol] = {"min_val": low, "max_val": high}

    return with_model_json(src, dst, change)


def nan_range(src: Path, dst: Path, p: Payload) -> Path:
    return _range(src, dst, float("nan"), 8)


def infinite_range(src: Path, dst: Path, p: Payload) -> Path:
    return _range(src, dst, 2, float("inf"))


def inverted_range(src: Path, dst: Path, p: Payload) -> Path:
    return _range(src, dst, 100, 3)


def _patch_sizes(data: bytearray, name: bytes, size: int) -> None:
    """Say `size` bytes uncompressed for member `name`, in its local header and its central directory entry."""
    cd = _central_directory(bytes(data))
    pos = data.index(b"PK\x01\x02", cd)
    while pos >= 0:
        n = struct.unpack("<H", data[pos + 28:pos + 30])[0]
        if bytes(data[pos + 46:pos + 46 + n]) == name:
            data[pos + 24:pos + 28] = struct.pack("<I", size)
            local = struct.unpack("<I", data[pos + 42:pos + 46])[0]
            data[local + 22:local + 26] = struct.pack("<I", size)
            return
        pos = data.find(b"PK\x01\x02", pos + 46 + n)
    raise AssertionError(f"no member {name!r}")


def json_bomb(src: Path, dst: Path, p: Payload) -> Path:
    """models/model.json deflated, saying it inflates to 4 GB (the size a reader would allocate for)."""
    name = member_named(read_members(src), "models/model.json")
    with _rewritten(src, dst, zipfile.ZIP_DEFLATED):
        pass
    data = bytearray(dst.read_bytes())
    _patch_sizes(data, name.encode(), 0xF0000000)
    dst.write_bytes(bytes(data))
    return dst


def zip64_size(src: Path, dst: Path, p: Payload | None = None) -> Path:
    """models/model.json stored plainly, its sizes stated in a ZIP64 extra field as 2**62 bytes (the 32-bit fields say
    0xFFFFFFFF, as ZIP64 does): a reader that allocates what the archive states before checking it against the file
    fails with MemoryError."""
    members = read_members(src)
    name = member_named(members, "models/model.json").encode()
    data = write_members(dst, members).read_bytes()
    end = data.rindex(b"PK\x05\x06")
    length, start = struct.unpack_from("<2L", data, end + 12)  # the central directory's length and offset
    records, at = [], start
    while at < start + length:
        name_length, extra_length, comment_length = struct.unpack_from("<3H", data, at + 28)
        size = 46 + name_length + extra_length + comment_length
        record = bytearray(data[at:at + size])
        if record[46:46 + name_length] == name:
            extra = struct.pack("<2H2Q", 0x0001, 16, 2**62, 2**62)  # ZIP64: size, then compressed size
            record[20:28] = struct.pack("<2L", 0xFFFFFFFF, 0xFFFFFFFF)
            record[30:32] = struct.pack("<H", extra_length + len(extra))
            record[46 + name_length:46 + name_length] = extra
        records.append(bytes(record))
        at += size
    directory = b"".join(records)
    tail = bytearray(data[end:])
    tail[12:16] = struct.pack("<L", len(directory))
    dst.write_bytes(data[:start] + directory + bytes(tail))
    return dst


def weight_bomb(src: Path, dst: Path, p: Payload) -> Path:
    """A 100 MB member of zeros compressed to 100 KB: what a zip bomb looks like to torch's loader."""
    with _rewritten(src, dst) as (zf, root):
        zf.writestr(f"{root}/data/weights/weight_0", b"\0" * (100 << 20), compress_type=zipfile.ZIP_DEFLATED,
                    compresslevel=1)
    return dst


def binary_archive_format(src: Path, dst: Path, p: Payload) -> Path:
    return _add(src, dst, {}, {"archive_format": b"\x1b[2J\x1b[31mpt\x00\x07\xff2"})


def traversal_name(src: Path, dst: Path, p: Payload) -> Path:
    root = next(iter(read_members(src))).split("/")[0]
    return _add(src, dst, {"../../../tmp/pt2v-evil.txt": b"x"} if root else {})


def duplicate_member(src: Path, dst: Path, p: Payload) -> Path:
    """models/model.json twice: an innocent copy for a checker, a hostile one (sympy payload) for torch."""
    members = read_members(src)
    name = member_named(members, "models/model.json")
    hostile = sympy_expression(src, dst.with_suffix(".tmp.pt2"), p)
    evil = read_members(hostile)[name]
    hostile.unlink()
    with _rewritten(src, dst, replace={name: evil}) as (zf, root), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: that is the point
        zf.writestr(root + name[len(root):].upper(), members[name])
    return dst


def non_utf8_name(src: Path, dst: Path, p: Payload) -> Path:
    members = read_members(src)
    root = next(iter(members)).split("/")[0]
    placeholder = f"{root}/extra/AAAAAAAA"
    members[placeholder] = b"x"
    write_members(dst, members)
    data = dst.read_bytes().replace(b"extra/AAAAAAAA", b"extra/\xff\xfe\x1b[31m\x07")
    dst.write_bytes(data)
    return dst


def many_members(src: Path, dst: Path, p: Payload) -> Path:
    with _rewritten(src, dst) as (zf, root):
        for i in range(100_001):
            zf.writestr(zipfile.ZipInfo(f"{root}/extra/{i}"), b"")
    return dst


BROKEN = {"flipped_name_byte": flipped_name_byte, "deep_json": deep_json, "nan_range": nan_range,
          "infinite_range": infinite_range, "inverted_range": inverted_range, "json_bomb": json_bomb,
          "weight_bomb": weight_bomb, "zip64_size": zip64_size, "binary_archive_format": binary_archive_format,
          "traversal_name": traversal_name, "duplicate_member": duplicate_member, "non_utf8_name": non_utf8_name}
ALL: dict[str, Callable[[Path, Path, Payload], Path]] = {**CODE, "aoti_part": aoti_part, **BROKEN}


def build(name: str, src: Path, folder: Path, payload: Payload) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return ALL[name](src, folder / f"{name}.pt2", payload)
