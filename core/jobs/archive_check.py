"""Check a `.pt2` from someone else before torch loads it: what in it would run code, and is it sound at all.

torch's loader trusts the file. It unpickles pickled weights, constants and sample inputs (falling back to a full
unpickle, which runs any `__reduce__`), evaluates every symbolic size as Python (`sympy.sympify`), imports the module
named by a pytree type, an enum or a default factory, and loads the native library of an AOTInductor part. So the
worker reads the archive itself first, through `core/pt2/archive.py` (the viewer's own zip checks: damaged zips, sizes,
zip bombs) and without recursion (JSON nested 100,000 deep), and finds:

- hard problems, refused whatever the user says: a damaged zip, a member that inflates out of proportion, member names
  that point outside the archive, too many members, JSON nested absurdly deep, symbol ranges that are not whole
  numbers or whose minimum exceeds the maximum;
- code it would run, refused unless the user trusts the file (`--trust`, or the window's prompt): a pickle that does
  not load under torch's weights-only unpickler, a TorchScript or opaque object, a size expression outside the
  grammar torch writes (`core/jobs/expr_grammar.py`);
- the modules the program names (custom-op namespaces, pytree types, enums, default factories, the classes of
  pickled tensor subclasses), each judged by `core/jobs/import_policy.py`: a module of an allowed installed library
  is imported without asking, any other installed one only with the user's consent (`--allow-import MODULE`, the
  window's question, `--trust`), and a missing one is named with the package to install.

A pickle refused by the weights-only unpickler only because it names a class of an allowed library (torchao's
quantized weights) is deferred: once the library is imported (it registers its safe classes), `core/jobs/loading.py`
checks it again with the weights-only unpickler.

The AOTInductor part of an archive is never loaded by the jobs (`core/jobs/loading.py` loads only the programs).
"""
from __future__ import annotations

import io
import json
import pickle
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs import import_policy
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.expr_grammar import UnsafeExpression, check_expression
from pt2_viewer.core.jobs.import_policy import CONSENT, ImportDecision
from pt2_viewer.core.jobs.op_lookup import resolve_op
from pt2_viewer.core.pt2.archive import (
    AOTI_DIR,
    CONSTANTS_CONFIG,
    MODELS_DIR,
    SAMPLE_INPUTS,
    WEIGHTS_CONFIG,
    ArchiveFiles,
    open_archive,
)
from pt2_viewer.core.pt2.errors import ArchiveError

MAX_MEMBERS = 100_000
MAX_JSON_DEPTH = 200  # real programs nest about 10 levels, plus about 8 per level of nested subgraphs
MAX_RATIO = 200  # torch stores members uncompressed; anything inflating more than this is a zip bomb
RATIO_FLOOR = 64 * 1024 * 1024  # small members may compress well (JSON does): judge only big ones
MAX_PICKLE_BYTES = 1 << 34
TRUST_HINT = ("If you trust where the file came from, run it again with --trust (in the window: answer Yes when "
              "asked); otherwise ask its author for a file saved by torch.export.save without custom objects.")
# Op namespaces that torch registers when it is imported: nothing to import for them. (quantized_decomposed is
# torch's too, but registered only by importing torch.ao.quantization.fx._decomposed: import_policy.NAMESPACE_MODULES.)
BUILTIN_NAMESPACES = frozenset(
    {"aten", "prims", "higher_order", "_c10d_functional", "c10d_functional", "_dtensor", "c10d", "quantized",
     "_quantized", "profiler", "inductor", "_inductor_test", "debugprims", "rngprims",
     "fbgemm", "mkldnn", "onednn", "_onednn", "mkl", "xpu", "prepacked", "_prims", "symm_mem",
     "_c10d_functional_autograd", "_test", "_export", "export"}
)
SAFE_TYPE_MODULES = ("builtins", "collections", "torch")
# Modules torch's loader imports itself (not the viewer): the job stops first when one is missing.
ENUM_REASON = "for an enum in a pytree context"
FACTORY_REASON = "for a default factory in a pytree context"


