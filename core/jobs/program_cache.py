"""Inside a warm worker (`python -m pt2_viewer.core.worker serve`): keep a loaded program for the next job.

`torch.export.load` is most of a job's time on a big program (16 s at 10k nodes), and every job on an open program
loads the same file. `ProgramCache.load_program` has the signature of `core/jobs/loading.load_program` and is put in
its place, in `loading` and in each job module that imported it, so every job (decompose, run, any later one) gets it
without knowing. What it keeps, and why reuse is safe:

- the archive check is never skipped: `check_archive` runs on the first load (once: `load_program` is handed its
  findings, and uses them only if the file it opens is still the one checked) and they are kept with the file's
  identity (device, inode, size, modification and change times); every job, hit or miss, passes `require_trust` with
  its own `trust` and `allow_imports`, so a file refused without trust stays refused whatever an earlier job was
  allowed;
- a changed file (any of its identity) or another import-first file is a miss: loaded again;
- each job gets its own copy of the program's graph (`copy.deepcopy`, ~0.1 s per 1,000 nodes), with the weight
  tensors shared, not copied; after the job the shared tensors are compared with what they were (object, version
  counter, device, dtype, shape), and a job that changed them (a buffer mutated by running the program, a move to
  CUDA) drops the entry, so the next job loads the file again rather than see changed weights.

Every load emits `{"type": "program_loaded", "program", "program_name", "reused", "seconds"}` on the job's events, so
the client (and the tests) can see whether a job loaded the file. Imports torch only when a program is loaded.
"""
from __future__ import annotations

import copy
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs import loading
from pt2_viewer.core.jobs.archive_check import ArchiveCheck, check_archive, require_trust

PROGRAM_LOADED = "program_loaded"
MAX_ENTRIES = 2  # programs kept per worker (an archive may hold several); least recently used goes first

Emit = Callable[[dict[str, Any]], None]


def file_identity(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _tensors(loaded: loading.LoadedProgram) -> list[Any]:
    ep = loaded.ep
    found = [v for v in (*ep.state_dict.values(), *ep.constants.values()) if hasattr(v, "_version")]
    if loaded.sample_inputs is not None:
        import torch.utils._pytree as pytree

        found += [v for v in pytree.tree_leaves(loaded.sample_inputs) if hasattr(v, "_version")]
    return found


def _fingerprint(tensors: list[Any]) -> list[tuple[Any, ...]]:
    return [(id(t), t._version, str(t.device), str(t.dtype), tuple(t.shape)) for t in tensors]


@dataclass
class _Entry:
    loaded: loading.LoadedProgram
    tensors: list[Any]
    fingerprint: list[tuple[Any, ...]]
    dicts: tuple[dict[str, Any], dict[str, Any]]  # the program's own state_dict and constants, as loaded


class ProgramCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self.emit: Emit | None = None  # the running job's events
        self._scans: dict[tuple[str, tuple[int, ...] | None], ArchiveCheck] = {}
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self.loads = 0  # real loads, for tests and the bench
        self.reuses = 0

    # -- the loader every job calls --------------------------------------------------------------------------------
    def load_program(self, path: str | Path, program: str | None = None, preload: str | Path | None = None,
                     trusted: bool = False, allow_imports: Iterable[str] = (), allow_native: bool = False
                     ) -> loading.LoadedProgram:
        t = time.perf_counter()
        path = Path(path)
        allowed = list(allow_imports)
        identity = file_identity(path)
        scan = self._scan(path, identity)
        require_trust(scan, trusted, allowed)  # every job, hit or miss
        model = loading.pick_model(scan, path, program)
        preload_path = Path(preload).resolve() if preload else None
        key = (str(path.resolve()), identity, model, str(preload_path),
               file_identity(preload_path) if preload_path else None)
        entry = self._entries.get(key)
        if entry is not None and identity is not None:
            self._entries.move_to_end(key)
            self.reuses += 1
            job_copy = self._copy(entry)
            self._emit(path, model, reused=True, seconds=time.perf_counter() - t)
            return job_copy
        loaded = _ORIGINAL(path, program, preload, trusted, allowed, allow_native, check=scan)
        self.loads += 1
        if identity is not None and identity == file_identity(path):
            self._keep(key, loaded)
            result = self._copy(self._entries[key])
        else:  # the file changed while it loaded: use it once, keep nothing
            result = loaded
        self._emit(path, model, reused=False, seconds=time.perf_counter() - t)
        return result

    def after_job(self) -> None:
        """Drop every entry whose shared tensors the job changed (mutated, moved, replaced)."""
        for key, entry in list(self._entries.items()):
            ep = entry.loaded.ep
            changed = (_fingerprint(entry.tensors) != entry.fingerprint
                       or ep.state_dict is not entry.dicts[0] or ep.constants is not entry.dicts[1])
            if changed:
                del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()
        self._scans.clear()

    def __len__(self) -> int:
        return len(self._entries)

    # -- internals -------------------------------------------------------------------------------------------------
    def _scan(self, path: Path, identity: tuple[int, ...] | None) -> ArchiveCheck:
        key = (str(path.resolve()) if identity else str(path), identity)
        scan = self._scans.get(key) if identity is not None else None
        if scan is None:
            with loading.pinned(path) as pin:  # raises JobFailure for a missing or broken file, as before
                scan = check_archive(path, pin.reader, pin.identity)
            identity = scan.identity
            key = (key[0], identity)
            if identity is not None:
                self._scans = {k: v for k, v in self._scans.items() if k[0] != key[0]}  # older versions of the file
                self._scans[key] = scan
        return scan

    def _keep(self, key: tuple[Any, ...], loaded: loading.LoadedProgram) -> None:
        tensors = _tensors(loaded)
        self._entries[key] = _Entry(loaded, tensors, _fingerprint(tensors),
                                    (loaded.ep.state_dict, loaded.ep.constants))
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    @staticmethod
    def _copy(entry: _Entry) -> loading.LoadedProgram:
        """The job's own program: graph, signature and metadata copied; tensors (weights, inputs) shared."""
        memo: dict[int, Any] = {id(t): t for t in entry.tensors}
        loaded = entry.loaded
        ep = copy.deepcopy(loaded.ep, memo)
        return replace(loaded, ep=ep, sample_inputs=loading.read_sample_inputs(ep, []),
                       imported=list(loaded.imported),
                       log=[*loaded.log, "reused the program this worker loaded for an earlier job"])

    def _emit(self, path: Path, model: str, reused: bool, seconds: float) -> None:
        if self.emit is not None:
            self.emit({"type": PROGRAM_LOADED, "program": str(path), "program_name": model, "reused": reused,
                       "seconds": round(seconds, 4)})


_ORIGINAL = loading.load_program


def install(cache: ProgramCache, *modules: Any) -> None:
    """Put `cache.load_program` in place of `loading.load_program`, there and in each module that imported it."""
    for module in (loading, *modules):
        if getattr(module, "load_program", None) is _ORIGINAL:
            module.load_program = cache.load_program
