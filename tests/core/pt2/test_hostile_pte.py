"""A `.pte` is untrusted input too: truncated, bad offsets, huge counts, shared tables that multiply the work, a
newer schema, random damage. Reading must end quickly with a working archive or an `ArchiveError` whose message says
what is wrong; never a traceback, never a hang.

The files mutated are the zoo pipeline's small model as `.pte` (portable and XNNPACK), a few kilobytes each, and
programs written here with the `flatbuffers` builder to be as hostile as the format allows.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import flatbuffers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.core.formats.registry import read
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info, summary_text
from tests.programs import ExportFailed

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=200,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def small() -> dict[str, bytes]:
    pytest.importorskip("executorch", reason="executorch builds the .pte test files (requirements-dev.txt)")
    from tests.zoo.pipeline import small_pte

    try:
        return {kind: small_pte(kind).read_bytes() for kind in ("portable", "xnnpack")}
    except ExportFailed as e:
        pytest.skip(str(e))


def read_or_error(path: Path) -> str:
    """'ok' or 'error': the property every case holds."""
    try:
        archive = read(path)
    except ArchiveError as e:
        assert str(e).strip() and "Traceback" not in str(e)
        return "error"
    json.dumps(archive_info(archive))
    summary_text(archive)
    return "ok"


def _write(tmp_path: Path, data: bytes, name: str = "m.pte") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_the_real_files_read(small: dict[str, bytes], tmp_path: Path) -> None:
    for kind, data in small.items():
        assert read_or_error(_write(tmp_path, data, f"{kind}.pte")) == "ok"


def test_truncated_anywhere(small: dict[str, bytes], tmp_path: Path) -> None:
    """Cut short inside the header, the flatbuffer or the segments: an error naming the truncation, or (segments
    cut) the graph with a warning that the file will not run."""
    data = small["xnnpack"]
    for cut in sorted({4, 8, 12, 20, 31, 40, *range(64, len(data), max(len(data) // 60, 1))}):
        path = _write(tmp_path, data[:cut])
        outcome = read_or_error(path)
        if outcome == "ok":
            assert any("truncated" in w for w in read(path).warnings), cut


def test_every_offset_and_count_made_huge_or_negative(small: dict[str, bytes], tmp_path: Path) -> None:
    """Every 4-byte word of the flatbuffer's head replaced by a huge count, a negative offset, or zero."""
    data = small["portable"]
    outcomes = set()
    for pos in range(0, min(len(data), 1600), 4):
        for word in (0x7FFFFFF0, 0xFFFFFFFF, 0x80000000, 0):
            mutated = bytearray(data)
            mutated[pos:pos + 4] = struct.pack("<I", word)
            outcomes.add(read_or_error(_write(tmp_path, bytes(mutated))))
    assert outcomes == {"ok", "error"}


def _repeated(b: flatbuffers.Builder, table: int, count: int) -> int:
    """A vector holding `count` times the same table."""
    b.StartVector(4, count, 4)
    for _ in range(count):
        b.PrependUOffsetTRelative(table)
    return int(b.EndVector())


def _shared_plans(plans: int, values: int) -> bytes:
    """A program of `plans` execution plans that are all ONE table, whose values are all ONE table: tiny on disk,
    plans x values entries to walk."""
    b = flatbuffers.Builder(1024)
    b.StartObject(1)
    b.PrependInt64Slot(0, 7, 0)
    number = b.EndObject()
    b.StartObject(2)
    b.PrependUint8Slot(0, 2, 0)
    b.PrependUOffsetTRelativeSlot(1, number, 0)
    value = b.EndObject()
    table = _repeated(b, value, values)
    name = b.CreateString("forward")
    b.StartObject(10)
    b.PrependUOffsetTRelativeSlot(0, name, 0)
    b.PrependUOffsetTRelativeSlot(2, table, 0)
    plan = b.EndObject()
    every = _repeated(b, plan, plans)
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(1, every, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"ET12")
    return bytes(b.Output())


def test_shared_tables_cannot_multiply_the_work(tmp_path: Path) -> None:
    assert read_or_error(_write(tmp_path, _shared_plans(2, 10))) == "ok"  # the builder makes readable programs
    with pytest.raises(ArchiveError, match="more entries than a file"):
        read(_write(tmp_path, _shared_plans(3000, 5000)))


def test_one_long_list_named_by_many_arguments_cannot_multiply_the_work(small: dict[str, bytes], tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each list is charged once when read, but mapping walks a list once per argument that names it: a method whose
    100k arguments all name one 100k-item list (a few hundred KB on disk) would be 10^10 entries to walk."""
    from pt2_viewer.core.pte import reader
    from pt2_viewer.core.pte.schema import PteInstruction, PteValue

    real = reader.read_program

    def hostile(*args, **kwargs):  # type: ignore[no-untyped-def]
        pte = real(*args, **kwargs)
        plan = pte.plans[0]
        plan.values.append(PteValue("tensor_list", [0] * 100_000))
        plan.instructions.append(PteInstruction("kernel", 0, (len(plan.values) - 1,) * 100_000))
        return pte

    path = _write(tmp_path, small["portable"])
    assert read_or_error(path) == "ok"
    monkeypatch.setattr(reader, "read_program", hostile)
    with pytest.raises(ArchiveError, match="damaged: its instructions name its lists"):
        read(path)


def test_a_delegate_payload_past_any_file_lists_no_ops(tmp_path: Path) -> None:
    """A payload offset from the file (64 bits) past what a seek can reach: that delegate lists nothing, the rest of
    the file still reads."""
    from pt2_viewer.core.pte.xnnpack import xnnpack_ops

    path = _write(tmp_path, b"\0" * 64, "payload.bin")
    with path.open("rb") as f:
        assert xnnpack_ops(f, 1 << 63, 16) == ()
        assert xnnpack_ops(f, 8, 16) == ()


def test_a_newer_schema_is_named(small: dict[str, bytes], tmp_path: Path) -> None:
    data = bytearray(small["portable"])
    data[4:8] = b"ET13"
    with pytest.raises(ArchiveError, match="newer than the one this viewer reads"):
        read(_write(tmp_path, bytes(data)))
    newer = _shared_plans(1, 1)
    b = flatbuffers.Builder(64)
    b.StartObject(8)
    b.PrependUint32Slot(0, 3, 0)
    b.Finish(b.EndObject(), file_identifier=b"ET12")
    archive = read(_write(tmp_path, bytes(b.Output()), "v3.pte"))
    assert any("schema version 3" in w for w in archive.warnings) and newer


def test_not_a_pte_by_name_alone(tmp_path: Path) -> None:
    """A `.pte` name on something else is read as what it is (here: not a zip, not ET12)."""
    with pytest.raises(ArchiveError):
        read(_write(tmp_path, b"hello world, not a program at all"))


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, 1 << 20)), kind=st.sampled_from(["portable", "xnnpack"]))
def test_random_damage(small: dict[str, bytes], tmp_path: Path, edits: list[tuple[int, int]], cut: int | None,
                       kind: str) -> None:
    data = bytearray(small[kind])
    for pos, byte in edits:
        data[pos % len(data)] = byte
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    read_or_error(_write(tmp_path, bytes(data)))
