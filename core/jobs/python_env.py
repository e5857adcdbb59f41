"""Which Python runs the torch jobs, and what it has: torch's version, CUDA devices, whether transformers imports.

The GUI never imports torch, and the PyInstaller bundle has none, so every torch job runs as `PYTHON -m
pt2_viewer.core.worker` with a Python chosen here, first match wins:

1. the environment variable `PT2V_WORKER_PYTHON` (for a CUDA environment, a conda env, a bundle);
2. the Python chosen in the window's Preferences (the app calls `set_preferred`; core never reads Qt settings);
3. the GUI's own Python (`sys.executable`), or in a bundle, where that is the bundle's program, `python3` on PATH.

The worker may also be a Python on another machine, `ssh://[user@]host[:port]/ABS/PATH/python`
(core/jobs/remote/). `choose_worker(flag)` picks between all of them: a command's `--worker`, then `PT2V_WORKER`,
then `PT2V_WORKER_PYTHON` (a local Python, the same as `--worker PATH`), then Preferences, then the default.

Models exported from other libraries need those libraries in that Python (a transformers model's outputs are pytree
types from transformers; a custom op needs its library), which is why the choice is the user's. `probe_python` asks a
Python what it has in a subprocess (importing torch takes seconds); `probe_command` and `parse_probe` let a GUI run
the same probe without blocking. `missing_torch_message` is what a job says when its Python has no torch.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.platform import install

WORKER_PYTHON_ENV = "PT2V_WORKER_PYTHON"
SAFE_PATH_ENV = "PYTHONSAFEPATH"  # `python -P`: no working directory on sys.path (Python 3.11 and later)
WORKER_ENV = "PT2V_WORKER"  # a local Python or an ssh:// worker; --worker wins over it
FROM_FLAG = "flag"
FROM_ENV = "environment"
FROM_PREFERENCES = "preferences"
FROM_DEFAULT = "default"
PROBE_TIMEOUT_S = 120.0
HOW_TO_FIX = ("Choose a Python that has torch in File > Preferences, or set PT2V_WORKER_PYTHON to one "
              "(e.g. a venv's bin/python after `pip install torch`).")

_preferred: str | None = None
_preferred_scratch: str | None = None  # the scratch folder on the server chosen in Preferences

# Runs in the probed Python: stdlib only until torch, one JSON object on the last line of stdout.
PROBE_SCRIPT = r"""
import json, platform, sys
info = {"python": sys.executable, "python_version": platform.python_version(),
        "safe_path": bool(getattr(sys.flags, "safe_path", False))}
try:
    import torch
except BaseException as e:
    info["torch_error"] = f"{type(e).__name__}: {e}"