@dataclass(frozen=True)
class DeferredPickle:
    """A pickle the weights-only unpickler refused only for a class of an allowed library (`module`)."""

    member: str
    label: str  # "the weight '0.weight'"
    global_name: str  # "torchao.quantization.Int8Tensor"
    module: str


@dataclass
class ArchiveCheck:
    """What one archive holds and what of it would run code. `code` needs the user's trust; `imports` are judged by
    the import policy (`import_plan`)."""

    path: Path
    root: str
    models: list[str]
    op_targets: dict[str, set[str]] = field(default_factory=dict)  # model -> {"torch.ops.ns.op.overload", ...}
    pytree_types: dict[str, set[str]] = field(default_factory=dict)  # model -> {"mod.Type", ...}
    imports: dict[str, str] = field(default_factory=dict)  # module torch needs imported -> what for
    code: list[str] = field(default_factory=list)  # sentences: what would run code when torch loads it
    deferred: list[DeferredPickle] = field(default_factory=list)
    has_aoti: bool = False
    identity: tuple[int, ...] | None = None  # of the open file that was checked (core/jobs/loading.pinned)

    def import_plan(self, allowed: tuple[str, ...] | list[str] = (), trusted: bool = False) -> list[ImportDecision]:
        """What the policy says of each module the program needs (resolved now: the worker's Python may change)."""
        exclude = import_policy.unsafe_dirs(self.path.parent)
        return [import_policy.decide(m, why, allowed, trusted, exclude) for m, why in sorted(self.imports.items())]

    def consent_items(self, allowed: tuple[str, ...] | list[str] = ()) -> list[str]:
        """One line per thing the user is asked to allow (the prompt lists them)."""
        plan = self.import_plan(allowed)
        asked = {d.module for d in plan if d.status == CONSENT}
        return ([d.consent_item() for d in plan if d.status == CONSENT] + list(self.code)
                + [f"unpickle {p.label} ({p.member}), which calls {p.global_name} when loaded"
                   for p in self.deferred if p.module in asked])

    def modules_to_allow(self, allowed: tuple[str, ...] | list[str] = ()) -> list[str]:
        return [d.module for d in self.import_plan(allowed) if d.status == CONSENT]

    @property
    def needs_trust(self) -> bool:
        return bool(self.consent_items())


def check_archive(path: str | Path, reader: str | None = None, identity: tuple[int, ...] | None = None
                  ) -> ArchiveCheck:
    """Read and check every member torch would read; raise `JobFailure` for a file no one should load. `reader`
    names the already open file to read (`core/jobs/loading.pinned`), so that torch later loads what was checked;
    messages name `path`."""
    path = Path(path)
    try:
        files = open_archive(reader or path)
    except ArchiveError as e:
        message = str(e).replace(f"'{reader}'", f"'{path}'").replace(f"'{Path(reader).name}'", f"'{path.name}'") \
            if reader else str(e)
        hint = "" if not path.exists() else "Check the path, or save or copy the program again."  # said once
        raise JobFailure("load", message, hint) from None
    files.path = path
    try:
        check = _check(files)
    except ArchiveError as e:
        raise JobFailure("load", str(e), "Save or copy the program again.") from None
    finally:
        files.close()
    check.identity = identity
    return check


def require_trust(check: ArchiveCheck, trusted: bool, allowed: tuple[str, ...] | list[str] = ()) -> None:
    """Refuse (kind "untrusted", listing what was found) unless the file needs no trust or the user gave it: `trusted`
    for everything, `allowed` for the modules named in it (and their submodules)."""
    if trusted:
        return
    items = check.consent_items(allowed)
    if not items:
        return
    modules = check.modules_to_allow(allowed)
    shown = "; ".join(items[:4]) + (f"; and {len(items) - 4} more" if len(items) > 4 else "")
    if check.code or len(modules) < len(items):
        message = f"'{check.path.name}' was not loaded: loading it would run code from the file ({shown})."
        hint = TRUST_HINT
    else:
        libraries = ", ".join(sorted(set(import_policy.ALLOWED_DISTRIBUTIONS) - {"torch"}))
        message = (f"'{check.path.name}' was not loaded: loading it would {shown}, which is not part of the "
                   f"libraries known to register programs' types and ops ({libraries}); importing it runs its code.")
        hint = ("If you expect this program to need it, run it again with "
                + " ".join(f"--allow-import {m}" for m in modules)
                + " (in the window: answer Yes when asked), or with --trust to trust the whole file.")
    raise JobFailure("untrusted", message, hint, "\n".join(items), consent=items, modules=modules)


