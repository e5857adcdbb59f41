"""Latency of a callable (warm-up, then repeated runs: median and spread) and time per graph node.

On CUDA every timed region ends with `torch.cuda.synchronize()`, otherwise we would time kernel launches only.
Per-node time runs the lifted graph (`ep.graph_module`) through a `torch.fx.Interpreter`, so the node names are the
ones the viewer shows.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from pt2_viewer.core.jobs.schemas.run import Latency  # what `measure` returns: the result's own block


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def measure(fn: Callable[[], Any], device: str, warmup: int = 3, runs: int = 10,
            setup: Callable[[], None] | None = None) -> tuple[Latency, Any]:
    """Call `fn` `warmup` times, then time `runs` calls. Returns the latency and the last result. `setup` runs
    before each call, outside the timed region (fresh copies of the inputs: core/run/fresh_inputs.py)."""
    result = None
    for _ in range(warmup):
        if setup is not None:
            setup()
        result = fn()
    _sync(device)
    times: list[float] = []
    for _ in range(max(runs, 1)):
        if setup is not None:
            setup()
            _sync(device)
        t = time.perf_counter()
        result = fn()
        _sync(device)
        times.append(time.perf_counter() - t)
    q = statistics.quantiles(times, n=4) if len(times) >= 2 else [times[0]] * 3
    lat = Latency(warmup=warmup, runs=len(times), median_s=statistics.median(times), min_s=min(times),
                  max_s=max(times), iqr_s=q[2] - q[0])
    return lat, result


def lifted_args(ep: Any, flat_user_inputs: list[Any]) -> list[Any]:
    """The arguments of `ep.graph_module`: parameters, buffers and constants, then the user inputs, in order."""
    from torch.export.graph_signature import InputKind

    user = iter(flat_user_inputs)
    args: list[Any] = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(next(user))
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            args.append(ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target])
        elif spec.kind in (InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ):
            args.append(ep.constants[spec.target])
        else:
            raise ValueError(f"cannot time a program with a {spec.kind.name} input ({spec.arg.name})")
    return args


def node_times(ep: Any, flat_user_inputs: list[Any], device: str, runs: int = 3) -> dict[str, float]:
    """Seconds per call_function node (the least of `runs` runs), getitem nodes left out."""
    import operator

    import torch.fx

    best: dict[str, float] = {}

    class _Timer(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            if n.op != "call_function" or n.target is operator.getitem:
                return super().run_node(n)
            t = time.perf_counter()
            result = super().run_node(n)
            _sync(device)
            dt = time.perf_counter() - t
            best[n.name] = min(best.get(n.name, dt), dt)
            return result

    args = lifted_args(ep, flat_user_inputs)
    for _ in range(max(runs, 1)):
        _Timer(ep.graph_module).run(*args)
    return dict(sorted(best.items(), key=lambda kv: -kv[1]))
