"""A real AOTInductor package for the tests: a tiny model compiled and packaged by this machine's torch
(`torch._inductor.aoti_compile_and_package`), cached like the other test programs (tests/programs.py).

Compiling takes tens of seconds (a C++ build), so the package is built once per torch version and version of this
file, under `.cache/test-programs/<torch version>/aoti-<hash of this file>/tiny.aoti.pt2`. It is built in a child
process: the test process need not import inductor, and a failed build leaves no half-built file.

Use `from tests.aoti_package import aoti_package` for the session fixture (the package's path).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

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


def package_path() -> Path:
    """The cached package, built first if needed; RuntimeError with torch's message if it cannot be built."""
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    directory = REPO_ROOT / ".cache" / "test-programs" / importlib.metadata.version("torch") / f"aoti-{digest}"
    path = directory / "tiny.aoti.pt2"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([sys.executable, "-c", BUILD, str(path)], capture_output=True, text=True, timeout=900)
    if run.returncode != 0 or not path.exists():
        raise RuntimeError(f"AOTInductor could not build the test package: {run.stderr.strip()[-2000:]}")
    return path


@pytest.fixture(scope="session")
def aoti_package() -> Path:
    return package_path()
