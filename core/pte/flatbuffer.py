"""Bounds-checked access to flatbuffer tables, over the `flatbuffers` runtime's `Table`.

The runtime trusts its input: an offset past the end raises `struct.error`, a negative one silently reads from the
end (Python's `unpack_from`), and a vector length of four billion makes a loop that never ends. A `.pte` is
untrusted input, so every position is checked before the runtime reads it, every vector length against the bytes
left, and every element read is charged to a budget proportional to the file's size: tables that share one big
vector (a hostile file can point a thousand plans at the same list) cannot multiply the work.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TypeVar

from flatbuffers.table import Table

from pt2_viewer.core.pte.errors import PteError

T = TypeVar("T")

_SCALARS = {  # struct format and width of the scalar types program.fbs uses
    "bool": ("<?", 1), "byte": ("<b", 1), "ubyte": ("<B", 1), "short": ("<h", 2), "ushort": ("<H", 2),
    "int": ("<i", 4), "uint": ("<I", 4), "long": ("<q", 8), "ulong": ("<Q", 8), "double": ("<d", 8),
}


class Buffer:
    """The flatbuffer bytes and a work budget. `damaged(what)` is the error every failed check raises."""

    def __init__(self, data: bytes, name: str, budget: int | None = None) -> None:
        self.data = data
        self.size = len(data)
        self.name = name
        # Elements read in all: a well-formed file visits each of its bytes a few times at most.
        self.budget = budget if budget is not None else 4 * self.size + 100_000

    def damaged(self, what: str) -> PteError:
        return PteError(f"'{self.name}' is not a readable ExecuTorch program: {what}. The file is damaged or "
                        "truncated; lower the model again (to_executorch().write_to_file) or copy it again.")

    def check(self, pos: int, width: int, what: str) -> None:
        if pos < 0 or pos + width > self.size:
            raise self.damaged(f"{what} points outside the file (byte {pos:,} of {self.size:,})")

    def spend(self, count: int, what: str) -> None:
        self.budget -= count
        if self.budget < 0:
            raise self.damaged(f"{what} holds more entries than a file of {self.size:,} bytes can")

    def u32(self, pos: int, what: str) -> int:
        self.check(pos, 4, what)
        return int(struct.unpack_from("<I", self.data, pos)[0])

    def root(self) -> FbTable:
        return FbTable(self, self.u32(0, "the root table offset"), "the program")


class FbTable:
    """One table: fields by slot number (declaration order in the .fbs, a union taking two), each read checked."""

    def __init__(self, buf: Buffer, pos: int, what: str) -> None:
        buf.check(pos, 4, what)
        vtable = pos - struct.unpack_from("<i", buf.data, pos)[0]
        buf.check(vtable, 4, f"the field table of {what}")
        vt_len, obj_len = struct.unpack_from("<HH", buf.data, vtable)
        if vt_len < 4 or vt_len % 2:
            raise buf.damaged(f"the field table of {what} has an impossible length ({vt_len})")
        buf.check(vtable, vt_len, f"the field table of {what}")
        buf.check(pos, max(obj_len, 4), what)
        self.buf, self.what, self.obj_len = buf, what, obj_len
        self.t = Table(buf.data, pos)

    def _field(self, slot: int) -> int:
        """The field's offset from the table's start, 0 when absent (the runtime's Offset, its reads checked above)."""
        off = int(self.t.Offset(4 + 2 * slot))
        if off and off >= self.obj_len:
            raise self.buf.damaged(f"a field of {self.what} lies outside it")
        return off

    def has(self, slot: int) -> bool:
        return self._field(slot) != 0

    def scalar(self, slot: int, kind: str, default: int | float | bool = 0) -> int | float | bool:
        off = self._field(slot)
        if not off:
            return default
        fmt, width = _SCALARS[kind]
        self.buf.check(self.t.Pos + off, width, f"a field of {self.what}")
        value: int | float | bool = struct.unpack_from(fmt, self.buf.data, self.t.Pos + off)[0]
        return value

    def _indirect(self, slot: int, what: str) -> int | None:
        off = self._field(slot)
        if not off:
            return None
        self.buf.check(self.t.Pos + off, 4, what)
        return int(self.t.Indirect(self.t.Pos + off))

    def table(self, slot: int, what: str) -> FbTable | None:
        pos = self._indirect(slot, what)
        return None if pos is None else FbTable(self.buf, pos, what)

    def string(self, slot: int, what: str, limit: int = 1 << 20) -> str:
        pos = self._indirect(slot, what)
        if pos is None:
            return ""
        n = self.buf.u32(pos, what)
        if n > limit:
            raise self.buf.damaged(f"{what} is {n:,} bytes long, more than the {limit:,} this viewer reads")
        self.buf.check(pos + 4, n, what)
        self.buf.spend(n // 16, what)
        return bytes(self.buf.data[pos + 4:pos + 4 + n]).decode("utf-8", errors="replace")

    def _vector(self, slot: int, width: int, what: str) -> tuple[int, int]:
        """(start of the elements, count), both checked; (0, 0) when the field is absent."""
        pos = self._indirect(slot, what)
        if pos is None:
            return 0, 0
        n = self.buf.u32(pos, f"the length of {what}")
        if n * width > self.buf.size - pos - 4:
            raise self.buf.damaged(f"{what} claims {n:,} entries, more than the file holds")
        return pos + 4, n

    def vector_len(self, slot: int, width: int, what: str) -> int:
        """The length of a vector whose elements are not read (a payload's bytes)."""
        return self._vector(slot, width, what)[1]

    def scalars(self, slot: int, kind: str, what: str) -> list[int | float | bool]:
        fmt, width = _SCALARS[kind]
        start, n = self._vector(slot, width, what)
        self.buf.spend(n, what)
        return list(struct.unpack_from(f"<{n}{fmt[1]}", self.buf.data, start)) if n else []

    def tables(self, slot: int, what: str) -> list[FbTable]:
        return self.each(slot, what, lambda t: t)

    def each(self, slot: int, what: str, read: Callable[[FbTable], T]) -> list[T]:
        """Read every table of a vector of tables with `read`."""
        start, n = self._vector(slot, 4, what)
        self.buf.spend(n, what)
        out = []
        for i in range(n):
            at = start + 4 * i
            out.append(read(FbTable(self.buf, at + self.buf.u32(at, what), f"{what}[{i}]")))
        return out

    def union(self, type_slot: int, value_slot: int, what: str) -> tuple[int, FbTable | None]:
        kind = int(self.scalar(type_slot, "ubyte"))
        return kind, (self.table(value_slot, what) if kind else None)


__all__ = ["Buffer", "FbTable"]
