"""Export each zoo entry once, as training IR and after `run_decompositions()`, cached on disk.

`.cache/zoo/<torch version>/<hash of the entry's source>/NAME.pt2` and `NAME.decomposed.pt2`. The hash covers the
module the entry's builder lives in and this file (how every entry is exported), so editing one family re-exports
only that family. An export torch refuses is cached as `NAME.failed.txt` (or `NAME.decomposed.failed.txt` when only
the decomposition fails) holding torch's reason, and raised as `ExportFailed`. An export running past
`EXPORT_CAP_S` is stopped and reported but not cached: a busy machine should not fail a model for good.

Saving, failure reasons and atomic writes are tests/programs.py's, shared with the other test programs.
"""
from __future__ import annotations

import gc
import hashlib
import inspect
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

from tests.fixture_root import SHARED_FIXTURE_ROOT
from tests.programs import ExportFailed, _failure_reason, _write_text_atomic, save_programs
from tests.zoo.entry import ZooEntry
from tests.zoo.registry import ENTRIES

ZOO_ROOT = SHARED_FIXTURE_ROOT / "zoo"  # no test reads a path back from a zoo program: kept per user
EXPORT_CAP_S = 300  # export and decomposition of one entry together
SEED = 0
VARIANTS = ("", ".decomposed")  # training IR, then after run_decompositions() (core ATen)


@dataclass(frozen=True)
class ZooProgram:
    """One row of the zoo table: an entry, as training IR or decomposed."""

    entry: ZooEntry
    decomposed: bool

    @property
    def id(self) -> str:
        return self.entry.name + (".decomposed" if self.decomposed else "")


def programs_of(entries: list[ZooEntry]) -> list[ZooProgram]:
    return [ZooProgram(e, d) for e in entries for d in (False, True)]


def program_by_id(program_id: str) -> ZooProgram:
    name, _, variant = program_id.partition(".")
    return ZooProgram(ENTRIES[name], variant == "decomposed")


def entry_dir(entry: ZooEntry) -> Path:
    digest = hashlib.sha256()
    for source in (inspect.getsourcefile(entry.build), __file__):
        digest.update(Path(str(source)).read_bytes())
    return ZOO_ROOT / torch.__version__ / digest.hexdigest()[:12]


class ExportTimeout(Exception):
    pass


@contextmanager
def time_cap(seconds: int) -> Iterator[None]:
    """Raise ExportTimeout in the main thread after `seconds` (export is Python, so the signal lands promptly)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise ExportTimeout(f"export did not finish within {seconds} s (the zoo's cap per model)")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _fail(directory: Path, stem: str, name: str, error: BaseException) -> ExportFailed:
    reason = _failure_reason(error)
    _write_text_atomic(directory / f"{stem}.failed.txt", reason)
    _write_text_atomic(directory / f"{stem}.failed.traceback.txt", traceback.format_exc())
    return ExportFailed(name, reason)


def build(entry: ZooEntry) -> float:
    """Export `entry` and its decomposition into the cache (failures cached too); the seconds it took."""
    directory = entry_dir(entry)
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        with time_cap(EXPORT_CAP_S):
            torch.manual_seed(SEED)
            recipe = entry.build()
            try:
                ep = torch.export.export(recipe.model, recipe.args, recipe.kwargs,
                                         dynamic_shapes=recipe.dynamic_shapes, strict=recipe.strict)
                save_programs({"model": ep}, directory / f"{entry.name}.pt2")
            except ExportTimeout:
                raise
            except Exception as error:  # torch's export errors have no common base class
                _fail(directory, entry.name, entry.name, error)
                return time.perf_counter() - start
            try:
                save_programs({"model": ep.run_decompositions()}, directory / f"{entry.name}.decomposed.pt2")
            except ExportTimeout:
                raise
            except Exception as error:
                _fail(directory, f"{entry.name}.decomposed", f"{entry.name}.decomposed", error)
    except ExportTimeout as error:
        raise ExportFailed(entry.name, str(error)) from None
    finally:
        gc.collect()
    return time.perf_counter() - start


def zoo_path(program: ZooProgram) -> Path:
    """The cached archive of `program`, exporting its entry first if needed; `ExportFailed` with torch's reason."""
    directory = entry_dir(program.entry)
    stems = dict.fromkeys([program.entry.name, program.id])  # the export's failure is also the decomposition's
    known = [directory / f"{program.id}.pt2"] + [directory / f"{stem}.failed.txt" for stem in stems]
    if not any(p.exists() for p in known):
        build(program.entry)
    for stem in stems:
        failed = directory / f"{stem}.failed.txt"
        if failed.exists():
            raise ExportFailed(program.id, failed.read_text(encoding="utf-8"))
    return directory / f"{program.id}.pt2"
