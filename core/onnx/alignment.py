"""Which source node each FX node of one module (or one line of it) came from, when their names do not say: the two
sequences of ops aligned in order, as a decomposition changes a program.

torch's exporter decomposes the `.pt2` before it writes ONNX, and the ONNX optimizer then folds some FX nodes away, so
between the `.pt2`'s nodes and the FX nodes the ONNX file names:
- an op may have become another (`reshape` -> `view` or `_unsafe_view`, `__and__` -> `bitwise_and`, `to` ->
  `_to_copy`), or several (`diff` -> `cat`, `slice`, `slice`, `sub`; `cumsum` -> `convert_element_type`, `cumsum`);
- a source node may have left nothing (`contiguous`, a folded constant's `arange`);
- an FX node may come from no source node (the size arithmetic `operator.add` of a dynamic dim).
`align` finds the order-keeping assignment of FX nodes to source nodes of the highest score (a dynamic programme, as
a sequence alignment): the same op scores most, an op the source op becomes (`BECOMES`, or the same op family:
`_softmax` is `softmax`) less, a further FX node on the source node an FX node before it took (one op that became
several) less again, any other pairing a little, so that what is left still pairs by order. Equal names break ties.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# source op (its family, see `family`) -> the ops torch's decompositions make of it, besides itself
BECOMES: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "reshape": {"view", "clone", "expand"},  # a copy where a view cannot do: clone, then `_unsafe_view`
    "flatten": {"view"}, "unflatten": {"view"}, "view_as": {"view"}, "expand_as": {"expand"},
    "contiguous": {"clone"}, "dropout": {"clone"}, "t": {"permute", "transpose"}, "transpose": {"permute"},
    "to": {"convert_element_type", "clone"}, "type_as": {"convert_element_type", "to"},
    "float": {"convert_element_type", "to"}, "int": {"convert_element_type", "to"},
    "and": {"bitwise_and"}, "or": {"bitwise_or"}, "xor": {"bitwise_xor"}, "invert": {"bitwise_not"},
    "diff": {"cat", "slice", "sub", "narrow"}, "cumsum": {"convert_element_type"},
    "linear": {"t", "permute", "addmm", "mm", "matmul", "view"}, "matmul": {"mm", "bmm", "view", "expand", "clone"},
    "einsum": {"bmm", "mm", "permute", "view", "mul", "sum"}, "mean": {"sum", "div"},
    "new_ones": {"full"}, "new_zeros": {"full"}, "new_full": {"full"}, "ones_like": {"full"},
    "zeros_like": {"full"}, "full_like": {"full"}, "chunk": {"split", "split_with_sizes", "slice"},
    "split": {"split_with_sizes", "slice"}, "square": {"pow", "mul"}, "repeat_interleave": {"expand", "view"},
}.items()}

SAME, BECOME, FURTHER, ANY, NAME = 4.0, 3.0, 2.0, 0.5, 0.5  # the scores described above
BAND = 400  # past this many source nodes either side of the diagonal, a pairing is not looked at
_AFFIX = re.compile(r"^(?:native_|unsafe_)|_legit(?:_no_training|_no_stats)?$|_copy$|_default$")


def family(op: str) -> str:
    """`aten._unsafe_view` -> `view`, `prims.convert_element_type` -> `convert_element_type`, `aten.__and__` ->
    `and`, `aten._native_batch_norm_legit_no_training` -> `batch_norm`: the op without namespace and the prefixes
    and suffixes torch's private variants add."""
    name = op.rsplit(".", 1)[-1].strip("_")
    for _ in range(3):
        stripped = _AFFIX.sub("", name).strip("_")
        if stripped == name:
            break
        name = stripped
    return name


@dataclass(frozen=True)
class Item:
    """One node of a sequence to align: its name (an FX node's or a source node's) and op (`aten.view`)."""

    name: str
    op: str


def align(fx: Sequence[Item], source: Sequence[Item]) -> list[int | None]:
    """For each FX node, the index of the source node it came from: the best order-keeping assignment, each FX node
    to a source node after the one before it took, or to that same one (a decomposition's further node). FX nodes
    before the first assigned one take the first source node. None only where `source` is empty."""
    n, m = len(fx), len(source)
    if not m:
        return [None] * n
    families: dict[str, str] = {}  # op -> its family, worked out once per op
    fx_family = [families.setdefault(f.op, family(f.op)) for f in fx]
    src_family = [families.setdefault(s.op, family(s.op)) for s in source]
    src_becomes = [BECOMES.get(f, frozenset()) for f in src_family]
    src_names = [s.name for s in source]
    neg = float("-inf")
    best = [neg] * m  # best[j]: the best score so far with the last FX node assigned to source node j
    floor, floor_arg, settled = 0.0, -1, 0  # the best over "nothing assigned yet" and best[:settled], which no
    # later step changes (the band only moves right)
    back: list[dict[int, int]] = []  # per FX node: source node j -> the source node assigned before it (-1: none),
    # for the j it moved to; a j not in it stayed where it was
    for i in range(n):
        centre = (i * m) // n
        lo, hi = max(0, centre - BAND), min(m, centre + BAND + 1)
        while settled < lo:
            if best[settled] > floor:
                floor, floor_arg = best[settled], settled
            settled += 1
        own, name = fx_family[i], fx[i].name
        row: dict[int, int] = {}
        new = list(best)
        prefix, arg = floor, floor_arg
        for j in range(lo, hi):
            here = best[j]
            if src_family[j] == own:
                first, further = SAME, FURTHER
            elif own in src_becomes[j]:
                first, further = BECOME, FURTHER
            else:
                first, further = ANY, 0.0
            move = prefix + first + (NAME if src_names[j] == name else 0.0)
            stay = here + further
            if move > stay:
                new[j], row[j] = move, arg
            else:
                new[j] = stay
            if here > prefix:
                prefix, arg = here, j
        back.append(row)
        best = new
    j = max(range(m), key=lambda k: best[k])
    out: list[int | None] = [0] * n
    for i in range(n - 1, -1, -1):
        if j < 0:
            break  # before the first assignment: the first source node, as set
        out[i] = j
        j = back[i].get(j, j)
    return out
