"""The parsed-program cache is optional (core/pt2/parsed_cache.py): whatever fails in it is a miss, never a failed
open. A folder that cannot hold entries, an entry that cannot be read, a full disk, a bundle whose modules have no
source files, any step of its own that raises: the archive is read as `info` reads it, equal to the reader's. On the
bundled example (a real two-layer transformer export)."""
from __future__ import annotations

import errno
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.core.pt2 import parsed_cache
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    return Path(shutil.copyfile(EXAMPLE, tmp_path / "example.pt2"))


def _opened_twice(cache: ParsedProgramCache, path: Path) -> None:
    """Both opens give the reader's archive."""
    expected = read_archive(path)
    assert cache.read(path) == expected
    assert cache.read(path) == expected


def test_a_folder_that_cannot_hold_entries_is_a_miss(example: Path, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache's folder should be")
    cache = ParsedProgramCache(not_a_folder)
    _opened_twice(cache, example)
    assert (cache.hits, cache.misses) == (0, 2)


def test_an_entry_that_cannot_be_read_is_a_miss(example: Path, tmp_path: Path) -> None:
    cache = ParsedProgramCache(tmp_path / "cache")
    entry = cache.entry_path(example)
    entry.mkdir(parents=True)  # a folder where the entry should be: opening it fails
    _opened_twice(cache, example)
    assert cache.hits == 0


def test_a_full_disk_is_a_miss(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(path: object, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(parsed_cache, "write_atomically", disk_full)
    cache = ParsedProgramCache(tmp_path / "cache")
    _opened_twice(cache, example)
    assert cache.hits == 0 and not list((tmp_path / "cache").glob("*/*"))


def test_a_bundle_without_source_files_opens_and_reopens_from_the_cache(example: Path, tmp_path: Path) -> None:
    """In a frozen bundle a module's `__file__` names no `.py` file: the cache's key is its own format version, not
    the reader's source (hashing those files made every open fail with FileNotFoundError). In a fresh process, as a
    bundle starts, every module of core/ pointing where no file is."""
    script = ("import sys\n"
              "from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache\n"
              "for name, module in list(sys.modules.items()):\n"
              "    if name.startswith('pt2_viewer.core.') and getattr(module, '__file__', None):\n"
              "        module.__file__ = sys.argv[3]\n"
              "cache = ParsedProgramCache(sys.argv[2])\n"
              "print(cache.read(sys.argv[1]) == cache.read(sys.argv[1]), cache.misses, cache.hits)\n")
    done = subprocess.run([sys.executable, "-c", script, str(example), str(tmp_path / "cache"),
                           str(tmp_path / "bundle" / "no-such-file.pyc")], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "1", "1"]


@pytest.mark.parametrize("step", ["_listing", "_read_in_place", "_digest_of", "_encode"])
def test_a_step_of_a_first_open_that_fails_is_a_miss(step: str, example: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise MemoryError(f"the cache's {step} failed")

    monkeypatch.setattr(parsed_cache, step, broken)
    cache = ParsedProgramCache(tmp_path / "cache")
    _opened_twice(cache, example)
    # members not read in place are read through zipfile, and the entry is written all the same
    assert cache.hits == (1 if step == "_read_in_place" else 0)


@pytest.mark.parametrize("step", ["_digest_in_place", "_decode"])
def test_a_step_of_a_reopen_that_fails_is_a_miss(step: str, example: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ParsedProgramCache(tmp_path / "cache")
    cache.read(example)
    assert cache.entry_path(example).exists()

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError(f"the cache's {step} failed")

    monkeypatch.setattr(parsed_cache, step, broken)
    assert cache.read(example) == read_archive(example) and cache.hits == 0

