"""What a program became, run as the numerics job's candidate: a `.pte`'s first method or an AOTInductor package, on
the inputs the reference ran on. Its own module because it imports both run jobs, which import `artifact_run.py`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.schemas.numerics import NumericsRequest
from pt2_viewer.core.run.aoti_job import load_package
from pt2_viewer.core.run.pte_job import load_method, method_names


def candidate_outputs(kind: str, candidate: str | Path, args: tuple[Any, ...], kwargs: dict[str, Any],
                      request: NumericsRequest, log: list[str]) -> Any:
    """What a `.pte` (`kind` "pte": its first method, on the flattened inputs) or an AOTInductor package (after
    --allow-native) returns on the inputs the numerics job gave its reference."""
    import torch.utils._pytree as pytree  # deferred: torch, only once a candidate runs

    path = Path(candidate)
    if kind == "pte":
        names = method_names(path)
        method = load_method(path, request.method or (names[0] if names else "forward"), log)
        return method.execute(pytree.tree_leaves((args, kwargs)))
    return load_package(path, request)(*args, **kwargs)
