"""Operator counts of a program, the difference a decomposition made, and the ops outside the core ATen opset.

Counts cover the top graph and every subgraph (cond branches, loop bodies); `operator.getitem` is left out as the
`.pt2` format folds it into the node it reads from. An op is core ATen when its OpOverload carries `torch.Tag.core`;
only torch operators are judged (Python builtins such as `_operator.add` on sizes are not operators of an opset).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from pt2_viewer.core.decompose.provenance import shown_nodes, target_text


@dataclass
class OpChange:
    op: str
    before: int
    after: int

    @property
    def change(self) -> int:
        return self.after - self.before

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change}


def _graphs(graph_module: Any) -> list[Any]:
    import torch.fx

    return [m.graph for _, m in graph_module.named_modules() if isinstance(m, torch.fx.GraphModule)]


def op_counts(graph_module: Any) -> Counter[str]:
    counts: Counter[str] = Counter()
    for graph in _graphs(graph_module):
        for n in shown_nodes(graph):
            if n.op == "call_function":
                counts[target_text(n)] += 1
    return counts


def op_diff(before: Counter[str], after: Counter[str]) -> list[OpChange]:
    """Every op in either program with its counts, the biggest changes first, then by name."""
    ops = set(before) | set(after)
    rows = [OpChange(op, before.get(op, 0), after.get(op, 0)) for op in ops]
    return sorted(rows, key=lambda r: (-abs(r.change), r.op))


def non_core_ops(graph_module: Any) -> dict[str, int]:
    """Torch operators in the program that are not in the core ATen opset, with their counts."""
    import torch

    counts: Counter[str] = Counter()
    for graph in _graphs(graph_module):
        for n in shown_nodes(graph):
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) \
                    and torch.Tag.core not in n.target.tags:
                counts[target_text(n)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
