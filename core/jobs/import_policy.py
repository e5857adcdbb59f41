"""Which modules a `.pt2` may make the worker import, decided without importing anything.

A program names Python modules: its pytree types (`transformers.modeling_outputs.SequenceClassifierOutput`), the
libraries that register its op namespaces (`transformers::`, `quantized_decomposed::`), the classes its pickled
tensor subclasses are made of (`torchao.quantization.Int8Tensor`). torch needs them imported before it can load the
program. Importing an installed library runs that library's code, not the file's; so the trust question is *which*
code a name resolves to:

- a module of one of the `ALLOWED_DISTRIBUTIONS`, installed in the worker Python's own site-packages and listed in
  that distribution's RECORD, is imported without asking (and said in the job's log and result);
- any other module found on the import path (Python's standard library, a PYTHONPATH folder, a `.pth` entry, a
  namespace package's portion outside site-packages) is imported only with the user's consent: `--allow-import
  MODULE`, the window's question, or `--trust`;
- a module found nowhere is missing: the program needs a package installed (`pip install ...`).

`resolve` walks the import path the way Python's path finder does (regular packages, modules, namespace packages),
reading folders and the distributions' metadata only: `importlib.util.find_spec("a.b")` would import `a`. The working
directory, the program's folder and `""` are never searched, and `import_module` imports with them off `sys.path`
(the worker is also started with PYTHONSAFEPATH, see core/jobs/python_env.py).
"""
from __future__ import annotations

import csv
import importlib
import importlib.machinery
import importlib.metadata
import os
import posixpath
import site
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# The one list of libraries whose modules a program may import without asking, and why each is on it.
ALLOWED_DISTRIBUTIONS: dict[str, str] = {
    "torch": "the loader itself (quantized_decomposed:: and other op libraries that ship with torch)",
    "transformers": "HuggingFace models' output types (ModelOutput subclasses) and the transformers:: MoE ops",
    "diffusers": "diffusion pipelines' output types",
    "torchvision": "the torchvision:: ops (nms, roi_align) and its model outputs",
    "torchaudio": "the torchaudio:: ops",
    "torchao": "the torchao:: ops and its quantized tensor subclasses (int8/int4 weights)",
    "timm": "vision models' types",
    "executorch": "the ExecuTorch op libraries (quantized kernels, llama ops)",
    "peft": "adapter (LoRA) models' types",
}
ALLOWED_REASON = ("these libraries register the pytree types, op namespaces and tensor subclasses that exported "
                  "programs name; importing one that is installed in the worker's own Python runs that library's "
                  "code, never code from the file")
# Op namespace -> the modules that register it, as a torch user would import them by hand. A namespace not listed
# is looked up as a module of its own name (a custom-op library named after its package).
NAMESPACE_MODULES: dict[str, tuple[str, ...]] = {
    "transformers": ("transformers.integrations.moe",),
    "quantized_decomposed": ("torch.ao.quantization.fx._decomposed",),
    "torchvision": ("torchvision",),
    "torchao": ("torchao",),
    "torchaudio": ("torchaudio",),
    "quantized_executorch": ("executorch.kernels.quantized",),
    "llama": ("executorch.extension.llm.custom_ops.custom_ops",),
}

ALLOWED = "allowed"  # an installed module of an allowed distribution: imported without asking
USER = "user"  # the user allowed it (--allow-import, the window's question, --trust)
CONSENT = "consent"  # found, but not in an allowed distribution's files: ask first
MISSING = "missing"  # not installed in the worker's Python
LOADED = "loaded"  # already imported in this process: importing it again runs nothing


@dataclass(frozen=True)
class Resolution:
    """Where the import system would find `module`: the files importing it would run, and who installed them."""

    module: str
    found: bool
    files: tuple[Path, ...] = ()  # the __init__.py of each package not yet imported, then the module's own file
    where: str = ""  # "site-packages", "the standard library", or the folder it is in
    distribution: str | None = None  # the distribution whose RECORD lists every one of `files`
    version: str | None = None
    loaded: bool = False

    @property
    def allowed(self) -> bool:
        return self.found and self.distribution in ALLOWED_DISTRIBUTIONS


