"""Summaries of a program's outputs (dtype, shape, min, max, mean, NaN/Inf counts, a preview) and the largest
difference between two runs' outputs. Plain JSON-ready dicts: the run report goes to the GUI and to `--json`.
"""
from __future__ import annotations

import math
from typing import Any


def _num(x: float) -> float | str:
    """JSON has no NaN or Inf: spell them as strings."""
    return x if math.isfinite(x) else str(x)


def flat_outputs(value: Any) -> list[tuple[str, Any]]:
    """(path, leaf) for every leaf of a pytree of outputs: 'out[0]', 'out["logits"]', 'out.last_hidden_state'."""
    import torch.utils._pytree as pytree

    leaves, _ = pytree.tree_flatten_with_path(value)
    return [("out" + pytree.keystr(path), leaf) for path, leaf in leaves]


def summarise(name: str, value: Any, preview: int = 8) -> dict[str, Any]:
    import torch

    if not isinstance(value, torch.Tensor):
        return {"name": name, "kind": type(value).__name__, "value": value if isinstance(value, (int, float, bool,
                                                                                                 str)) else repr(value)}
    t = value.detach()
    out: dict[str, Any] = {"name": name, "kind": "tensor", "dtype": str(t.dtype).removeprefix("torch."),
                           "shape": list(t.shape), "device": str(t.device), "numel": t.numel()}
    if t.is_complex():
        t = t.abs()
    flat = t.reshape(-1)
    out["preview"] = [_num(v) if isinstance(v, float) else v for v in flat[:preview].tolist()]
    if t.numel() == 0:
        return out
    f = flat.double() if (t.is_floating_point() or t.dtype == torch.bool) else flat.to(torch.float64)
    finite = torch.isfinite(f)
    out["nan"] = int(torch.isnan(f).sum())
    out["inf"] = int(torch.isinf(f).sum())
    good = f[finite]
    if good.numel():
        out["min"] = float(good.min())
        out["max"] = float(good.max())
        out["mean"] = float(good.mean())
    return out


def max_difference(reference: Any, other: Any) -> dict[str, Any]:
    """Largest absolute and relative difference over all tensor outputs; `mismatch` names a structure problem."""
    import torch

    ref, oth = flat_outputs(reference), flat_outputs(other)
    if len(ref) != len(oth):
        return {"max_abs": None, "max_rel": None, "mismatch": f"{len(ref)} outputs vs {len(oth)}"}
    max_abs = max_rel = 0.0
    worst = ""
    for (name, a), (_, b) in zip(ref, oth):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            continue
        if a.shape != b.shape:
            return {"max_abs": None, "max_rel": None, "mismatch": f"{name}: shape {list(a.shape)} vs {list(b.shape)}"}
        if a.numel() == 0:
            continue
        a64, b64 = a.detach().cpu().double(), b.detach().cpu().double()
        diff = (a64 - b64).abs()
        diff = torch.where(torch.isnan(a64) & torch.isnan(b64), torch.zeros_like(diff), diff)
        d_abs = float(diff.max())
        d_rel = float((diff / a64.abs().clamp_min(1e-12)).max())
        if d_abs > max_abs:
            worst = name
        max_abs, max_rel = max(max_abs, d_abs), max(max_rel, d_rel)
    return {"max_abs": _num(max_abs), "max_rel": _num(max_rel), "worst_output": worst, "mismatch": None}