else:
    info["torch_version"] = torch.__version__
    info["torch_cuda"] = torch.version.cuda
    try:
        info["cuda_devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except BaseException as e:
        info["cuda_devices"] = []
        info["cuda_error"] = f"{type(e).__name__}: {e}"
    try:
        import transformers
        import transformers.modeling_outputs
        info["transformers_version"] = transformers.__version__
    except BaseException as e:
        info["transformers_error"] = f"{type(e).__name__}: {e}"
print(json.dumps(info))
"""


@dataclass(frozen=True)
class WorkerPython:
    """The Python that runs torch jobs and why it was chosen (`FROM_ENV`, `FROM_PREFERENCES` or `FROM_DEFAULT`)."""

    path: str
    source: str

    def describe(self) -> str:
        why = {FROM_ENV: f"set by {WORKER_PYTHON_ENV}", FROM_PREFERENCES: "chosen in Preferences",
               FROM_DEFAULT: "the default", FROM_FLAG: "given with --worker"}[self.source]
        return f"{self.path} ({why})"

    @property
    def remote(self) -> bool:
        """An ssh:// worker on another machine (core/jobs/remote/target.py), not a local path."""
        return self.path.strip().startswith("ssh://")


@dataclass
class PythonProbe:
    """What a Python has, as far as torch jobs care. `error` says in one sentence why it cannot run them."""

    python: str
    ok: bool = False
    python_version: str | None = None
    torch_version: str | None = None
    torch_cuda: str | None = None  # the CUDA version torch was built for; None for a CPU build
    cuda_devices: list[str] = field(default_factory=list)
    transformers_version: str | None = None
    transformers_error: str | None = None
    safe_path: bool | None = None  # PYTHONSAFEPATH honoured (3.11+): the working directory is off sys.path
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PythonProbe:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def summary_lines(self) -> list[str]:
        """What the Preferences dialog shows: one line per fact."""
        if not self.ok:
            return [self.error or f"{self.python} cannot run torch jobs."]
        cuda = (f"{len(self.cuda_devices)} CUDA device(s): {', '.join(self.cuda_devices)}" if self.cuda_devices
                else "no CUDA device" + ("" if self.torch_cuda else " (a CPU-only build of torch)"))
        hf = (f"transformers {self.transformers_version}" if self.transformers_version
              else f"transformers does not import ({self.transformers_error or 'not installed'}): programs "
                   "exported from HuggingFace models will not load")
        lines = [f"Python {self.python_version}", f"torch {self.torch_version}", cuda, hf]
        if self.safe_path is False:
            lines.append("Python older than 3.11: the working directory stays on the import path (PYTHONSAFEPATH is "
                         "not honoured); the viewer still never imports a program's modules from it")
        return lines


def set_preferred(path: str | None, scratch: str | None = None) -> None:
    """The worker chosen in the window's Preferences: a local Python or an ssh:// URL (None or "" for the default),
    and for a remote one the scratch folder on the server; the environment variables still win."""
    global _preferred, _preferred_scratch
    text = path.strip() if path else ""
    _preferred = (text if text.startswith("ssh://") else os.path.expanduser(text)) if text else None
    _preferred_scratch = scratch.strip() if scratch and scratch.strip() else None


def preferred_scratch() -> str | None:
    return _preferred_scratch


def preferred() -> str | None:
    return _preferred


def frozen() -> bool:
    """True inside the PyInstaller bundle, where `sys.executable` is the bundle's program, not a Python."""
    return bool(getattr(sys, "frozen", False))


def default_python() -> str:
    if frozen():
        return shutil.which("python3") or "python3"
    return sys.executable


def choose_worker_python(environ: dict[str, str] | None = None) -> WorkerPython:
    """The local Python for a job started here: PT2V_WORKER_PYTHON, else the Preferences choice when it is local,
    else the default (see the module's docstring). `choose_worker` also knows remote workers."""
    env = os.environ if environ is None else environ
    if env.get(WORKER_PYTHON_ENV, "").strip():
        return WorkerPython(os.path.expanduser(env[WORKER_PYTHON_ENV].strip()), FROM_ENV)
    if _preferred and not _preferred.startswith("ssh://"):
        return WorkerPython(_preferred, FROM_PREFERENCES)
    return WorkerPython(default_python(), FROM_DEFAULT)


def choose_worker(flag: str | None = None, environ: dict[str, str] | None = None) -> WorkerPython:
    """Which worker runs a job, local Python or ssh:// URL: `--worker`, then PT2V_WORKER, then PT2V_WORKER_PYTHON,
    then Preferences, then the default. `.remote` says whether it is on another machine."""
    env = os.environ if environ is None else environ
    if flag and flag.strip():
        text = flag.strip()
        return WorkerPython(text if text.startswith("ssh://") else os.path.expanduser(text), FROM_FLAG)
    if env.get(WORKER_ENV, "").strip():
        text = env[WORKER_ENV].strip()
        return WorkerPython(text if text.startswith("ssh://") else os.path.expanduser(text), FROM_ENV)
    if env.get(WORKER_PYTHON_ENV, "").strip() or not _preferred:
        return choose_worker_python(environ)
    return WorkerPython(_preferred, FROM_PREFERENCES)


def source_root() -> Path:
    """Where the worker imports `pt2_viewer` from: the folder holding the package, or the bundle's plain sources
    (`_internal/pysrc`)."""
    if frozen():
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / "pysrc"
    return install.package_parent()


def worker_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a worker (or probe) process: `pt2_viewer` on PYTHONPATH, and in a bundle the system's
    LD_LIBRARY_PATH back (the PyInstaller bootloader points it at the bundle's libraries; torch wants its own)."""
    env = dict(os.environ if base is None else base)
    if frozen():
        original = env.pop("LD_LIBRARY_PATH_ORIG", None)
        env.pop("LD_LIBRARY_PATH", None)
        if original:
            env["LD_LIBRARY_PATH"] = original
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source_root()), env.get("PYTHONPATH", "")) if p)
    # The working directory (and with it a folder named like a library beside a downloaded .pt2) is not on the
    # worker's import path: Python 3.11+ reads this; core/jobs/import_policy.py also never searches it.
    env[SAFE_PATH_ENV] = "1"
    return env


def missing_torch_message(python: str) -> str:
    return f"The Python that runs torch jobs, {python}, has no torch. {HOW_TO_FIX}"


def probe_command(python: str) -> list[str]:
    return [python, "-c", PROBE_SCRIPT]


def parse_probe(python: str, returncode: int | None, stdout: str, stderr: str) -> PythonProbe:
    """Turn the probe's exit status and output into a `PythonProbe`, with a one-sentence error when it failed."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    try:
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
        why = f": {last}" if last else f" (exit status {returncode})"
        return PythonProbe(python, error=f"{python} did not answer as a Python 3 would{why}. {HOW_TO_FIX}")
    probe = PythonProbe.from_json({**data, "python": python})
    if data.get("torch_error"):
        probe.error = f"{missing_torch_message(python)} ({data['torch_error']})"
    else:
        probe.ok = probe.torch_version is not None
    return probe


def probe_python(python: str, timeout_s: float = PROBE_TIMEOUT_S) -> PythonProbe:
    """Ask `python` what it has (blocking, seconds: it imports torch and transformers). Never raises."""
    import subprocess  # deferred: the window reads the saved choice at start-up without probing anything

    try:
        done = subprocess.run(probe_command(python), capture_output=True, text=True, timeout=timeout_s,
                              env=worker_environment(), stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        return PythonProbe(python, error=f"{python} does not exist. {HOW_TO_FIX}")
    except PermissionError:
        return PythonProbe(python, error=f"{python} cannot be run (not an executable). {HOW_TO_FIX}")
    except OSError as e:
        return PythonProbe(python, error=f"{python} cannot be run: {e.strerror or e}. {HOW_TO_FIX}")
    except subprocess.TimeoutExpired:
        return PythonProbe(python, error=f"{python} did not answer within {timeout_s:g} s (importing torch).")
    return parse_probe(python, done.returncode, done.stdout, done.stderr)
