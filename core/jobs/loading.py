"""Load a `.pt2` program inside a worker job, safely, and say exactly what is missing when it does not load.

A `.pt2` may come from anyone, and torch's loader trusts it (it unpickles, evaluates sizes as Python, imports modules
the file names). So `core/jobs/archive_check.py` reads the archive first, without torch, and refuses what would run
code unless the user trusts the file. `torch.export.load` also needs every custom operator and pytree type the program
names to be registered first, and when one is missing it logs a long traceback and raises a generic error: so we import
the user's "import first" file, and the modules the program names that the import policy allows
(`core/jobs/import_policy.py`: installed allowed libraries always, others only as the user allowed them), and check
that each op resolves. Only then is torch's loader called, for the programs alone (never an AOTInductor part's native
code), with unpickling forced to weights-only unless the user trusts the file, and its loggers captured so their lines
end up in the failure's detail rather than on the terminal. Sample inputs come from torch's own loader (weights-only).

The file is opened once (`pinned`): the check and torch's loader both read that open file, so a file replaced on disk
between the two is not loaded, and one changed in place is refused.

Three kinds of trust, each its own request field: `trust` (everything: full unpickling too), `allow_imports` (modules
the user agreed to import, with their submodules) and `allow_native` (an AOTInductor part's compiled code; no job
loads one yet, `require_native` is the gate for the one that will).
"""
from __future__ import annotations

import importlib.util
import logging
import os
import pickle
import sys
import warnings
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pt2_viewer.core.jobs import import_policy
from pt2_viewer.core.jobs.archive_check import (
    ENUM_REASON,
    FACTORY_REASON,
    MAX_PICKLE_BYTES,
    TRUST_HINT,
    ArchiveCheck,
    check_archive,
    require_trust,
    weights_only_problem,
)
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.op_lookup import resolve_op
from pt2_viewer.core.pt2.archive import open_archive
from pt2_viewer.core.pt2.errors import ArchiveError

LOGGERS = ("torch.export", "torch._export")


@dataclass
class LoadedProgram:
    ep: Any  # torch.export.ExportedProgram
    name: str  # the program's name inside the archive
    path: Path
    sample_inputs: tuple[tuple[Any, ...], dict[str, Any]] | None  # (args, kwargs) saved in the archive
    imported: list[str] = field(default_factory=list)  # modules imported so the program would load
    log: list[str] = field(default_factory=list)  # lines torch logged or warned while loading
    # per module of the program's own (not the import-first file): module, distribution, version, reason, status
    import_details: list[dict[str, str | None]] = field(default_factory=list)


class Trusting(Protocol):
    """A typed request's three kinds of trust (core/jobs/schemas/)."""

    trust: bool
    allow_imports: list[str]
    allow_native: bool


def trust_options(request: Trusting) -> dict[str, Any]:
    """A job request's three kinds of trust, as `load_program`'s keyword arguments (`--trust` allows native code
    too)."""
    return {"trusted": request.trust, "allow_imports": list(request.allow_imports),
            "allow_native": request.allow_native or request.trust}


def require_native(scan: ArchiveCheck, allow_native: bool) -> None:
    """Refuse to load an AOTInductor part's compiled code (a shared library: it runs as soon as it is loaded) unless
    the user allowed native code (`--allow-native`, the window's own question, or `--trust`)."""
    if scan.has_aoti and not allow_native:
        item = "load the compiled code (a shared library) of the archive's AOTInductor part"
        raise JobFailure("untrusted_native", f"'{scan.path.name}' holds compiled code, which was not run: loading it "
                         "runs it, with your permissions.", "If you trust where the file came from, run it again "
                         "with --allow-native (in the window: answer Yes to 'run the compiled code in this "
                         "package?').", item, consent=[item])


@dataclass
class Pinned:
    """A `.pt2` opened once: `reader` names the open file (not the path), for the check and for torch's loader."""

    path: Path
    reader: str
    identity: tuple[int, ...]
    fd: int

    def verify(self) -> None:
        """Refuse a file that was written in place while it was checked and loaded (its size or modification time
        changed; the change time alone does not count: removing or replacing the path changes it too, and the open
        file still holds what was checked)."""
        if _fd_identity(self.fd)[:4] != self.identity[:4]:
            raise JobFailure("load", f"'{self.path.name}' changed while it was being loaded, so what torch read may "
                             "not be what was checked.", "Wait until the file is fully written, then try again.")


