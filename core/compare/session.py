"""Two programs side by side: which nodes of one became which nodes of the other, the op diff table, and what to
highlight when the user picks a node or an op.

The compare view (app/compare/view.py) shows a program before and after a decomposition, or any two programs. It
needs the same answers whichever way the pair was made: a decomposition (core/compare/decomposition.py) brings
torch's provenance mapping and the ops the job found outside core ATen; two arbitrary programs are paired by the
structural diff's matcher (core/diff/matcher.py, `ProgramDiff.node_mapping`, made by the caller above this layer).
Either way the op diff is counted on the two programs (core/graph/op_stats.py). This module turns both into one
`CompareSession`, without Qt and without torch, so the view only paints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pt2_viewer.core.compare.decomposition import Decomposition
from pt2_viewer.core.compare.mapping import NodeMapping, read_mapping
from pt2_viewer.core.graph.document import SELECTED, DocumentModel, Highlight
from pt2_viewer.core.graph.ids import group_of
from pt2_viewer.core.graph.op_stats import nodes_by_op, program_diff
from pt2_viewer.core.jobs.schemas.decompose import OpChange
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.util.words import plural

LEFT, RIGHT = "left", "right"


@dataclass
class OpRow(OpChange):
    """One row of the op diff table: an op's counts on each side (core/graph/op_stats.py), flagged when the op is in
    the right-hand program and outside the core ATen opset."""

    non_core: bool = False

    @property
    def change_text(self) -> str:
        return f"{self.change:+d}" if self.change else "0"


def op_rows(before: Program, after: Program, non_core: dict[str, int] | None = None) -> list[OpRow]:
    """Every op in either program, biggest change first, then by name, counted on the two programs themselves."""
    flagged = non_core or {}
    return [OpRow(c.op, c.before, c.after, non_core=c.op in flagged) for c in program_diff(before, after)]


@dataclass
class CompareSession:
    """Everything the compare view asks: counterparts of a node, nodes of an op on either side, the diff rows."""

    left: Program
    right: Program
    mapping: NodeMapping
    rows: list[OpRow]
    # {op: count} of ops outside the core ATen opset in the right program; None when unknown (judging an op needs
    # torch's tags, which only a decompose job reads).
    non_core_ops: dict[str, int] | None
    method: str  # "decomposition" (torch's provenance), "etrecord" (debug handles) or "guess" (the structural matcher)
    left_title: str = ""
    right_title: str = ""
    _ops: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for side, program in ((LEFT, self.left), (RIGHT, self.right)):
            self._ops[side] = nodes_by_op(program)

    # -- selection across sides ----------------------------------------------------------------------------------
    def counterparts(self, side: str, node: str) -> list[str]:
        """The nodes on the other side that `node` (on `side`) became, or came from; in the other graph's order."""
        if side == LEFT:
            names = {k.after for k in self.mapping.after_of(node)}
            order = self.mapping.after_nodes
        else:
            names = {k.before for k in self.mapping.before_of(node)}
            order = self.mapping.before_nodes
        return [n for n in order if n in names]

    def link_methods(self, side: str, node: str) -> dict[str, str]:
        """counterpart -> how the link was made ("from_node", "name", ...), to say how sure it is."""
        links = self.mapping.after_of(node) if side == LEFT else self.mapping.before_of(node)
        return {(k.after if side == LEFT else k.before): k.method for k in links}

    def describe_link(self, side: str, node: str) -> str:
        """A status line: 'conv2d became convolution (from_node)' or 'mul has no counterpart'."""
        methods = self.link_methods(side, node)
        if not methods:
            return f"{node} has no counterpart on the other side"
        verb = "became" if side == LEFT else "came from"
        parts = [f"{n} ({methods[n]})" for n in self.counterparts(side, node)]
        return f"{node} {verb} {', '.join(parts)}"

    # -- ops -----------------------------------------------------------------------------------------------------
    def nodes_for_op(self, side: str, op: str) -> list[str]:
        """The nodes on `side` that call `op` (any graph of the program)."""
        return list(self._ops[side].get(op, []))

    def row(self, op: str) -> OpRow | None:
        return next((r for r in self.rows if r.op == op), None)

    @property
    def non_core_total(self) -> int | None:
        return None if self.non_core_ops is None else sum(self.non_core_ops.values())

    def non_core_text(self) -> str:
        """One line for the view: which ops of the right program are outside core ATen, or that it is unknown."""
        if self.non_core_ops is None:
            return "Core ATen check: decompose a program to see which ops are outside the core ATen opset."
        if not self.non_core_ops:
            return "Every op on the right is in the core ATen opset."
        ops = ", ".join(f"{op} ×{n}" for op, n in self.non_core_ops.items())
        return f"{plural(sum(self.non_core_ops.values()), 'call')} outside the core ATen opset: {ops}"


def session_from_decomposition(decomposition: Decomposition, before: Program, after: Program) -> CompareSession:
    """A session for a decomposition: torch's provenance mapping from its mapping file, the op diff counted on the
    two programs, and the ops the job found outside core ATen (unknown when it judged none)."""
    mapping = read_mapping(decomposition.mapping)
    non_core = decomposition.non_core_ops
    target = decomposition.target
    right_title = f"{target} ATen" if target in ("core", "functional") else \
        f"table {Path(decomposition.table or '').name}"
    left_title = f"{Path(decomposition.program).name} [{before.name}]"
    return CompareSession(before, after, mapping, op_rows(before, after, non_core), non_core, "decomposition",
                          left_title=left_title, right_title=right_title.strip())


def session_from_programs(left: Program, right: Program, mapping: NodeMapping, left_title: str = "",
                          right_title: str = "") -> CompareSession:
    """A session for any two programs (no provenance between them): nodes paired by `mapping`, the structural
    diff's (core/diff/, `ProgramDiff.node_mapping`)."""
    return CompareSession(left, right, mapping, op_rows(left, right), None, "guess", left_title=left_title or left.name,
                          right_title=right_title or right.name)


class LinkedDocumentModel(DocumentModel):
    """A DocumentModel that also paints `linked` nodes as selected: the counterparts of what the user selected on
    the other side of a comparison, which may be several nodes (a decomposition splits one node into many)."""

    def __init__(self, archive: Archive, program: Program) -> None:
        super().__init__(archive, program)
        self.linked: list[str] = []

    def highlight(self) -> Highlight:
        h = super().highlight()
        if len(self.levels) > 1:  # inside a subgraph: the mapping names top-level nodes only
            return h
        scene = self.level.scene
        for name in self.linked:
            item = scene.visible_item(name)
            path = group_of(item)
            if path is not None:
                h.groups[path] = SELECTED
            else:
                h.nodes[item] = SELECTED
        return h


__all__ = ["CompareSession", "LEFT", "LinkedDocumentModel", "OpRow", "RIGHT", "op_rows", "session_from_decomposition",
           "session_from_programs"]
