"""Load a `.pt2` program inside a worker job, and say exactly what is missing when it does not load.

`torch.export.load` needs every custom operator and every pytree type the program names to be registered first, and
when one is missing it logs a long traceback and raises a generic error. So before loading we read the archive's
JSON ourselves (no torch, no pickle) for the op namespaces and pytree type names, import the user's "import first"
file and any installed module those names point at, and check that each op resolves. Only then is torch's loader
called, with its loggers captured so their lines end up in the failure's detail rather than on the terminal.

Sample inputs saved in the archive (`<root>/data/sample_inputs/<model>.pt`) are read with
`torch.load(weights_only=True)`: never a full unpickle.
"""
from __future__ import annotations

import importlib
import importlib.util
import io
import json
import logging
import sys
import warnings
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from core.jobs.errors import JobFailure, first_line

# Op namespaces that ship with torch itself: nothing to import for them.
BUILTIN_NAMESPACES = frozenset(
    {"aten", "prims", "higher_order", "_c10d_functional", "c10d_functional", "_dtensor", "c10d", "quantized",
     "_quantized", "quantized_decomposed", "profiler", "inductor", "_inductor_test", "debugprims", "rngprims",
     "fbgemm", "mkldnn", "onednn", "_onednn", "mkl", "xpu", "prepacked", "_prims", "symm_mem", "_c10d_functional_autograd",
     "_test", "_export", "export"}
)
LOGGERS = ("torch.export", "torch._export")


@dataclass
class ArchiveScan:
    """What one program in the archive names, read from its JSON without torch."""

    root: str  # the archive's top folder ("model" for model.pt2)
    models: list[str]  # program names in the archive ("model" for torch.export.save)
    op_targets: dict[str, set[str]]  # model -> {"torch.ops.ns.op.overload", ...}
    pytree_types: dict[str, set[str]]  # model -> {"transformers.modeling_outputs.BaseModelOutput", ...}


@dataclass
class LoadedProgram:
    ep: Any  # torch.export.ExportedProgram
    name: str  # the program's name inside the archive
    path: Path
    sample_inputs: tuple[tuple[Any, ...], dict[str, Any]] | None  # (args, kwargs) saved in the archive
    imported: list[str] = field(default_factory=list)  # modules imported so the program would load
    log: list[str] = field(default_factory=list)  # lines torch logged or warned while loading


def scan_archive(path: Path) -> ArchiveScan:
    """Read the program JSON members of a `.pt2` for names, op targets and pytree types. No torch."""
    if not path.is_file():
        raise JobFailure("load", f"'{path}' does not exist.", "Check the path, or save the program again.")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise JobFailure("load", f"'{path.name}' is not a .pt2 archive (not a zip file).",
                         "Save the program with torch.export.save.", str(e)) from e
    with zf:
        models: dict[str, str] = {}
        root = ""
        for entry in zf.namelist():
            parts = entry.split("/")
            if len(parts) == 3 and parts[1] == "models" and parts[2].endswith(".json"):
                root = parts[0]
                models[parts[2][: -len(".json")]] = entry
        if not models:
            raise JobFailure("load", f"'{path.name}' holds no torch.export program (no models/*.json member).",
                             "Is it an AOTInductor package or another kind of archive? Open it to see what it holds.")
        scan = ArchiveScan(root=root, models=sorted(models), op_targets={}, pytree_types={})
        for model, entry in models.items():
            try:
                doc = json.loads(zf.read(entry))
            except (ValueError, zipfile.BadZipFile, OSError) as e:
                raise JobFailure("load", f"The program '{model}' in '{path.name}' is damaged: {first_line(e)}",
                                 "Save the program again.", str(e)) from e
            targets: set[str] = set()
            types: set[str] = set()
            _walk_json(doc, targets, types)
            scan.op_targets[model] = targets
            scan.pytree_types[model] = types
        return scan