def _check(files: ArchiveFiles) -> ArchiveCheck:
    name = files.path.name
    if len(files.entries) > MAX_MEMBERS:
        raise ArchiveError(f"'{name}' has {len(files.entries):,} members, more than the {MAX_MEMBERS:,} a "
                           "torch.export archive could need: it is damaged or not a program.")
    if files.duplicates:
        raise ArchiveError(f"'{name}' holds the member '{_printable(files.duplicates[0])}' more than once (names "
                           "compared without case): torch could load another copy than the one checked.")
    for entry in files.entries.values():
        parts = entry.name.replace("\\", "/").split("/")
        if entry.name.startswith("/") or ".." in parts or "\x00" in entry.name:
            raise ArchiveError(f"'{name}' has a member named '{_printable(entry.name)}', which points outside the "
                               "archive: it was not written by torch.export.save.")
        if entry.size > RATIO_FLOOR and entry.size > MAX_RATIO * max(entry.compressed_size, 1):
            raise ArchiveError(f"In '{name}', the member '{_printable(entry.name)}' inflates from "
                               f"{entry.compressed_size:,} to {entry.size:,} bytes: a zip bomb, or a damaged file.")
    fmt = files.read_text("archive_format") if files.has("archive_format") else ""
    if fmt != "pt2":
        raise ArchiveError(f"'{name}' is not a torch.export archive: its archive_format is "
                           f"'{fmt[:40]}', not 'pt2'." if fmt else f"'{name}' is not a torch.export archive: it has "
                           "no archive_format member.")
    # Every member under models/ is a program to torch's loader (it cuts ".json" off blindly): check each one.
    model_members = files.names_under(MODELS_DIR)
    if any(not n.endswith(".json") for n in model_members):
        odd = next(n for n in model_members if not n.endswith(".json"))
        raise ArchiveError(f"'{name}' has the member '{_printable(odd)}' among its programs, which is not a "
                           "program's JSON: the file is damaged or was not written by torch.export.save.")
    models = sorted(n[len(MODELS_DIR):-len(".json")] for n in model_members)
    if not models:
        raise ArchiveError(f"'{name}' holds no torch.export program (no models/*.json member). Is it an "
                           "AOTInductor package or another kind of archive? Open it to see what it holds.")
    check = ArchiveCheck(path=files.path, root=files.root, models=models,
                         has_aoti=bool(files.names_under(AOTI_DIR)))
    for model in models:
        doc = files.read_json(f"{MODELS_DIR}{model}.json")
        _check_program(check, model, doc)
        _check_pickles(check, files, model)
    _check_modules(check)
    for p in check.deferred:
        check.imports.setdefault(p.module, f"for {p.label} ({p.global_name})")
    return check


def _printable(text: str, limit: int = 80) -> str:
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


