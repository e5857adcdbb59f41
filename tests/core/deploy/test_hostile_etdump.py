"""An ETDump and debug buffer brought from a device are untrusted data (issue 41 §3): truncated, garbage, of the wrong
kind or too large, each is refused in one line naming the file and what to pass, never a traceback, and ExecuTorch's
ETDump reader (which runs `flatc`) never prints its usage to the terminal. Random damage loads or fails cleanly.

The recording is the small zoo model lowered to portable by the lower job, written by a separate ExecuTorch runtime
process (tests/etdump_recordings.py); each case damages a copy of it."""
from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.core.deploy.etdump_import import MAX_DEBUG_BUFFER_BYTES, MAX_ETDUMP_BYTES
from tests.deploy_programs import SMALL, Lowered, lowered_or_skip
from tests.etdump_recordings import Recording, record

pytest.importorskip("executorch", reason="executorch records and reads the ETDumps (requirements-dev.txt)")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lowered, Recording]:
    low = lowered_or_skip(SMALL, "portable")
    return low, record(low.pte, low.source, tmp_path_factory.mktemp("small"), runs=2, buffer_mb=1)


def _garbage(n: int) -> bytes:
    return random.Random(n).randbytes(n)


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.truncate(size)  # a sparse file: its size says what it claims, no disk is used


def _with_header(data: bytes) -> bytes:
    """Garbage that a quick look takes for an ETDump: its size prefix and identifier right, its tables not."""
    body = _garbage(len(data))
    return (len(data) - 4).to_bytes(4, "little") + body[4:8] + b"ED00" + body[12:]


ETDUMP_CASES: dict[str, tuple[Callable[[bytes, Path], None], str]] = {
    "truncated": (lambda d, p: p.write_bytes(d[: len(d) // 2]), "is damaged or truncated"),
    "garbage": (lambda d, p: p.write_bytes(_garbage(len(d))), "is not an ETDump"),
    "empty": (lambda d, p: p.write_bytes(b""), "is not an ETDump"),
    "garbage_tables": (lambda d, p: p.write_bytes(_with_header(d)), "its tables do not read"),
    "oversize": (lambda d, p: _sparse(p, MAX_ETDUMP_BYTES + 1), "more than the"),
    "directory": (lambda d, p: p.mkdir(), "is not a file"),
}
BUFFER_CASES: dict[str, tuple[Callable[[bytes, Path], None], str]] = {
    "truncated": (lambda d, p: p.write_bytes(d[:8]), "do not belong together"),
    "oversize": (lambda d, p: _sparse(p, MAX_DEBUG_BUFFER_BYTES + 1), "more than the"),
    "missing": (lambda d, p: None, "is not a file"),
}


def _run(low: Lowered, etdump: Path, debug: Path, out: Path) -> dict[str, Any]:
    from pt2_viewer.core.run.pte_job import run_job

    return run_job({"program": str(low.pte), "etdump": str(etdump), "debug_buffer": str(debug)}, out,
                   lambda _event: None)


def _assert_refused(result: dict[str, Any], words: str) -> None:
    assert result["ok"] is False, result
    error = result["error"]
    assert error["kind"] == "load" and words in error["message"], error
    assert "\n" not in error["message"] and "Traceback" not in error["message"]
    assert error["hint"].startswith("Pass the ETDump")


@pytest.mark.parametrize("case", sorted(ETDUMP_CASES))
def test_a_damaged_etdump_is_refused_in_one_line(small: tuple[Lowered, Recording], tmp_path: Path, case: str) -> None:
    low, rec = small
    damage, words = ETDUMP_CASES[case]
    bad = tmp_path / "bad.etdp"
    damage(rec.etdump.read_bytes(), bad)
    _assert_refused(_run(low, bad, rec.debug_buffer, tmp_path / "out"), words)


@pytest.mark.parametrize("case", sorted(BUFFER_CASES))
def test_a_damaged_debug_buffer_is_refused_in_one_line(small: tuple[Lowered, Recording], tmp_path: Path,
                                                       case: str) -> None:
    low, rec = small
    damage, words = BUFFER_CASES[case]
    bad = tmp_path / "bad.bin"
    damage(rec.debug_buffer.read_bytes(), bad)
    _assert_refused(_run(low, rec.etdump, bad, tmp_path / "out"), words)


def test_the_real_recording_reads(small: tuple[Lowered, Recording], tmp_path: Path) -> None:
    low, rec = small
    result = _run(low, rec.etdump, rec.debug_buffer, tmp_path)
    assert result["ok"], result.get("error")
    assert all(s["count"] == rec.runs for s in result["node_time_stats"].values())


@pytest.mark.worker  # the command line starts the run job's worker
@pytest.mark.parametrize("case", ["truncated", "garbage_tables"])
def test_the_command_line_says_one_line_and_no_flatc_usage(small: tuple[Lowered, Recording], tmp_path: Path,
                                                            case: str) -> None:
    from tests.core.jobs.test_hostile import cli_streams

    low, rec = small
    bad = tmp_path / "bad.etdp"
    ETDUMP_CASES[case][0](rec.etdump.read_bytes(), bad)
    rc, out, err = cli_streams("run", str(low.pte), "--etdump", str(bad), "--debug-buffer", str(rec.debug_buffer))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert rc == 1 and len(errors) == 1 and "bad.etdp" in errors[0], err
    assert "Traceback" not in out + err and "Usage:" not in out + err and "--size-prefixed" not in out + err


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(min_value=12), st.integers(1, 255)), min_size=1, max_size=6))
def test_random_damage_reads_or_fails_cleanly(small: tuple[Lowered, Recording],
                                              tmp_path_factory: pytest.TempPathFactory,
                                              flips: list[tuple[int, int]]) -> None:
    low, rec = small
    data = bytearray(rec.etdump.read_bytes())
    for at, mask in flips:
        data[at % len(data)] ^= mask
    folder = tmp_path_factory.mktemp("fuzz")
    bad = folder / "bad.etdp"
    bad.write_bytes(bytes(data))
    result = _run(low, bad, rec.debug_buffer, folder / "out")
    if not result["ok"]:
        assert result["error"]["kind"] in ("load", "mismatch", "run"), result["error"]
        assert "\n" not in result["error"]["message"]
    shutil.rmtree(folder)