def _fd_identity(fd: int) -> tuple[int, ...]:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@contextmanager
def pinned(path: Path) -> Iterator[Pinned]:
    """Open `path` once; both readers open `/proc/self/fd/N` (or `/dev/fd/N`), the same file whatever happens to
    the path meanwhile."""
    try:
        f = open(path, "rb")  # noqa: SIM115  (kept open for the readers)
    except OSError:
        check_archive(path)  # raises the check's own message (missing, a folder, permission denied)
        raise JobFailure("load", f"'{path}' cannot be read.", "Check the path.") from None
    with f:
        fd = f.fileno()
        reader = next((f"{d}/{fd}" for d in ("/proc/self/fd", "/dev/fd") if os.path.isdir(d)), str(path))
        yield Pinned(path, reader, _fd_identity(fd), fd)


def import_file(path: Path, what: str = "file") -> str:
    """Import a user's Python file (a custom op's definition, a decomposition table) as a fresh module."""
    if not path.is_file():
        raise JobFailure("import", f"The {what} '{path}' does not exist.", "Check the path.")
    name = f"pt2v_user_{path.stem}_{abs(hash(str(path.resolve()))):x}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise JobFailure("import", f"The {what} '{path.name}' cannot be imported as Python.",
                         "Name a .py file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise JobFailure("import", f"The {what} '{path.name}' has a syntax error on line {e.lineno}: {e.msg}.",
                         "Fix the file and try again.", str(e)) from e
    except BaseException as e:  # the user's code may raise anything, SystemExit included
        del sys.modules[name]
        raise JobFailure("import", f"Importing the {what} '{path.name}' raised {type(e).__name__}: {first_line(e)}",
                         "Fix the file and try again; the log has the full traceback.", _traceback_text(e)) from e
    return name


def _traceback_text(e: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(e), e, e.__traceback__))


def prepare_imports(scan: ArchiveCheck, allowed: Iterable[str] = (), trusted: bool = False,
                    broken: dict[str, str] | None = None, missing: dict[str, str] | None = None,
                    log: list[str] | None = None) -> list[import_policy.ImportDecision]:
    """Import the modules the program needs that the policy allows (an installed allowed library, or one the user
    allowed). Returns what it imported; `broken` collects the installed modules that failed to import, with their
    errors, `missing` the modules found nowhere (module -> what for), `log` one line per import."""
    broken = {} if broken is None else broken
    missing = {} if missing is None else missing
    exclude = import_policy.unsafe_dirs(scan.path.parent)
    done: list[import_policy.ImportDecision] = []
    for decision in scan.import_plan(list(allowed), trusted):
        if decision.status == import_policy.MISSING:
            missing[decision.module] = decision.reason
        if decision.status not in (import_policy.ALLOWED, import_policy.USER):
            continue
        try:
            import_policy.import_module(decision, exclude)
        except Exception as e:  # an installed but broken package (e.g. one that needs a CUDA build of torch)
            broken[decision.module] = f"{type(e).__name__}: {first_line(e)}"
            continue
        done.append(decision)
        if log is not None:
            log.append(decision.log_line())
    return done


def check_deferred(scan: ArchiveCheck, pin: Pinned, trusted: bool) -> None:
    """The pickles that named an allowed library's class, read again with the weights-only unpickler now that the
    library is imported (it registers its safe classes). One still refused needs the user's trust."""
    if trusted or not scan.deferred:
        return
    try:
        files = open_archive(pin.reader)
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Save or copy the program again.") from None
    try:
        items = [f"unpickle {p.label} ({p.member}), {problem}" for p in scan.deferred
                 if (problem := weights_only_problem(files.read_bytes(p.member, MAX_PICKLE_BYTES)))]
    finally:
        files.close()
    if items:
        raise JobFailure("untrusted", f"'{scan.path.name}' was not loaded: loading it would run code from the file "
                         f"({'; '.join(items[:4])}).", TRUST_HINT, "\n".join(items), consent=items)


