"""Summaries of a program's outputs (dtype, layout, shape, min, max, mean, NaN/Inf counts, a preview) and the largest
difference between two runs' outputs. Plain JSON-ready dicts: the run report goes to the GUI and to `--json`.

Outputs come in any pytree torch can flatten, including types registered without a keys function (diffusers'
`UNet2DConditionOutput`): their leaves are named by index. Tensors come in any layout torch returns (strided, sparse
COO/CSR/CSC/BSR/BSC, quantized, MKL-DNN): each summary says its layout, and its statistics are those of the values
the tensor stands for (a sparse tensor's implicit zeros included), computed without making a huge sparse tensor dense.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

DENSE_PREVIEW_LIMIT = 1 << 22  # a sparse tensor up to this many elements is made dense for its preview


def _num(x: float) -> float | str:
    """JSON has no NaN or Inf: spell them as strings."""
    return x if math.isfinite(x) else str(x)


def flat_outputs(value: Any) -> list[tuple[str, Any]]:
    """(path, leaf) for every leaf of a pytree of outputs: 'out[0]', 'out["logits"]', 'out.last_hidden_state'; a
    node whose type was registered without a keys function names its children by index ('out.sample' where torch
    knows the key, 'out[0]' where it does not)."""
    import torch.utils._pytree as pytree

    try:
        leaves, _ = pytree.tree_flatten_with_path(value)
    except ValueError:  # "Did not find a flatten_with_keys_fn for type ...": name by index where no key exists
        return [("out" + pytree.keystr(path), leaf) for path, leaf in _leaves_with_path(value, ())]
    return [("out" + pytree.keystr(path), leaf) for path, leaf in leaves]


def _leaves_with_path(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """What `tree_flatten_with_path` gives, also through nodes that have no `flatten_with_keys_fn`: the same leaves,
    in the same order as `tree_flatten`."""
    import torch.utils._pytree as pytree

    if pytree.tree_is_leaf(value):
        yield path, value
        return
    node = pytree.SUPPORTED_NODES[pytree._get_node_type(value)]
    if node.flatten_with_keys_fn is not None:
        keyed, _ = node.flatten_with_keys_fn(value)
    else:
        children, _ = node.flatten_fn(value)
        keyed = [(pytree.SequenceKey(i), child) for i, child in enumerate(children)]
    for key, child in keyed:
        yield from _leaves_with_path(child, (*path, key))


def layout_name(t: Any) -> str:
    """'strided', 'sparse_coo', 'sparse_csr', ..., or 'quantized' for a quantized (strided) tensor."""
    return "quantized" if t.is_quantized else str(t.layout).removeprefix("torch.")


def _stored(t: Any) -> tuple[Any, int]:
    """(the values the tensor stores, as a flat strided tensor; how many of its elements are implicit zeros)."""
    import torch

    if t.is_quantized:
        return t.dequantize().reshape(-1), 0
    if t.layout == torch.strided:
        return t.reshape(-1), 0
    if t.layout == torch.sparse_coo:
        values = t.coalesce().values()
    elif t.layout in (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
        values = t.values()
    else:  # MKL-DNN and any layout to come: its dense form
        values = t.to_dense()
    flat = values.reshape(-1)
    return flat, max(t.numel() - flat.numel(), 0)


def _preview(t: Any, flat: Any, n: int) -> list[Any]:
    """The first `n` elements in row-major order (a sparse tensor's are made dense only when it is small)."""
    import torch

    if t.layout != torch.strided and not t.is_quantized:
        if t.numel() > DENSE_PREVIEW_LIMIT:
            return []
        flat = t.to_dense().reshape(-1)
        if flat.is_complex():
            flat = flat.abs()
    return [_num(v) if isinstance(v, float) else v for v in flat[:n].tolist()]


def summarise(name: str, value: Any, preview: int = 8) -> dict[str, Any]:
    import torch

    if not isinstance(value, torch.Tensor):
        return {"name": name, "kind": type(value).__name__, "value": value if isinstance(value, (int, float, bool,
                                                                                                 str)) else repr(value)}
    t = value.detach()
    out: dict[str, Any] = {"name": name, "kind": "tensor", "dtype": str(t.dtype).removeprefix("torch."),
                           "layout": layout_name(t), "shape": list(t.shape), "device": str(t.device),
                           "numel": t.numel()}
    flat, implicit_zeros = _stored(t)
    if flat.is_complex():
        flat = flat.abs()
    out["preview"] = _preview(t, flat, preview)
    if t.numel() == 0:
        return out
    f = flat.to(torch.float64)
    finite = torch.isfinite(f)
    out["nan"] = int(torch.isnan(f).sum())
    out["inf"] = int(torch.isinf(f).sum())
    good = f[finite]
    extremes = ([float(good.min()), float(good.max())] if good.numel() else []) + ([0.0] if implicit_zeros else [])
    if extremes:
        out["min"], out["max"] = min(extremes), max(extremes)
        out["mean"] = float(good.sum()) / (good.numel() + implicit_zeros)
    return out


def dense(t: Any) -> Any:
    """A tensor of any layout as a strided float64 (complex128) tensor on the CPU, for comparing values."""
    import torch

    t = t.detach().cpu()
    if t.is_quantized:
        t = t.dequantize()
    elif t.layout != torch.strided:
        t = t.to_dense()
    return t.to(torch.complex128 if t.is_complex() else torch.float64)


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
        a64, b64 = dense(a), dense(b)
        diff = (a64 - b64).abs()
        diff = torch.where(torch.isnan(a64) & torch.isnan(b64), torch.zeros_like(diff), diff)
        d_abs = float(diff.max())
        d_rel = float((diff / a64.abs().clamp_min(1e-12)).max())
        if d_abs > max_abs:
            worst = name
        max_abs, max_rel = max(max_abs, d_abs), max(max_rel, d_rel)
    return {"max_abs": _num(max_abs), "max_rel": _num(max_rel), "worst_output": worst, "mismatch": None}
