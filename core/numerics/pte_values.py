"""What a `.pte` instruction's logged value is compared with, and in which shape.

ExecuTorch's Inspector pairs each value the `.pte` logged with the source value of the same debug handles, but the two
are not always the same tensor:
- The emitter runs no instruction for a static view (`view_copy` planned as an alias of its input's memory), so a
  `linear` whose edge program is `permute_copy, addmm, view_copy` logs the `addmm`'s [24, 64] for the source's
  [2, 12, 64]. Where the edge program goes from the logged value to the one the source node gives through views
  alone (`view_copy`, `squeeze_copy`, `unsqueeze_copy`, `_unsafe_view`, ...: the same elements in the same order),
  the logged value is read in the source's shape, and the row says so. A transpose or a permute is never undone.
- A source node of several outputs (`lstm`: output, h_n, c_n) is paired with the one value its instructions leave
  out: the output the program reads where the edge program's value leaves the group (a user of `getitem(lstm, k)`,
  or the graph's output).
- The debug buffer holds a tensor's bytes in memory order; a tensor whose dim order is not the default (channels
  last) is read through the strides its dim order implies (core/pte/program_map.py `strides_for`).
Where none of this makes the two comparable, the row is "not compared", with the reason, and never a divergence.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.deploy.handle_map import handles_of
from pt2_viewer.core.deploy.provenance import target_text
from pt2_viewer.core.numerics.metrics import tensor_leaves
from pt2_viewer.core.pte.program_map import strides_for

# edge-dialect ops that keep a tensor's elements in order: a view of a contiguous tensor, or a copy of it
SAME_ELEMENTS = frozenset({"view_copy", "view", "_unsafe_view", "reshape", "squeeze_copy", "unsqueeze_copy",
                           "squeeze", "unsqueeze", "alias_copy", "alias", "clone", "_clone_dim_order"})
_DIM_ORDER = re.compile(r"^(v\d+) dim order$")


@dataclass
class Comparable:
    """The two values to compare (`ref` one output of the source node, `cand` in its shape), and how they were
    made so (empty when they were already)."""

    ref: Any
    cand: Any
    note: str = ""


@dataclass
class NotComparable:
    """Why no value of the `.pte` stands for the source node's."""

    why: str


def _stem(node: Any) -> str:
    text = target_text(node.target)
    parts = text.split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def _shape(node: Any) -> list[int] | None:
    val = node.meta.get("val")
    return [int(s) for s in val.shape] if hasattr(val, "shape") else None


class EdgeGroups:
    """The ETRecord's edge program for one method: its nodes by debug handle, and how each group's value leaves it."""

    def __init__(self, etrecord: Any, method: str, source_graph: Any, handles: dict[str, tuple[int, ...]]) -> None:
        edge = etrecord.edge_dialect_program
        program = edge.get(method) if isinstance(edge, dict) else edge
        self.nodes = list(program.graph.nodes) if program is not None else []
        self.by_handle: dict[int, list[Any]] = {}
        for n in self.nodes:
            for h in handles_of(n.meta.get("debug_handle")):
                self.by_handle.setdefault(h, []).append(n)
        self.source = {n.name: n for n in source_graph.nodes}
        self.source_handles = handles
        self.source_by_handle: dict[int, list[str]] = {}
        for name, hs in handles.items():
            for h in hs:
                self.source_by_handle.setdefault(h, []).append(name)

    def exits(self, group: tuple[int, ...]) -> list[Any]:
        """The group's edge nodes whose value is read outside it (or is the graph's output), in graph order."""
        inside = {id(n) for h in group for n in self.by_handle.get(h, [])}
        return [n for n in self.nodes if id(n) in inside and n.op == "call_function" and _shape(n) is not None
                and any(id(u) not in inside or u.op == "output" for u in n.users)]

    def output_index(self, node: str, exit_node: Any, group: tuple[int, ...]) -> int | None:
        """Which output of the multi-output source `node` the edge node `exit_node` carries out: the `k` of the
        `getitem(node, k)` its readers read in the source, or of the graph output at the same place."""
        found: set[int] = set()
        for user in exit_node.users:
            if user.op == "output":
                outs = list(user.args[0]) if isinstance(user.args[0], (list, tuple)) else [user.args[0]]
                src_out = next((n for n in self.source.values() if n.op == "output"), None)
                src_args = list(src_out.args[0]) if src_out is not None else []
                for j, o in enumerate(outs):
                    if o is exit_node and j < len(src_args):
                        found |= self._getitem_index(src_args[j], node)
                continue
            for h in handles_of(user.meta.get("debug_handle")):
                if h in group:
                    continue
                for reader in self.source_by_handle.get(h, []):
                    for arg in self.source[reader].all_input_nodes:
                        found |= self._getitem_index(arg, node)
        return found.pop() if len(found) == 1 else None

    @staticmethod
    def _getitem_index(arg: Any, node: str) -> set[int]:
        if getattr(arg, "op", "") == "call_function" and arg.target is operator.getitem and \
                getattr(arg.args[0], "name", None) == node:
            return {int(arg.args[1])}
        return set()


