"""Profiles of the zoo's CNN compiled by torch.compile on CPU, for the kernel-provenance path of the profile importer
(issue 41): the program's `ep.module()` compiled with `cpp.enable_kernel_profile` on (its CPU kernels record
themselves in torch.profiler), run once, then profiled for one call and exported with `prof.export_chrome_trace`,
with `TORCH_TRACE` set on a cold Inductor cache (a cache hit logs no provenance).

`compiled_profile()` is a folder built once per torch version and script (tests/programs.py `cached_file`):
- `provenance/`: `trace.json` and `torch_trace/` of a run with `trace.provenance_tracking_level = 1`;
- `plain/`: the same without provenance tracking (its TORCH_TRACE has no `inductor_provenance_tracking_node_mappings`).
`aoti_profile()` profiles tests/aoti_package.py's package built with provenance and kernel profiling.
The script runs in a child process (TORCH_TRACE is read when torch starts), the same way a user runs theirs."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.aoti_package import traced_package
from tests.profile_programs import program_path
from tests.programs import cache_dir, cached_file

PROGRAM = "resnet18"  # the zoo's CNN

SCRIPT = '''\
import sys

import torch
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile

program, out, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
inductor_config.cpp.enable_kernel_profile = True
inductor_config.trace.provenance_tracking_level = level
ep = torch.export.load(program)
args, kwargs = ep.example_inputs
compiled = torch.compile(ep.module())
with torch.no_grad():
    compiled(*args, **kwargs)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        compiled(*args, **kwargs)
prof.export_chrome_trace(out)
'''


def _run(program: Path, folder: Path, level: int) -> None:
    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCH_TRACE": str(folder / "torch_trace"), "TORCHINDUCTOR_CACHE_DIR": cache,
               "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(program), str(folder / "trace.json"), str(level)],
                              env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the compiled profile's script failed: {done.stderr.strip().splitlines()[-1:]}")


def compiled_profile() -> Path:
    """The folder of the CNN's compiled profiles: `provenance/` and `plain/`, each `trace.json` and `torch_trace/`."""
    program = program_path(PROGRAM)

    def build(tmp: Path) -> None:
        _run(program, tmp / "provenance", 1)
        _run(program, tmp / "plain", 0)

    return cached_file(cache_dir(compiled_profile, SCRIPT) / f"{PROGRAM}.compiled", build)


AOTI_SCRIPT = '''\
import sys

import torch
from torch.profiler import ProfilerActivity, profile

package, out = sys.argv[1], sys.argv[2]
model = torch._inductor.aoti_load_package(package)
x = torch.randn(3, 4)
model(x)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    model(x)
prof.export_chrome_trace(out)
'''


def aoti_profile() -> Path:
    """`trace.json`: one call of tests/aoti_package.py's traced package (provenance and kernel profiling on), run in
    a child process whose working folder takes the tensors its intermediate-value printer saves."""
    _, package = traced_package()

    def build(tmp: Path) -> None:
        tmp.mkdir()
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run([sys.executable, "-c", AOTI_SCRIPT, str(package), str(tmp / "trace.json")],
                                  cwd=cwd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"},
                                  capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"the package's profile script failed: {done.stderr.strip().splitlines()[-1:]}")

    return cached_file(cache_dir(aoti_profile, AOTI_SCRIPT) / "small.aoti.profile", build)


def prebuild_fixtures() -> None:
    """`make fixtures`: the compiled profiles."""
    compiled_profile()
    aoti_profile()
