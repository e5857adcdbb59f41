"""The ops of a decomposed program that are outside the core ATen opset: the one op statistic that needs torch.

An op is core ATen when its OpOverload carries `torch.Tag.core`; only torch operators are judged (Python builtins such
as `_operator.add` on sizes are not operators of an opset). Counts cover the top graph and every subgraph;
`operator.getitem` is left out as the `.pt2` format folds it into the node it reads from. Op counts and op diffs are
counted on the viewer's torch-free Program, in one place: core/graph/op_stats.py.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from pt2_viewer.core.decompose.provenance import shown_nodes, target_text


def _graphs(graph_module: Any) -> list[Any]:
    import torch.fx

    return [m.graph for _, m in graph_module.named_modules() if isinstance(m, torch.fx.GraphModule)]


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