def check_registered(scan: ArchiveCheck, model: str, preload: Path | None,
                     broken: dict[str, str] | None = None, missing: dict[str, str] | None = None) -> None:
    """Raise a `JobFailure` naming every op and pytree type the program needs that this process lacks, the
    installed modules that should have registered them but failed to import (`broken`, from `prepare_imports`), and
    the packages to install for the modules found nowhere (`missing`)."""
    import torch.utils._pytree as pytree

    failed = "".join(f" '{m}' is installed but failed to import ({why})." for m, why in sorted((broken or {}).items()))
    needed = sorted({import_policy.pip_name(m) for m in (missing or {})})
    install = (f" This program needs the package that defines {', '.join(sorted(missing or {}))}: pip install "
               f"{' '.join(needed)}." if needed else "")

    missing_ops = sorted(t for t in scan.op_targets[model] if resolve_op(t) is None)
    if missing_ops:
        names = ", ".join(_op_label(t) for t in missing_ops)
        spaces = sorted({t.split(".")[2] for t in missing_ops})
        tried = f" (after importing '{preload.name}')" if preload else ""
        raise JobFailure(
            "missing_op",
            f"The program uses custom operators that are not registered{tried}: {names}.{failed}{install}",
            "Name the Python file that defines them with 'Import first' (--import FILE on the command line), or "
            f"install the package that provides the {', '.join(repr(s) for s in spaces)} op namespace.",
        )
    missing_types = sorted(
        t for t in scan.pytree_types[model]
        if t not in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE and not t.startswith(("builtins.", "collections."))
    )
    if missing_types:
        raise JobFailure(
            "missing_type",
            f"The program's inputs or outputs use Python types that are not registered with torch's pytree: "
            f"{', '.join(missing_types)}.{failed}{install}",
            "Install the package that defines them, or name a Python file that imports and registers them with "
            "'Import first' (--import FILE).",
        )


def _op_label(target: str) -> str:
    """torch.ops.ns.op.overload -> ns::op.overload, the spelling torch.library uses."""
    parts = target.split(".")
    return f"{parts[2]}::{'.'.join(parts[3:])}" if len(parts) > 3 else target


