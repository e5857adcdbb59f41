"""The CUDA paths of the command line, each checked against torch (scripts/cuda_smoke.sh runs this; see there).

No GPU has run these paths in the test suite, whose machines have none, so this is the check to run first wherever
one is lent. Each step runs the real command (`python -m pt2_viewer ...`, which starts the real worker) and compares
what it printed with torch's own answer, computed here in this process on the same inputs:

1. `run P --device cuda --inputs generated --json` on the zoo's CNN and transformer: the outputs' shapes, dtypes and
   statistics equal those of `ep.module()` run by torch on CUDA with the same generated inputs
   (`core/run/inputs.generate_inputs`, the worker's own generator), and the result says it ran on CUDA;
2. `numerics P --candidate cuda --json`: compared node by node, no NaN/Inf the CPU reference lacks, and every output's
   error within what TF32 allows (torch's default for cuDNN convolutions);
3. `run P --device cuda --aoti PKG.pt2 --json` builds a CUDA AOTInductor package (its `difference` against eager is
   torch's own comparison), then `numerics P --candidate PKG.pt2 --allow-native --json` compares it with the CPU
   reference;
4. `run PKG.pt2 --allow-native --device cuda --node-times --source P --json`: torch.profiler's trace of the package
   holds CUDA kernels (Triton's or cuBLAS/cuDNN's), each attributed to program nodes.

Prints one line per step, PASS or FAIL with what differed; exits 0, 1 (a step failed) or 2 (no usable CUDA device).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROGRAMS = ("resnet18", "nn_transformer")  # the zoo's CNN and transformer (tests/zoo/)
TOLERANCE = 2e-2  # relative to the output's largest magnitude: TF32 convolutions and matmuls on CUDA


class StepFailed(Exception):
    pass


def cli(*args: str) -> dict[str, Any]:
    """Run `pt2-viewer ARGS --json` and return its JSON; a non-zero exit fails the step with its message."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pt2_viewer", *args, "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=540)
    print(f"    pt2-viewer {' '.join(args)}: exit {proc.returncode} in {time.perf_counter() - started:.1f} s")
    if proc.returncode != 0:
        raise StepFailed(f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-1500:]}")
    result: dict[str, Any] = json.loads(proc.stdout)
    if result.get("ok") is False:
        raise StepFailed(f"not ok: {result.get('error')}")
    return result


def close(a: float | None, b: float | None, scale: float) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOLERANCE * max(scale, 1e-6)


def torch_outputs(program: Path) -> list[Any]:
    """torch's own outputs of `ep.module()` on CUDA, on the inputs the worker generates (seed 0)."""
    import torch
    import torch.utils._pytree as pytree

    from pt2_viewer.core.run.inputs import generate_inputs

    ep = torch.export.load(str(program))
    inputs = generate_inputs(ep, seed=0)
    module = ep.module().to("cuda")
    args, kwargs = pytree.tree_map(lambda t: t.to("cuda") if isinstance(t, torch.Tensor) else t,
                                   (inputs.args, inputs.kwargs))
    with torch.no_grad():
        out = module(*args, **kwargs)
    return [t.detach().float().cpu() for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def check_run(program: Path) -> None:
    result = cli("run", str(program), "--device", "cuda", "--inputs", "generated", "--seed", "0", "--runs", "3")
    if not str(result.get("device", "")).startswith("cuda"):
        raise StepFailed(f"ran on {result.get('device')!r}, not CUDA")
    ours = [o for o in result["outputs"] if o.get("kind") == "tensor" or "shape" in o]
    theirs = torch_outputs(program)
    if len(ours) != len(theirs):
        raise StepFailed(f"{len(ours)} outputs, torch gives {len(theirs)}")
    for o, t in zip(ours, theirs, strict=True):
        if list(o["shape"]) != list(t.shape):
            raise StepFailed(f"{o['name']}: shape {o['shape']}, torch's {list(t.shape)}")
        scale = float(t.abs().max()) if t.numel() else 0.0
        for stat, value in (("min", float(t.min())), ("max", float(t.max())), ("mean", float(t.mean()))):
            if not close(o.get(stat), value, scale):
                raise StepFailed(f"{o['name']}: {stat} {o.get(stat)}, torch's {value}")


def check_numerics_cuda(program: Path) -> None:
    result = cli("numerics", str(program), "--candidate", "cuda")
    if not result.get("per_node") or not result.get("compared"):
        raise StepFailed(f"nothing compared node by node: {result.get('note')}")
    for row in result["nodes"]:
        if (row.get("nan") or row.get("inf")) and not (row.get("ref_nan") or row.get("ref_inf")):
            raise StepFailed(f"{row['node']}: NaN/Inf on CUDA only")
    print(f"    {result['compared']} nodes compared, first divergence: {result.get('first_divergence')}")


def check_aoti(program: Path, out: Path) -> Path:
    package = out / f"{program.stem}.cuda.aoti.pt2"
    result = cli("run", str(program), "--device", "cuda", "--aoti", str(package), "--allow-native")
    aoti = result.get("aoti") or {}
    difference = aoti.get("difference") or {}
    if not package.exists():
        raise StepFailed(f"no package at {package}")
    if difference.get("mismatch") or (difference.get("max_rel") or 0) > TOLERANCE:
        raise StepFailed(f"the CUDA package differs from eager: {difference}")
    numerics = cli("numerics", str(program), "--candidate", str(package), "--allow-native")
    first = numerics.get("first_divergence")
    print(f"    package {package.name}: {numerics.get('compared')} compared, first divergence {first}")
    worst = max((float(r["max_rel"]) for r in numerics.get("nodes", []) if isinstance(r.get("max_rel"), (int, float))),
                default=0.0)
    if worst > TOLERANCE and first is not None:
        raise StepFailed(f"the CUDA package diverges at {first}")
    return package


def check_profile(package: Path, program: Path) -> None:
    result = cli("run", str(package), "--allow-native", "--device", "cuda", "--node-times", "--source", str(program))
    kernels = result.get("kernel_times") or []
    if not kernels:
        raise StepFailed(f"no kernel in the profile: {result.get('kernel_times_note')}")
    named = [k for k in kernels if k.get("nodes")]
    print(f"    {len(kernels)} kernel calls profiled, {len(named)} attributed to nodes; e.g. "
          f"{[k.get('kernel') for k in kernels[:3]]}")
    if not named:
        raise StepFailed("no profiled kernel is attributed to a program node")


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    import torch

    if not torch.cuda.is_available():
        print(f"cuda_smoke: no usable CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda})")
        return 2
    print(f"cuda_smoke: torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    from tests.zoo.cache import program_by_id, zoo_path

    failed: list[str] = []

    def step(name: str, check: Any, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            value = check(*args)
        except StepFailed as e:
            print(f"FAIL {name} ({time.perf_counter() - started:.0f} s): {e}")
            failed.append(name)
            return None
        print(f"PASS {name} ({time.perf_counter() - started:.0f} s)")
        return value

    for program_id in PROGRAMS:
        program = zoo_path(program_by_id(program_id))
        step(f"run --device cuda {program_id}", check_run, program)
        step(f"numerics --candidate cuda {program_id}", check_numerics_cuda, program)
    cnn = zoo_path(program_by_id(PROGRAMS[0]))
    package = step(f"numerics --candidate PACKAGE (CUDA AOTInductor) {PROGRAMS[0]}", check_aoti, cnn, out)
    if package is not None:
        step(f"profile of CUDA kernels {PROGRAMS[0]}", check_profile, package, cnn)
    print(f"cuda_smoke: {'FAILED: ' + ', '.join(failed) if failed else 'all passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