@dataclass(frozen=True)
class ImportDecision:
    module: str
    reason: str  # what the program needs it for, e.g. "for SequenceClassifierOutput"
    status: str  # ALLOWED, USER, CONSENT, MISSING or LOADED
    resolution: Resolution

    def consent_item(self) -> str:
        where = f", from {self.resolution.where}" if self.resolution.where else ""
        return f"import the module '{self.module}' ({self.reason}{where})"

    def log_line(self) -> str:
        r = self.resolution
        source = f"{r.distribution} {r.version}" if r.distribution else r.where or "an allowed module"
        return f"imported {self.module} ({source}) {self.reason}"

    def to_json(self) -> dict[str, str | None]:
        return {"module": self.module, "distribution": self.resolution.distribution,
                "version": self.resolution.version, "reason": self.reason, "status": self.status}


def pip_name(module: str) -> str:
    """The package to `pip install` for a module (the top-level name; the allowed ones are spelled the same)."""
    return module.split(".")[0].replace("_", "-")


# --- where things are --------------------------------------------------------------------------------------------
@cache
def site_dirs() -> tuple[Path, ...]:
    """The worker Python's own site-packages folders (resolved): where installed distributions live."""
    found: list[str] = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    found += [paths.get("purelib", ""), paths.get("platlib", "")]
    return tuple(dict.fromkeys(Path(p).resolve() for p in found if p))


def _stdlib_dirs() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    return tuple(Path(p).resolve() for p in (paths.get("stdlib"), paths.get("platstdlib")) if p)


def unsafe_dirs(*extra: str | os.PathLike[str]) -> set[Path]:
    """Folders never searched: the working directory and the given ones (the program's folder)."""
    found = {Path.cwd().resolve()}
    for p in extra:
        try:
            found.add(Path(p).resolve())
        except OSError:
            continue
    return found


def search_path(exclude: set[Path]) -> list[Path]:
    """`sys.path` as the worker should see it: folders only, without "" and the excluded ones."""
    result: list[Path] = []
    for entry in sys.path:
        if not entry or entry == ".":
            continue
        try:
            p = Path(entry).resolve()
        except OSError:
            continue
        if p not in exclude and p.is_dir() and p not in result:
            result.append(p)
    return result


def _find(name: str, folders: Iterable[Path]) -> tuple[Path | None, list[Path]]:
    """Python's path finder, for one name: (the file it would run, the package folders) or (None, namespace
    portions) for a namespace package, or (None, []) when not found."""
    suffixes = importlib.machinery.all_suffixes()
    portions: list[Path] = []
    for folder in folders:
        package = folder / name
        if package.is_dir():
            init = next((package / f"__init__{s}" for s in suffixes if (package / f"__init__{s}").is_file()), None)
            if init is not None:
                return init, [package]
        module = next((folder / f"{name}{s}" for s in suffixes if (folder / f"{name}{s}").is_file()), None)
        if module is not None:
            return module, []
        if package.is_dir():
            portions.append(package)
    return None, portions


def resolve(module: str, exclude: set[Path] | None = None) -> Resolution:
    """What importing `module` would run, found as Python would but without importing anything."""
    parts = module.split(".")
    if not module or not all(p.isidentifier() for p in parts):
        return Resolution(module, found=False)
    if module in sys.modules:
        return _with_owner(Resolution(module, found=True, loaded=True), sys.modules[module])
    exclude = unsafe_dirs() if exclude is None else exclude
    files: list[Path] = []
    folders: list[Path] | None = None
    for i, part in enumerate(parts):
        name = ".".join(parts[: i + 1])
        loaded = sys.modules.get(name)
        if loaded is not None:
            folders = [Path(p) for p in getattr(loaded, "__path__", [])]
            continue
        if folders is None:
            if name in sys.builtin_module_names:
                return Resolution(module, found=i == len(parts) - 1, where="the standard library")
            search = search_path(exclude)
        else:
            search = folders
        origin, folders = _find(part, search)
        if origin is None and not folders:
            return Resolution(module, found=False)
        if origin is not None:
            files.append(origin)
        if i < len(parts) - 1 and origin is not None and not folders:
            return Resolution(module, found=False)  # a plain module has no submodules
    if not files:  # a namespace package: nothing runs, but nothing of a distribution's either
        return Resolution(module, found=True, where=str(folders[0].parent) if folders else "")
    return _owned(Resolution(module, found=True, files=tuple(files)))