@contextmanager
def captured_torch_logs(lines: list[str]) -> Iterator[None]:
    """Collect what torch.export's loggers and warnings say, instead of letting it reach the user's terminal."""

    class _ListHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")

    handler = _ListHandler(logging.INFO)
    loggers = [logging.getLogger(n) for n in LOGGERS]
    saved = [lg.propagate for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        lines.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    finally:
        for lg, p in zip(loggers, saved):
            lg.removeHandler(handler)
            lg.propagate = p


def pick_model(scan: ArchiveCheck, path: Path, program: str | None) -> str:
    if program is None:
        return "model" if "model" in scan.models else scan.models[0]
    if program not in scan.models:
        raise JobFailure("load", f"'{path.name}' has no program named '{program}'.",
                         f"It holds: {', '.join(scan.models)}.")
    return program


def load_program(path: str | Path, program: str | None = None, preload: str | Path | None = None,
                 trusted: bool = False, allow_imports: Iterable[str] = (), allow_native: bool = False,
                 check: ArchiveCheck | None = None) -> LoadedProgram:
    """Check the archive, then load one program with torch, or raise `JobFailure` saying what is missing.

    Unless `trusted`, nothing from the file runs: `check_archive` refuses what would (kind "untrusted"), only the
    modules the import policy allows are imported (`allow_imports`: those the user agreed to), and torch's loader
    runs with every unpickle forced to weights-only as a second guard. `check`, a check of the same file made
    before (the warm worker's), is used when the open file is still the one it checked. `allow_native` is accepted
    for the jobs that will run an AOTInductor part (`require_native`); the programs themselves never need it."""
    path = Path(path)
    allowed = list(allow_imports)
    with pinned(path) as pin:
        scan = (check if check is not None and check.identity == pin.identity
                else check_archive(path, pin.reader, pin.identity))
        require_trust(scan, trusted, allowed)
        model = pick_model(scan, path, program)
        imported: list[str] = []
        preload_path = Path(preload) if preload else None
        if preload_path is not None:
            imported.append(import_file(preload_path, "import-first file"))
        broken: dict[str, str] = {}
        missing: dict[str, str] = {}
        log: list[str] = []
        done = prepare_imports(scan, allowed, trusted, broken, missing, log)
        imported += [d.module for d in done]
        check_deferred(scan, pin, trusted)
        check_registered(scan, model, preload_path, broken, missing)
        by_torch = sorted(m for m, why in missing.items() if why in (ENUM_REASON, FACTORY_REASON))
        if by_torch:  # an enum's or a default factory's module: torch would import it itself
            raise JobFailure("missing_module", f"This program needs the package that defines {', '.join(by_torch)}: "
                             f"pip install {' '.join(sorted({import_policy.pip_name(m) for m in by_torch}))}.",
                             "Install it in the Python that runs the jobs, then try again.")

        if scan.has_aoti:
            log.append("the archive's AOTInductor part was not loaded: only its programs are")
        try:
            with captured_torch_logs(log), ExitStack() as guards:
                if not trusted:
                    guards.enter_context(_weights_only_unpickling())
                # torch imports an enum's module itself: never from the working directory or the file's folder
                guards.enter_context(import_policy.safe_sys_path(import_policy.unsafe_dirs(path.parent)))
                programs = _load_programs(pin.reader)
        except Exception as e:
            raise JobFailure("load", f"torch could not load '{path.name}': {first_line(e)}",
                             "The log has torch's full message; a program saved by a newer torch may need that "
                             "version.", "\n".join(log + [_traceback_text(e)])) from e
        pin.verify()
    ep = programs.get(model)
    if ep is None:
        raise JobFailure("load", f"torch loaded '{path.name}' but found no program '{model}' in it.",
                         f"It holds: {', '.join(programs) or 'none'}.")
    return LoadedProgram(ep=ep, name=model, path=path, sample_inputs=read_sample_inputs(ep, log),
                         imported=imported, log=log, import_details=[d.to_json() for d in done])


def _load_programs(path: Path | str) -> dict[str, Any]:
    """torch's `load_pt2` without its AOTInductor part: only the exported programs (no native code is loaded)."""
    from torch.export.pt2_archive._package import PT2ArchiveReader, _load_exported_programs
    from torch.export.pt2_archive.constants import ARCHIVE_VERSION_PATH, ARCHIVE_VERSION_VALUE

    with PT2ArchiveReader(str(path)) as reader:
        version = reader.read_string(ARCHIVE_VERSION_PATH)
        if version != ARCHIVE_VERSION_VALUE:
            raise ValueError(f"the archive's version {version[:20]!r} is not {ARCHIVE_VERSION_VALUE!r}")
        return _load_exported_programs(reader, reader.get_file_names(), None)


@contextmanager
def _weights_only_unpickling() -> Iterator[None]:
    """While torch loads an untrusted file: `torch.load` is weights-only whatever its caller asks, and plain pickle
    is refused, so that even a pickle `check_archive` missed cannot run a `__reduce__`."""
    import torch
    from torch.export.pt2_archive import _package

    original = torch.load

    def weights_only_load(f: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["weights_only"] = True
        return original(f, *args, **kwargs)

    class _NoPickle:
        def __getattr__(self, name: str) -> Any:
            raise pickle.UnpicklingError("an untrusted archive may not be unpickled with Python's pickle")

    saved_pickle = _package.pickle
    torch.load = weights_only_load
    _package.pickle = _NoPickle()
    try:
        yield
    finally:
        torch.load = original
        _package.pickle = saved_pickle


def read_sample_inputs(ep: Any, log: list[str]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The (args, kwargs) saved beside the program (torch loaded them, weights-only); None when absent."""
    value = getattr(ep, "example_inputs", None)
    if value is None:
        return None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple) and isinstance(value[1], dict):
        return value[0], value[1]
    log.append(f"sample inputs have an unexpected shape ({type(value).__name__}); ignoring them")
    return None
