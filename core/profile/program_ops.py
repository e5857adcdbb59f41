"""The ops a program's eager module (`ep.module()`) runs, in call order, as the profiler names them.

Each `call_function` node whose target is an operator (`torch.ops.aten.conv2d.default`) is one top-level op event
(`aten::conv2d`) on the thread that runs the module; Python's own calls (`operator.getitem`, `builtins`) record no
event and are left out. Control flow (`torch.ops.higher_order.cond`, ...) runs its subgraphs' ops from inside the
higher-order op, which the order of top-level ops cannot attribute: such a program is refused, saying so."""
from __future__ import annotations

from dataclasses import dataclass

from pt2_viewer.core.model.program import NodeOp, Program
from pt2_viewer.core.profile.errors import ProfileError

_OPS_PREFIX = "torch.ops."


@dataclass(frozen=True)
class ProgramOp:
    node: str  # the node's name in the graph
    target: str  # as the archive spells it: torch.ops.aten.conv2d.default
    event_name: str  # as the profiler names its event: aten::conv2d


def program_ops(program: Program) -> list[ProgramOp]:
    """The program's operator calls in graph order (the order `ep.module()` runs them)."""
    ops: list[ProgramOp] = []
    for node in program.graph.nodes:
        if node.op is not NodeOp.CALL_FUNCTION:
            continue
        target = node.whole_target
        if not target.startswith(_OPS_PREFIX):
            continue
        parts = target[len(_OPS_PREFIX):].split(".")
        if parts[0] == "higher_order":
            raise ProfileError(f"program '{program.name}' has control flow ({node.name}: {target}); attributing a "
                               "profile by op order is only done for programs without it")
        if len(parts) < 2:
            continue
        ops.append(ProgramOp(node.name, target, f"{parts[0]}::{parts[1]}"))
    if not ops:
        raise ProfileError(f"program '{program.name}' calls no operator: no profile event can be attributed to it")
    return ops
