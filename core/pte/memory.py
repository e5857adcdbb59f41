"""The memory plan of one method: its planned buffers, and where and when each planned tensor lives.

ExecuTorch's planner gives every tensor that is not a constant and not dynamic a place (buffer, offset) ahead of
time; `non_const_buffer_sizes[1:]` are the buffers the runtime allocates (index 0 is reserved), so their sum is the
method's peak planned memory. A tensor's lifetime here is the span of instructions that read or write it, from the
execution plan's argument lists: what the planner itself worked from.
"""
from __future__ import annotations

from pt2_viewer.core.model.executorch import MemoryPlan, PlannedTensor
from pt2_viewer.core.pte.schema import PtePlan, PteTensor


def memory_plan(plan: PtePlan, value_names: list[str]) -> MemoryPlan:
    n = len(plan.values)
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def touch(i: int, pc: int) -> None:
        if 0 <= i < n:
            first.setdefault(i, pc)
            last[i] = pc

    for pc, ins in enumerate(plan.instructions):
        for a in ins.args:
            touch(a, pc)
            if 0 <= a < n and plan.values[a].kind in ("tensor_list", "optional_tensor_list"):
                for x in plan.values[a].value:
                    touch(x, pc)
    end = len(plan.instructions)
    for i in plan.inputs:
        first[i] = -1
        last.setdefault(i, -1)
    for i in plan.outputs:
        first.setdefault(i, end)
        last[i] = end
    tensors = []
    for i, ev in enumerate(plan.values):
        if ev.kind != "tensor":
            continue
        t: PteTensor = ev.value
        if t.memory_id is None:
            continue
        tensors.append(PlannedTensor(value_names[i], t.memory_id, t.memory_offset or 0, t.nbytes,
                                     first.get(i, -1), last.get(i, first.get(i, -1))))
    tensors.sort(key=lambda p: (p.buffer, p.offset, p.first))
    return MemoryPlan(buffers=list(plan.buffer_sizes[1:]), tensors=tensors, instructions=end)
