"""Per-node error metrics and the first divergence: the earliest op (a `call_function`) whose error passes the
threshold while every input it reads is still within it.

That rule points at the node where a bug or a precision loss *enters*; every node downstream of it inherits the error
and would otherwise swamp the list. Placeholders (weights, buffers, inputs) are neither candidates nor inputs that
disqualify an op: a bf16 candidate casts every weight down, and the weight it rounded is not where the program went
wrong; the first op that makes that rounding matter is. The search (`first_divergence`) is pure Python over
`NodeError` records so it can be tested and reused without torch; `compare_values` (torch, imported lazily) turns two
tensors into a record.

The error that the threshold applies to is the relative error `max|ref - cand| / max|ref|`: relative to the reference's
largest magnitude rather than elementwise, so values near zero do not blow it up. A NaN or Inf that the candidate has
and the reference has not makes the error infinite.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_THRESHOLD = 1e-2
TINY = 1e-30


@dataclass
class NodeError:
    """How far a candidate's value for one reference node is from the reference's value."""

    node: str  # the reference node's name
    candidate: str  # the candidate node compared with it (the same name for bf16/fp16/cuda)
    max_abs: float
    max_rel: float  # max|ref - cand| / max|ref|: the error the threshold applies to
    cosine: float  # cosine similarity of the flattened values (1.0 when both are all zeros)
    sqnr_db: float  # 10 log10(sum ref^2 / sum (ref - cand)^2); inf when equal
    nan: int  # NaN count in the candidate
    inf: int  # Inf count in the candidate
    ref_nan: int = 0
    ref_inf: int = 0
    numel: int = 0
    note: str = ""  # why a node could not be compared fully (shape mismatch, ...)
    compared: bool = True  # False: no candidate value stands for the node (`note` says why); never a divergence

    @property
    def error(self) -> float:
        """The figure compared with the threshold: infinite when the candidate has NaN/Inf the reference lacks; NaN
        for a node not compared."""
        if not self.compared:
            return math.nan
        if self.nan > self.ref_nan or self.inf > self.ref_inf:
            return math.inf
        return self.max_rel

    def to_json(self) -> dict[str, Any]:
        d = {k: _num(v) if isinstance(v, float) else v for k, v in asdict(self).items()}
        d["error"] = _num(self.error)
        if self.compared:
            del d["compared"]  # said only of a row that was not
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> NodeError:
        floats = ("max_abs", "max_rel", "cosine", "sqnr_db")
        fields: dict[str, Any] = {k: (float(v) if k in floats else v) for k, v in d.items()
                                  if k in cls.__dataclass_fields__ and v is not None}
        return cls(**fields)


def not_compared(node: str, candidate: str, why: str) -> NodeError:
    """A row for a node no candidate value stands for: "not compared" and why; it is never a divergence."""
    return NodeError(node, candidate, math.nan, math.nan, math.nan, math.nan, 0, 0, note=f"not compared: {why}",
                     compared=False)


def _num(x: float) -> float | str:
    """JSON has no NaN or Inf: spell them as strings ('inf', 'nan'); float() reads them back."""
    return x if math.isfinite(x) else str(x)


@dataclass
class Divergence:
    """The first divergence, and the inputs that were still within the threshold when it happened."""

    node: str
    error: float
    inputs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "error": _num(self.error), "inputs": self.inputs}


def first_divergence(order: Iterable[str], errors: Mapping[str, NodeError], inputs_of: Mapping[str, list[str]],
                     threshold: float, sources: Collection[str] = ()) -> Divergence | None:
    """The first node in `order` (topological) whose error exceeds `threshold` while every compared input is within
    it. Inputs that were not compared (no tensor, no counterpart) are looked through to the compared nodes behind
    them, so a reshape without a counterpart does not hide where the error came from. `sources` (placeholders and
    get_attr nodes, the values a candidate starts from) are never the divergence and never disqualify their users:
    an op reading a weight the candidate rounded is still where the error enters when its other inputs are within.
    A node marked not compared is looked through as one without a counterpart."""
    over: dict[str, bool] = {}  # node -> its error, or an uncompared node's inputs', passes the threshold
    for name in order:
        if name in sources:
            over[name] = False
            continue
        ins = inputs_of.get(name, [])
        inputs_over = any(over.get(i, False) for i in ins)
        e = errors.get(name)
        if e is None or not e.compared:
            over[name] = inputs_over
            continue
        bad = not (e.error <= threshold)  # NaN error counts as over
        if bad and not inputs_over:
            return Divergence(name, e.error, [i for i in ins if i in over])
        over[name] = bad
    return None


def worst(errors: Iterable[NodeError], count: int = 10) -> list[NodeError]:
    """The `count` compared nodes with the largest error, largest first (ties: lowest SQNR first)."""
    return sorted((e for e in errors if e.compared), key=lambda e: (-_sortable(e.error), e.sqnr_db))[:count]


def _sortable(x: float) -> float:
    return math.inf if math.isnan(x) else x


def compare_values(node: str, candidate: str, ref: Any, cand: Any) -> NodeError | None:
    """Metrics of `cand` against `ref` (tensors, or tuples/lists of tensors taken together); None when there is no
    tensor to compare. Computed in float64 on the CPU, whatever the inputs' dtype and device."""
    import torch

    refs, cands = tensor_leaves(ref), tensor_leaves(cand)
    if not refs:
        return None
    if len(refs) == 1 and len(cands) > 1:  # a decomposed op returns extras (batch norm's saved statistics)
        cands = [_best_match(refs[0], cands)]
    if len(refs) != len(cands):
        return NodeError(node, candidate, math.inf, math.inf, math.nan, -math.inf, 0, 0,
                         note=f"{len(refs)} tensors vs {len(cands)}")
    for a, b in zip(refs, cands):
        if a.shape != b.shape:
            return NodeError(node, candidate, math.inf, math.inf, math.nan, -math.inf, 0, 0, numel=a.numel(),
                             note=f"shape {list(a.shape)} vs {list(b.shape)}")
    r = torch.cat([_f64(a) for a in refs]) if len(refs) > 1 else _f64(refs[0])
    c = torch.cat([_f64(b) for b in cands]) if len(cands) > 1 else _f64(cands[0])
    return _metrics(node, candidate, r, c)