def _walk_json(v: Any, targets: set[str], types: set[str]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "target" and isinstance(x, str) and x.startswith("torch.ops."):
                targets.add(x)
            elif k in ("in_spec", "out_spec") and isinstance(x, str):
                _spec_types(x, types)
            else:
                _walk_json(x, targets, types)
    elif isinstance(v, list):
        for x in v:
            _walk_json(x, targets, types)


def _spec_types(spec_text: str, types: set[str]) -> None:
    """Collect the `type` names of a serialized pytree spec: `[protocol, {"type": ..., "children_spec": [...]}]`."""
    try:
        spec = json.loads(spec_text)
    except ValueError:
        return
    stack = [spec[1] if isinstance(spec, list) and len(spec) == 2 else spec]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        t = node.get("type")
        if isinstance(t, str) and t:
            types.add(t)
        stack.extend(node.get("children_spec") or [])


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


def _try_import(module: str, imported: list[str]) -> None:
    """Import `module` if it is installed; a module that fails to import is left for the final check to report."""
    try:
        if importlib.util.find_spec(module) is None:
            return
        importlib.import_module(module)
    except Exception:  # an installed but broken package: the missing-op/type check below says what is missing
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


def prepare_imports(scan: ArchiveScan, model: str) -> list[str]:
    """Import the installed modules that the program's op namespaces and pytree types name. Returns what it imported."""
    import torch.utils._pytree as pytree

    imported: list[str] = []
    for ns in sorted({t.split(".")[2] for t in scan.op_targets[model]} - BUILTIN_NAMESPACES):
        if any(resolve_op(t) is None for t in scan.op_targets[model] if t.split(".")[2] == ns):
            _try_import(ns, imported)
    for type_name in sorted(scan.pytree_types[model]):
        if type_name in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE:
            continue
        for module in _module_candidates(type_name):
            if module.split(".")[0] in ("builtins", "collections", "torch"):
                break
            _try_import(module, imported)
            if type_name in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE or module in imported:
                break
    return imported


def check_registered(scan: ArchiveScan, model: str, preload: Path | None) -> None:
    """Raise a `JobFailure` naming every op and pytree type the program needs that this process lacks."""
    import torch.utils._pytree as pytree

    missing_ops = sorted(t for t in scan.op_targets[model] if resolve_op(t) is None)
    if missing_ops:
        names = ", ".join(_op_label(t) for t in missing_ops)
        spaces = sorted({t.split(".")[2] for t in missing_ops})
        tried = f" (after importing '{preload.name}')" if preload else ""
        raise JobFailure(
            "missing_op",
            f"The program uses custom operators that are not registered{tried}: {names}.",
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
            f"{', '.join(missing_types)}.",
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


def pick_model(scan: ArchiveScan, path: Path, program: str | None) -> str:
    if program is None:
        return "model" if "model" in scan.models else scan.models[0]
    if program not in scan.models:
        raise JobFailure("load", f"'{path.name}' has no program named '{program}'.",
                         f"It holds: {', '.join(scan.models)}.")
    return program


def load_program(path: str | Path, program: str | None = None, preload: str | Path | None = None) -> LoadedProgram:
    """Load one program of a `.pt2` with torch, or raise `JobFailure` saying what is missing."""
    path = Path(path)
    scan = scan_archive(path)
    model = pick_model(scan, path, program)
    imported: list[str] = []
    preload_path = Path(preload) if preload else None
    if preload_path is not None:
        imported.append(import_file(preload_path, "import-first file"))
    imported += prepare_imports(scan, model)
    check_registered(scan, model, preload_path)

    from torch.export.pt2_archive._package import load_pt2

    log: list[str] = []
    try:
        with captured_torch_logs(log):
            contents = load_pt2(str(path))
    except Exception as e:
        raise JobFailure("load", f"torch could not load '{path.name}': {first_line(e)}",
                         "The log has torch's full message; a program saved by a newer torch may need that version.",
                         "\n".join(log + [_traceback_text(e)])) from e
    ep = contents.exported_programs.get(model)
    if ep is None:
        raise JobFailure("load", f"torch loaded '{path.name}' but found no program '{model}' in it.",
                         f"It holds: {', '.join(contents.exported_programs) or 'none'}.")
    return LoadedProgram(ep=ep, name=model, path=path, sample_inputs=read_sample_inputs(path, scan.root, model, log),
                         imported=imported, log=log)


def read_sample_inputs(path: Path, root: str, model: str, log: list[str]) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The (args, kwargs) saved beside the program, loaded with weights_only=True; None when absent or unreadable."""
    import torch

    entry = f"{root}/data/sample_inputs/{model}.pt"
    try:
        with zipfile.ZipFile(path) as zf:
            if entry not in zf.namelist():
                return None
            data = zf.read(entry)
        value = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as e:  # unreadable sample inputs are not fatal: inputs can be generated from the signature
        log.append(f"sample inputs not usable: {first_line(e)}")
        return None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple) and isinstance(value[1], dict):
        return value[0], value[1]
    log.append(f"sample inputs have an unexpected shape ({type(value).__name__}); ignoring them")
    return None
