"""Operator counts of a program and the difference between two: the one place that counts ops.

It works on the viewer's torch-free `Program` (core/model/program.py), so the compare view, the report and the
decompose job all count the same thing the same way: the job, which holds torch graphs, counts the archives it saved
(read back with the viewer's reader) rather than its FX graphs. Counts cover the top graph and every subgraph (cond
branches, loop bodies); `operator.getitem` is left out, as the `.pt2` format folds it into the node it reads from. Ops
are spelled as torch prints an OpOverload: `aten.conv2d.default` (the archive's `torch.ops.` prefix dropped).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pt2_viewer.core.model.program import NodeOp, Program

if TYPE_CHECKING:
    from pt2_viewer.core.jobs.schemas.decompose import OpChange

OP_PREFIX = "torch.ops."
GETITEM = "_operator.getitem"


def op_of_target(target: str) -> str:
    """'torch.ops.aten.conv2d.default' -> 'aten.conv2d.default'."""
    return target[len(OP_PREFIX):] if target.startswith(OP_PREFIX) else target


def nodes_by_op(program: Program) -> dict[str, list[str]]:
    """op -> the nodes calling it, over every graph of the program, in graph order (getitem left out)."""
    by_op: dict[str, list[str]] = {}
    for _, graph in program.all_graphs():
        for n in graph.nodes:
            if n.op is NodeOp.CALL_FUNCTION and n.target != GETITEM:
                by_op.setdefault(op_of_target(n.target), []).append(n.name)
    return by_op


def op_counts(program: Program) -> Counter[str]:
    """Calls per op over the program's graph and every subgraph."""
    return Counter({op: len(nodes) for op, nodes in nodes_by_op(program).items()})


def op_diff(before: Mapping[str, int], after: Mapping[str, int]) -> list[OpChange]:
    """Every op in either count with both counts, the biggest change first, then by name."""
    # deferred: the jobs' schemas (a dozen dataclasses, ~12 ms) are not needed by a first view, which counts ops
    from pt2_viewer.core.jobs.schemas.decompose import OpChange

    rows = [OpChange(op, before.get(op, 0), after.get(op, 0)) for op in set(before) | set(after)]
    return sorted(rows, key=lambda r: (-abs(r.change), r.op))


def program_diff(before: Program, after: Program) -> list[OpChange]:
    return op_diff(op_counts(before), op_counts(after))


__all__ = ["GETITEM", "OP_PREFIX", "nodes_by_op", "op_counts", "op_diff", "op_of_target", "program_diff"]