def _best_match(ref: Any, cands: list[Any]) -> Any:
    """The candidate tensor standing for `ref`: the first of the same shape and kind of dtype (values before
    indices), else the first of the same shape, else the first."""
    same_shape = [c for c in cands if c.shape == ref.shape]
    same_kind = [c for c in same_shape if c.is_floating_point() == ref.is_floating_point()]
    return (same_kind or same_shape or cands)[0]


def tensor_leaves(value: Any) -> list[Any]:
    """The tensors of a value (a tensor, or nested tuples and lists of them), in order."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensor_leaves(v)]
    return []


def _f64(t: Any) -> Any:
    import torch

    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    return t.reshape(-1).to(device="cpu", dtype=torch.float64)


def _metrics(node: str, candidate: str, r: Any, c: Any) -> NodeError:
    import torch

    if r.numel() == 0:
        return NodeError(node, candidate, 0.0, 0.0, 1.0, math.inf, 0, 0)
    if bool((torch.isfinite(r) & torch.isfinite(c)).all()):  # the common case: one reduction, one read back
        diff = r - c
        max_abs, scale, dot, rr, cc, noise = torch.stack(
            [diff.abs().max(), r.abs().max(), torch.dot(r, c), torch.dot(r, r), torch.dot(c, c),
             torch.dot(diff, diff)]).tolist()
        return _record(node, candidate, max_abs, scale, dot, rr, cc, noise, nan=0, inf=0, numel=int(r.numel()))
    r_nan, r_inf = torch.isnan(r), torch.isinf(r)
    c_nan, c_inf = torch.isnan(c), torch.isinf(c)
    counts = dict(nan=int(c_nan.sum()), inf=int(c_inf.sum()), ref_nan=int(r_nan.sum()), ref_inf=int(r_inf.sum()),
                  numel=int(r.numel()))
    # where both sides agree on a non-finite value there is no error; where they disagree, the error is infinite
    same = (r_nan & c_nan) | (r_inf & c_inf & (torch.sign(r) == torch.sign(c)))
    finite = torch.isfinite(r) & torch.isfinite(c)
    disagree = ~(same | finite)
    rf = torch.where(finite, r, torch.zeros_like(r))
    cf = torch.where(finite, c, torch.zeros_like(c))
    diff = rf - cf
    max_abs = math.inf if bool(disagree.any()) else float(diff.abs().max())
    return _record(node, candidate, max_abs, float(rf.abs().max()), float(torch.dot(rf, cf)), float(torch.dot(rf, rf)),
                   float(torch.dot(cf, cf)), float(torch.dot(diff, diff)), **counts)


def _record(node: str, candidate: str, max_abs: float, scale: float, dot: float, rr: float, cc: float, noise: float,
            **counts: Any) -> NodeError:
    """The metrics from the sums: max|d|, max|r|, r.c, r.r, c.c and d.d (d = r - c, finite values only)."""
    max_rel = max_abs / scale if scale > TINY else (0.0 if max_abs == 0 else math.inf)
    nr, nc = math.sqrt(rr), math.sqrt(cc)
    cosine = 1.0 if nr == 0 and nc == 0 else (dot / (nr * nc) if nr and nc else 0.0)
    cosine = min(max(cosine, -1.0), 1.0)  # rounding can give 1.0000000000000002
    if max_abs == 0:  # equal values: exactly 1, not the 0.9999999999999999 rounding can give
        cosine = 1.0
    if not math.isfinite(max_abs):
        sqnr = -math.inf
    elif noise == 0:
        sqnr = math.inf
    else:
        sqnr = 10 * math.log10(rr / noise) if rr > 0 else -math.inf
    return NodeError(node, candidate, max_abs, max_rel, cosine, sqnr, **counts)