# --- the program JSON ---------------------------------------------------------------------------------------------
def _check_program(check: ArchiveCheck, model: str, doc: Any) -> None:
    where = f"the program '{_printable(model)}' in '{check.path.name}'"
    targets: set[str] = set()
    specs: list[str] = []
    stack: list[tuple[Any, int]] = [(doc, 1)]
    bad_exprs: list[str] = []
    while stack:
        v, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ArchiveError(f"In {where}, the JSON is nested more than {MAX_JSON_DEPTH} levels deep: it is "
                               "damaged, or not a program torch wrote.")
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "target" and isinstance(x, str) and x.startswith("torch.ops."):
                    targets.add(x)
                elif k in ("in_spec", "out_spec") and isinstance(x, str):
                    specs.append(x)
                elif k == "expr_str":
                    try:
                        check_expression(x)
                    except UnsafeExpression as e:
                        bad_exprs.append(f"{e} in {_printable(str(x), 60)!r}")
                else:
                    stack.append((x, depth + 1))
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    if bad_exprs:
        check.code.append(f"evaluate {len(bad_exprs)} symbolic expression(s) outside the grammar torch writes, "
                          f"e.g. {bad_exprs[0]}")
    _check_ranges(where, doc.get("range_constraints") if isinstance(doc, dict) else None)
    check.op_targets[model] = targets
    types: set[str] = set()
    for spec in specs:
        _spec_names(spec, types, check.imports)
    check.pytree_types[model] = types


def _check_ranges(where: str, ranges: Any) -> None:
    if ranges is None:
        return
    if not isinstance(ranges, dict):
        raise ArchiveError(f"In {where}, range_constraints is not an object: the file is damaged.")
    for symbol, r in ranges.items():
        if not isinstance(r, dict):
            raise ArchiveError(f"In {where}, the range of '{_printable(symbol, 40)}' is not an object.")
        low, high = r.get("min_val"), r.get("max_val")
        for end in (low, high):
            if end is not None and (isinstance(end, bool) or not isinstance(end, int)):
                raise ArchiveError(f"In {where}, the range of the symbol '{_printable(symbol, 40)}' has the bound "
                                   f"{_printable(repr(end), 40)}, which is not a whole number: the file is damaged.")
        if low is not None and high is not None and low > high:
            raise ArchiveError(f"In {where}, the symbol '{_printable(symbol, 40)}' has the range [{low}, {high}], "
                               "whose minimum exceeds its maximum: the file is damaged.")


def _spec_names(spec_text: str, types: set[str], modules: dict[str, str]) -> None:
    """Pytree type names of a serialized spec, and the modules its contexts would import (enums, default factories)."""
    try:
        spec = json.loads(spec_text)
    except (ValueError, RecursionError):
        return  # torch fails on it too, without running anything
    stack = [spec[1] if isinstance(spec, list) and len(spec) == 2 else spec]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        t = node.get("type")
        if isinstance(t, str) and t:
            types.add(t)
        context = node.get("context")
        if isinstance(context, str) and ("__enum__" in context or "default_factory_module" in context):
            _context_modules(context, modules)
        children = node.get("children_spec")
        if isinstance(children, list):
            stack.extend(children)


def _context_modules(text: str, modules: dict[str, str]) -> None:
    try:
        context = json.loads(text)
    except (ValueError, RecursionError):
        return
    stack = [context]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if "__enum__" in v and isinstance(v.get("fqn"), str):
                _maybe_module(v["fqn"].partition(":")[0], ENUM_REASON, modules)
            if isinstance(v.get("default_factory_module"), str):
                _maybe_module(v["default_factory_module"], FACTORY_REASON, modules)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _maybe_module(module: str, why: str, modules: dict[str, str]) -> None:
    """Record `module` as one torch would import (the policy judges it later), unless it is imported already."""
    if module and module not in sys.modules and all(p.isidentifier() for p in module.split(".")):
        modules.setdefault(module, why)


def _check_modules(check: ArchiveCheck) -> None:
    """The modules that `loading.prepare_imports` would import for unregistered op namespaces and pytree types."""
    import torch.utils._pytree as pytree  # deferred: torch, imported only inside a worker job

    exclude = import_policy.unsafe_dirs(check.path.parent)
    for model in check.models:
        for ns in sorted({t.split(".")[2] for t in check.op_targets[model] if t.count(".") >= 3}
                         - BUILTIN_NAMESPACES):
            if any(resolve_op(t) is None for t in check.op_targets[model] if t.split(".")[2] == ns):
                for module in import_policy.NAMESPACE_MODULES.get(ns, (ns,)):
                    _maybe_module(module, f"for the custom-op namespace '{_printable(ns, 40)}'", check.imports)
        for type_name in sorted(check.pytree_types[model]):
            if type_name in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE or type_name.startswith(
                    tuple(m + "." for m in SAFE_TYPE_MODULES)):
                continue
            module = type_module(type_name, exclude)
            short = _printable(type_name[len(module) + 1:] if module else type_name, 60)
            if module in check.imports and check.imports[module].count(",") < 2:
                check.imports[module] += f", {short}"  # several types of one module: "for A, B, C"
            elif module:
                _maybe_module(module, f"for {short}", check.imports)


