"""Load a `.pt2` program inside a worker job, safely, and say exactly what is missing when it does not load.

A `.pt2` may come from anyone, and torch's loader trusts it (it unpickles, evaluates sizes as Python, imports modules
the file names). So `core/jobs/archive_check.py` reads the archive first, without torch, and refuses what would run
code unless the user trusts the file. `torch.export.load` also needs every custom operator and pytree type the program
names to be registered first, and when one is missing it logs a long traceback and raises a generic error: so we import
the user's "import first" file, and (trusted files only) the installed modules the program names, and check that each
op resolves. Only then is torch's loader called, for the programs alone (never an AOTInductor part's native code), with
unpickling forced to weights-only for untrusted files, and its loggers captured so their lines end up in the failure's
detail rather than on the terminal. Sample inputs saved in the archive come from torch's own loader (weights-only).
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import pickle
import sys
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.archive_check import BUILTIN_NAMESPACES, ArchiveCheck, check_archive, require_trust
from pt2_viewer.core.jobs.errors import JobFailure, first_line

LOGGERS = ("torch.export", "torch._export")


@dataclass
class LoadedProgram:
    ep: Any  # torch.export.ExportedProgram
    name: str  # the program's name inside the archive
    path: Path
    sample_inputs: tuple[tuple[Any, ...], dict[str, Any]] | None  # (args, kwargs) saved in the archive
    imported: list[str] = field(default_factory=list)  # modules imported so the program would load
    log: list[str] = field(default_factory=list)  # lines torch logged or warned while loading


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


def _try_import(module: str, imported: list[str], broken: dict[str, str]) -> None:
    """Import `module` if it is installed. One that is installed but fails to import goes into `broken` with its
    error, for the final check to name (the op or type it should have registered is still missing then)."""
    try:
        if importlib.util.find_spec(module) is None:
            return
        importlib.import_module(module)
    except Exception as e:  # an installed but broken package (e.g. one that needs a CUDA build of torch)
        broken[module] = f"{type(e).__name__}: {first_line(e)}"
        return
    imported.append(module)


def _module_candidates(type_name: str) -> list[str]:
    """'transformers.modeling_outputs.BaseModelOutput' -> ['transformers.modeling_outputs', 'transformers']."""
    parts = type_name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def resolve_op(target: str) -> Any | None:
    """`torch.ops.ns.op.overload` -> the OpOverload, or None when it is not registered in this process."""
    import torch

    parts = target.split(".")
    if len(parts) < 4:
        return None
    obj: Any = torch.ops
    try:
        for p in parts[2:]:
            obj = getattr(obj, p)
    except (AttributeError, RuntimeError):
        return None
    return obj


def prepare_imports(scan: ArchiveCheck, model: str, broken: dict[str, str] | None = None) -> list[str]:
    """Import the installed modules that the program's op namespaces and pytree types name. Returns what it imported;
    `broken` collects the installed modules that failed to import, with their errors."""
    import torch.utils._pytree as pytree

    imported: list[str] = []
    broken = {} if broken is None else broken
    for ns in sorted({t.split(".")[2] for t in scan.op_targets[model]} - BUILTIN_NAMESPACES):
        if any(resolve_op(t) is None for t in scan.op_targets[model] if t.split(".")[2] == ns):
            _try_import(ns, imported, broken)
    for type_name in sorted(scan.pytree_types[model]):
        if type_name in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE:
            continue
        for module in _module_candidates(type_name):
            if module.split(".")[0] in ("builtins", "collections", "torch"):
                break
            _try_import(module, imported, broken)
            if type_name in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE or module in imported:
                break
    return imported


def check_registered(scan: ArchiveCheck, model: str, preload: Path | None,
                     broken: dict[str, str] | None = None) -> None:
    """Raise a `JobFailure` naming every op and pytree type the program needs that this process lacks, and the
    installed modules that should have registered them but failed to import (`broken`, from `prepare_imports`)."""
    import torch.utils._pytree as pytree

    failed = "".join(f" '{m}' is installed but failed to import ({why})." for m, why in sorted((broken or {}).items()))

    missing_ops = sorted(t for t in scan.op_targets[model] if resolve_op(t) is None)
    if missing_ops:
        names = ", ".join(_op_label(t) for t in missing_ops)
        spaces = sorted({t.split(".")[2] for t in missing_ops})
        tried = f" (after importing '{preload.name}')" if preload else ""
        raise JobFailure(
            "missing_op",
            f"The program uses custom operators that are not registered{tried}: {names}.{failed}",
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
            f"{', '.join(missing_types)}.{failed}",
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
                 trusted: bool = False) -> LoadedProgram:
    """Check the archive, then load one program with torch, or raise `JobFailure` saying what is missing.

    Unless `trusted`, nothing from the file runs: `check_archive` refuses what would (kind "untrusted"), no module it
    names is imported, and torch's loader runs with every unpickle forced to weights-only as a second guard."""
    path = Path(path)
    scan = check_archive(path)
    require_trust(scan, trusted)
    model = pick_model(scan, path, program)
    imported: list[str] = []
    preload_path = Path(preload) if preload else None
    if preload_path is not None:
        imported.append(import_file(preload_path, "import-first file"))
    broken: dict[str, str] = {}
    if trusted:
        imported += prepare_imports(scan, model, broken)
    check_registered(scan, model, preload_path, broken)

    log: list[str] = []
    if scan.has_aoti:
        log.append("the archive's AOTInductor part was not loaded: only its programs are")
    try:
        with captured_torch_logs(log), ExitStack() as guards:
            if not trusted:
                guards.enter_context(_weights_only_unpickling())
            programs = _load_programs(path)
    except Exception as e:
        raise JobFailure("load", f"torch could not load '{path.name}': {first_line(e)}",
                         "The log has torch's full message; a program saved by a newer torch may need that version.",
                         "\n".join(log + [_traceback_text(e)])) from e
    ep = programs.get(model)
    if ep is None:
        raise JobFailure("load", f"torch loaded '{path.name}' but found no program '{model}' in it.",
                         f"It holds: {', '.join(programs) or 'none'}.")
    return LoadedProgram(ep=ep, name=model, path=path, sample_inputs=read_sample_inputs(ep, log),
                         imported=imported, log=log)


def _load_programs(path: Path) -> dict[str, Any]:
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
