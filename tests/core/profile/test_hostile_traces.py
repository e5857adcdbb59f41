"""A trace is JSON from anywhere: what is not a usable trace gets one line, from the reader and from the command
(exit status 1), and nothing is read past the limit. No shared hostile list covers traces (tests/hostile_archives.py
holds `.pt2` archives only), so the cases live here, each made from the zoo CNN's real trace or from nothing."""
from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.profile import trace_file
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.trace_file import read_trace
from tests.profile_programs import profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's programs and their profiles (tests/profile_programs.py)

DEPTH = 100_000


def _real() -> bytes:
    return (profile_of("resnet18") / "trace.json").read_bytes()


def truncated(folder: Path) -> Path:
    data = _real()
    path = folder / "truncated.json"
    path.write_bytes(data[: len(data) // 2])
    return path


def deep_nesting(folder: Path) -> Path:
    path = folder / "deep.json"
    path.write_bytes(b'{"traceEvents": [{"ph": "X", "name": "aten::add", "args": {"a": '
                     + b"[" * DEPTH + b"]" * DEPTH + b"}}]}")
    return path


def over_the_limit(folder: Path) -> Path:
    """A sparse file one byte over the limit: refused from its size, never read."""
    path = folder / "huge.json"
    with open(path, "wb") as f:
        f.truncate(trace_file.MAX_TRACE_BYTES + 1)
    return path


def wrong_shape(folder: Path) -> Path:
    path = folder / "shape.json"
    path.write_text('{"traceEvents": "rm -rf /"}', encoding="utf-8")
    return path


def not_json(folder: Path) -> Path:
    path = folder / "binary.json"
    path.write_bytes(bytes(range(256)) * 4)
    return path


def empty(folder: Path) -> Path:
    path = folder / "empty.json"
    path.write_bytes(b"")
    return path


def damaged_gzip(folder: Path) -> Path:
    data = gzip.compress(_real())
    path = folder / "damaged.json.gz"
    path.write_bytes(data[: len(data) // 3])
    return path


CASES: dict[str, Callable[[Path], Path]] = {
    "truncated": truncated, "deep_nesting": deep_nesting, "over_the_limit": over_the_limit,
    "wrong_shape": wrong_shape, "not_json": not_json, "empty": empty, "damaged_gzip": damaged_gzip,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_hostile_trace_is_one_line_from_the_reader_and_the_command(case: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = CASES[case](tmp_path)
    with pytest.raises(ProfileError) as raised:
        read_trace(path)
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
    code = cli_main(["profile", str(program_path("resnet18")), str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("pt2-viewer: ") and "Traceback" not in err


def test_the_size_refusal_says_the_limit(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="over the 2 GiB a trace may be"):
        read_trace(over_the_limit(tmp_path))


def test_a_gzip_that_unpacks_past_the_limit_is_refused_while_unpacking(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip bomb: small on disk, its content over the limit (lowered here so the test unpacks little)."""
    monkeypatch.setattr(trace_file, "MAX_TRACE_BYTES", 1 << 20)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b" " * (4 << 20)))
    assert os.path.getsize(path) < (1 << 20)
    with pytest.raises(ProfileError, match="unpacks to over"):
        read_trace(path)


def test_a_gzipped_trace_reads_as_the_plain_one(tmp_path: Path) -> None:
    path = tmp_path / "trace.json.gz"
    path.write_bytes(gzip.compress(_real()))
    assert read_trace(path).events == read_trace(profile_of("resnet18") / "trace.json").events