def type_module(type_name: str, exclude: set[Path]) -> str:
    """The module that defines a pytree type: the longest dotted prefix that is a module on the import path (a
    nested class has more parts), else the longest prefix (then missing: the policy says which package to install)."""
    candidates = [".".join(type_name.split(".")[:i]) for i in range(type_name.count("."), 0, -1)]
    for module in candidates:
        if import_policy.resolve(module, exclude).found:
            return module
    return candidates[0] if candidates else ""


# --- pickled members ----------------------------------------------------------------------------------------------
def _check_pickles(check: ArchiveCheck, files: ArchiveFiles, model: str) -> None:
    members: list[tuple[str, str]] = []  # (member, what it is)
    for config_name, folder, what in ((WEIGHTS_CONFIG, "data/weights/", "weight"),
                                      (CONSTANTS_CONFIG, "data/constants/", "constant")):
        legacy = f"{folder}{model}.pt"
        if files.has(legacy):
            members.append((legacy, f"the legacy-format {what}s"))
        config = config_name.format(model)
        if not files.has(config):
            continue
        doc = files.read_json(config)
        entries = doc.get("config") if isinstance(doc, dict) else None
        for fqn, meta in (entries.items() if isinstance(entries, dict) else ()):
            if not isinstance(meta, dict) or not isinstance(meta.get("path_name"), str):
                continue
            path_name = meta["path_name"]
            label = f"the {what} '{_printable(str(fqn), 60)}'"
            if path_name.startswith("custom_obj_"):
                check.code.append(f"load {label}, a TorchScript object, with torch's TorchScript unpickler")
            elif path_name.startswith("opaque_obj_"):
                check.code.append(f"unpickle {label}, an opaque object, with Python's pickle")
            elif meta.get("use_pickle"):
                members.append((folder + path_name, label))
    sample = SAMPLE_INPUTS.format(model)
    if files.has(sample):
        members.append((sample, "the sample inputs"))
    by_lower = {n.lower(): n for n in files.entries}  # torch's zip reader ignores case
    for member, label in members:
        member = by_lower.get(member.lower(), "")
        if not member:
            continue  # torch reports the missing member itself, without running anything
        problem, found = weights_only_refusal(files.read_bytes(member, MAX_PICKLE_BYTES))
        if not problem:
            continue
        library = found.rpartition(".")[0]
        if library and import_policy.decide(library, "").status == import_policy.ALLOWED:
            check.deferred.append(DeferredPickle(member, label, found, library))
        else:
            check.code.append(f"unpickle {label} ({member}), {problem}")


def weights_only_problem(data: bytes) -> str | None:
    """None when `data` loads under torch's weights-only unpickler; else what it would call when fully unpickled."""
    return weights_only_refusal(data)[0]


def weights_only_refusal(data: bytes) -> tuple[str | None, str]:
    """(None, "") when `data` loads under torch's weights-only unpickler; else (what it would call when fully
    unpickled, the refused class's dotted name or "")."""
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as e:
        found = re.search(r"(?:GLOBAL|global) ([\w.]+)", str(e))
        if found:
            return f"which calls {found.group(1)} when loaded", found.group(1)
        return "which holds more than tensors (torch's weights-only unpickler refuses it)", ""
    except Exception as e:  # noqa: BLE001  damaged bytes: torch's own load reports it, nothing runs
        if isinstance(e, (RuntimeError, EOFError, ValueError)):
            return None, ""
        return f"which fails to load ({first_line(e, 80)})", ""
    return None, ""