def in_dim_order(value: Any, dim_order: tuple[int, ...] | None) -> tuple[Any, str]:
    """The logged tensor read through the strides its dim order implies (the debug buffer holds it in memory
    order), and a note; unchanged for the default order."""
    import torch

    if not isinstance(value, torch.Tensor) or not dim_order or list(dim_order) == sorted(dim_order) or \
            len(dim_order) != value.dim():
        return value, ""
    sizes = tuple(int(s) for s in value.shape)
    logical = value.reshape(-1).as_strided(sizes, strides_for(sizes, tuple(dim_order)))
    return logical.contiguous(), f"read in its dim order {tuple(dim_order)}"


def dim_orders(pte_node: Any) -> list[tuple[int, ...]]:
    """The dim orders of the values an instruction writes, as the `.pte` graph's node names them."""
    out = []
    for key, text in (pte_node.metadata.items() if pte_node is not None else []):
        if _DIM_ORDER.match(key):
            out.append(tuple(int(d) for d in re.findall(r"\d+", str(text))))
    return out


def _views_back(exit_node: Any) -> list[list[int]]:
    """The shapes the edge program's value had before the views that end at `exit_node` (its own first)."""
    shapes = []
    node = exit_node
    numel = None
    while node is not None and getattr(node, "op", "") == "call_function":
        shape = _shape(node)
        if shape is None:
            break
        size = 1
        for s in shape:
            size *= s
        if numel is not None and size != numel:
            break
        numel = size
        shapes.append(shape)
        if _stem(node) not in SAME_ELEMENTS or not node.args:
            break
        node = node.args[0]
    return shapes


def comparable(node: str, group: tuple[int, ...], ref: Any, cand: Any, edges: EdgeGroups,
               dim_order: list[tuple[int, ...]]) -> Comparable | NotComparable:
    """`ref` (the source node's value) and `cand` (the value logged for its group, written in the dim orders
    `dim_order`) as two values to compare, or why they are not comparable."""
    refs, cands = tensor_leaves(ref), tensor_leaves(cand)
    if not refs or not cands:
        return Comparable(ref, cand)
    if len(cands) != 1:
        if len(refs) == len(cands) and all(a.shape == b.shape for a, b in zip(refs, cands)):
            return Comparable(ref, cand)
        return NotComparable(f"the .pte logs {len(cands)} tensors for the source's {len(refs)}")
    value, read = in_dim_order(cands[0], dim_order[0] if len(dim_order) == 1 else None)
    if len(refs) == 1 and refs[0].shape == value.shape:
        return Comparable(refs[0], value, read)
    for exit_node in reversed(edges.exits(group)):  # the last first: the logged value is the group's last one's
        shapes = _views_back(exit_node)
        if list(value.shape) not in shapes:
            continue
        k = 0 if len(refs) == 1 else edges.output_index(node, exit_node, group)
        if k is None or k >= len(refs) or list(refs[k].shape) != shapes[0]:
            continue
        notes = ([read] if read else []) + ([] if len(refs) == 1 else [f"output {k} of {len(refs)}"])
        if list(value.shape) != shapes[0]:
            notes.append(f"the .pte's {list(value.shape)} read as {shapes[0]}: the graph's view between them, "
                         "which the .pte runs as no instruction")
            value = value.reshape(shapes[0])
        return Comparable(refs[k], value, "; ".join(notes))
    shapes_text = " and ".join(str(list(r.shape)) for r in refs)
    if all(r.numel() != value.numel() for r in refs):
        return NotComparable(f"the .pte's value {list(value.shape)} holds {value.numel()} elements, the source's "
                             f"{shapes_text} {' and '.join(str(r.numel()) for r in refs)}")
    return NotComparable(f"the .pte's value {list(value.shape)} is not the source's {shapes_text} through views of "
                         "the graph (a transpose or a permute is never undone)")
