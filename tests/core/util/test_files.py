"""write_atomically: the one atomic write. Readers see the old file or the new one, never half; a failed write leaves
the old file and no temp file; files get the user's umask, or the user's eyes only when private."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from pt2_viewer.core.util.files import write_atomically


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_text_bytes_and_a_writer_function(tmp_path: Path) -> None:
    assert write_atomically(tmp_path / "a.txt", "héllo\n").read_text(encoding="utf-8") == "héllo\n"
    assert write_atomically(tmp_path / "b.bin", b"\x00\xff").read_bytes() == b"\x00\xff"

    seen = []

    def write_zip(tmp: str) -> None:  # a writer that, like torch.export.save, needs the target's own name
        seen.append(Path(tmp).name)
        with zipfile.ZipFile(tmp, "w") as z:
            z.writestr("x", "y")

    target = write_atomically(tmp_path / "deep" / "er" / "model.pt2", write_zip)
    assert seen == ["model.pt2"]
    assert zipfile.ZipFile(target).read("x") == b"y"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "b.bin", "deep", "er", "model.pt2"]


def test_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    write_atomically(target, "new")
    assert target.read_text() == "new"


def test_permissions_follow_the_umask_unless_private(tmp_path: Path) -> None:
    expected = 0o666 & ~_umask()
    assert _mode(write_atomically(tmp_path / "text", "x")) == expected
    assert _mode(write_atomically(tmp_path / "copy", lambda tmp: Path(tmp).write_text("x"))) == expected
    assert _mode(write_atomically(tmp_path / "secret", "x", private=True)) == 0o600
    assert _mode(write_atomically(tmp_path / "secret2", lambda tmp: Path(tmp).write_text("x"), private=True)) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "model.pt2"
    target.write_text("old")

    def half_then_fail(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        write_atomically(target, half_then_fail)
    with pytest.raises(OSError, match="nothing was written"):
        write_atomically(target, lambda tmp: None)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt2"]


def test_a_missing_folder_is_an_error_when_asked(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "x.png", "x", parents=False)
    assert list(tmp_path.iterdir()) == []