def _owned(r: Resolution) -> Resolution:
    """Fill in the distribution that installed every file `r` would run, when one did (in site-packages)."""
    sites = site_dirs()
    first = r.files[0].resolve()
    site_dir = next((s for s in sites if first.is_relative_to(s)), None)
    if site_dir is None:
        std = next((s for s in _stdlib_dirs() if first.is_relative_to(s)), None)
        return Resolution(r.module, True, r.files, "the standard library" if std else str(r.files[0].parent))
    where = "site-packages"
    for dist_name, version, record in _distributions_of(site_dir, r.module.split(".")[0]):
        if all(_relative(f, site_dir) in record for f in r.files):
            return Resolution(r.module, True, r.files, where, dist_name, version)
    return Resolution(r.module, True, r.files, f"{site_dir} (in no distribution's files)")


def _with_owner(r: Resolution, mod: object) -> Resolution:
    file = getattr(mod, "__file__", None)
    if not file:
        return r
    owned = _owned(Resolution(r.module, True, (Path(file),)))
    return Resolution(r.module, True, (), owned.where, owned.distribution, owned.version, loaded=True)


def _relative(path: Path, base: Path) -> str:
    return path.resolve().relative_to(base).as_posix()


@cache
def _distributions_of(site_dir: Path, top: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """The distributions in `site_dir` that install the top-level name `top`: (name, version, RECORD paths, relative
    to `site_dir`). Read from each `*.dist-info` there, never from a folder on `sys.path` the file could point to."""
    found = []
    for dist in importlib.metadata.distributions(path=[str(site_dir)]):
        tops = (dist.read_text("top_level.txt") or "").split()
        if tops and top not in tops:
            continue
        record = frozenset(posixpath.normpath(row[0]) for row in csv.reader((dist.read_text("RECORD") or "")
                                                                            .splitlines()) if row)
        if not tops and not any(p.split("/")[0] in (top, f"{top}.py") or p.startswith(f"{top}.") for p in record):
            continue
        name = dist.metadata["Name"] or ""
        found.append((name.lower().replace("_", "-"), dist.version, record))
    return tuple(found)


# --- deciding and importing ---------------------------------------------------------------------------------------
def user_allows(module: str, allowed: Iterable[str]) -> bool:
    """`--allow-import foo` allows `foo` and its submodules."""
    return any(module == a or module.startswith(a + ".") for a in allowed)


def decide(module: str, reason: str, allowed: Iterable[str] = (), trust_all: bool = False,
           exclude: set[Path] | None = None) -> ImportDecision:
    r = resolve(module, exclude)
    if r.loaded:
        status = LOADED
    elif not r.found:
        status = MISSING
    elif r.allowed:
        status = ALLOWED
    elif trust_all or user_allows(module, allowed):
        status = USER
    else:
        status = CONSENT
    return ImportDecision(module, reason, status, r)


@contextmanager
def safe_sys_path(exclude: set[Path]) -> Iterator[None]:
    """While importing: `sys.path` without "", the working directory and the excluded folders."""
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if p and p != "." and _resolved(p) not in exclude]
    try:
        yield
    finally:
        sys.path[:] = saved


def _resolved(entry: str) -> Path | None:
    try:
        return Path(entry).resolve()
    except OSError:
        return None


def import_module(decision: ImportDecision, exclude: set[Path]) -> None:
    """Import a module the policy allowed, with the unsafe folders off the import path."""
    with safe_sys_path(exclude):
        importlib.import_module(decision.module)


def import_lines(imports: list[dict[str, Any]] | None) -> list[str]:
    """What a job's result says it imported (its `imports`), one line each, as its log says it ("imported
    transformers.modeling_outputs (transformers 5.24.0) for SequenceClassifierOutput"), for the window to show."""
    lines = []
    for d in imports or []:
        if isinstance(d, dict) and isinstance(d.get("module"), str):
            source = f" ({d.get('distribution')} {d.get('version')})" if d.get("distribution") else ""
            lines.append(f"imported {d['module']}{source} {d.get('reason') or ''}".rstrip())
    return lines
