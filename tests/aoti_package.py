"""A real AOTInductor package for the tests: a tiny model compiled and packaged by this machine's torch
(`torch._inductor.aoti_compile_and_package`), cached like the other test programs (tests/programs.py).

Compiling takes tens of seconds (a C++ build), so the package is built once per torch version and version of its
build script, per user (tests/fixture_root.py: no test reads a path of this checkout back from it), under
`<per-user fixtures>/aoti/<torch version>/aoti-<hash of the script>/tiny.aoti.pt2`. It is built in a child process:
the test process need not import inductor, and a failed build leaves no half-built file.

Use `from tests.aoti_package import aoti_package` for the session fixture (the package's path).

`traced_package()` is a package built for op-by-op work, with its source program beside it: a tiny program with a
dynamic batch, a matmul fallback and a fused kernel with two outputs, compiled with torch's provenance tracking
(`kernel_information.json`), kernel profiling (`cpp.enable_kernel_profile`) and the intermediate-value printer
saving each kernel's tensors. Cached under its own script's hash.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixture_root import SHARED_FIXTURE_ROOT

REPO_ROOT = Path(__file__).resolve().parent.parent

BUILD = """
import os, sys, tempfile, torch

class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.linear(x))

torch.manual_seed(0)
ep = torch.export.export(Tiny().eval(), (torch.randn(2, 4),))
out = sys.argv[1]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), suffix=".pt2")
os.close(fd)
torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
os.replace(tmp, out)
"""


def _built(script: str, names: tuple[str, ...]) -> list[Path]:
    """The files `script` writes (its arguments, in order), cached under the script's hash: built in a child process
    first if any is missing; RuntimeError with torch's message if they cannot be built."""
    digest = hashlib.sha256(script.encode()).hexdigest()[:12]
    directory = SHARED_FIXTURE_ROOT / "aoti" / importlib.metadata.version("torch") / f"aoti-{digest}"
    paths = [directory / name for name in names]
    if all(p.exists() for p in paths):
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True, text=True,
                         timeout=900)
    if run.returncode != 0 or not all(p.exists() for p in paths):
        raise RuntimeError(f"AOTInductor could not build the test package: {run.stderr.strip()[-2000:]}")
    return paths


def package_path() -> Path:
    """The cached package, built first if needed; RuntimeError with torch's message if it cannot be built."""
    return _built(BUILD, ("tiny.aoti.pt2",))[0]


@pytest.fixture(scope="session")
def aoti_package() -> Path:
    return package_path()


TRACED = """
import os, sys, tempfile, torch

class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x):
        y = torch.relu(self.linear(x))
        return y * 2 + 1, torch.sin(x).sum(dim=1)

torch.manual_seed(0)
batch = torch.export.Dim("batch", min=2, max=64)
ep = torch.export.export(Small().eval(), (torch.randn(3, 4),), dynamic_shapes=({0: batch},))
source, out = sys.argv[1], sys.argv[2]
torch.export.save(ep, source)
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), suffix=".pt2")
os.close(fd)
torch._inductor.aoti_compile_and_package(ep, package_path=tmp, inductor_configs={
    "trace.provenance_tracking_level": 1, "cpp.enable_kernel_profile": True,
    "aot_inductor.debug_intermediate_value_printer": "1"})
os.replace(tmp, out)
"""


def traced_package() -> tuple[Path, Path]:
    """(the source .pt2, its package built with provenance, kernel profiling and saved intermediate values)."""
    source, path = _built(TRACED, ("small.pt2", "small.traced.aoti.pt2"))
    return source, path


def traced_package_with_program() -> Path:
    """The traced package's compiled files packaged again with its source program (`package_pt2` with both), so the
    window shows the program's graph beside the compiled code. No compile: the files are copied."""
    import tempfile
    import zipfile

    import torch
    from torch.export.pt2_archive._package import package_pt2

    source, package = traced_package()
    path = package.with_name("small.traced.program.aoti.pt2")
    if path.exists():
        return path
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(package) as z:
        files = []
        for name in z.namelist():
            if "/data/aotinductor/model/" in name and not name.endswith("/"):
                target = Path(folder) / Path(name).name
                target.write_bytes(z.read(name))
                files.append(str(target))
        tmp = path.with_name("building." + path.name)
        package_pt2(str(tmp), exported_programs={"model": torch.export.load(str(source))},
                    aoti_files={"model": files})
        tmp.replace(path)
    return path
