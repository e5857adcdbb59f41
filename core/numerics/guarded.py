"""Running a program's or a candidate's steps for the numerics job so that a failure reads as a message, not a
traceback (`guarded`: out of memory, or what the step raised), and the values kept from a step are the step's own
(`copied`, `start_args`). Shared by the job (`job.py`) and AOTInductor op by op (`aoti.py`), which the job calls:
their own module, so neither imports the other back."""
from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.run.timing import lifted_args

Emit = Callable[[dict[str, Any]], None]


def progress(emit: Emit, stage: str, fraction: float, message: str) -> None:
    emit({"type": "progress", "stage": stage, "fraction": fraction, "message": message})


def guarded(what: str, fn: Callable[[], Any]) -> Any:
    import torch  # deferred: torch, imported only inside a worker job

    try:
        return fn()
    except JobFailure:
        raise
    except torch.OutOfMemoryError as e:
        raise JobFailure("oom", f"Out of memory running {what}: {first_line(e)}",
                         "Use smaller inputs (lower the dynamic dims) or a smaller memory budget.") from e
    except Exception as e:
        raise JobFailure("run", f"Running {what} raised {type(e).__name__}: {first_line(e)}",
                         "The log has the full traceback.", traceback.format_exc()) from e


def start_args(ep: Any, flat_user: list[Any]) -> list[Any]:
    """The lifted graph's arguments with buffers and user inputs cloned: a program that updates a buffer or one of
    its inputs in place (`x.add_(1)`; the training IR keeps such ops) must not change what the candidate starts
    from."""
    import torch  # deferred: torch, imported only inside a worker job
    from torch.export.graph_signature import InputKind  # deferred with torch

    args = lifted_args(ep, flat_user)
    return [a.clone() if spec.kind in (InputKind.BUFFER, InputKind.USER_INPUT) and isinstance(a, torch.Tensor) else a
            for spec, a in zip(ep.graph_signature.input_specs, args)]


def own_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A copy of the user's inputs for one side of a comparison: a program that changes its inputs in place
    (`ep.module()` writes the mutations back) would otherwise hand the other side changed inputs."""
    import torch.utils._pytree as pytree  # deferred: torch, imported only inside a worker job

    return pytree.tree_map(copied, (args, kwargs))


def copied(value: Any) -> Any:
    import torch  # deferred: torch, imported only inside a worker job

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return [copied(v) for v in value]
    return value


def guarded_steps(what: str, it: Any) -> Any:
    while True:
        item = guarded(what, lambda: next(it, None))
        if item is None:
            return
        yield item
