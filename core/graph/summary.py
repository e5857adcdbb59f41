"""The tables of the summary, signature and symbols panels: a program's facts, its op histogram, its inputs and
outputs, and its symbolic dimensions, each computed here so the widgets only lay them out.

The op histogram counts call_function nodes of every graph (HOP subgraphs included), keyed by the op without the
`torch.ops.` prefix (`aten.linear.default`). Sizes are the stored bytes of weights and constants as the zip entries
give them; the element count comes from their shapes, so nothing is ever read from the tensors themselves.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Container, Iterable

import msgspec

from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.readable import type_text
from pt2_viewer.core.model.expr import range_text as format_range
from pt2_viewer.core.model.node_kinds import node_kind
from pt2_viewer.core.model.program import Archive, Graph, NodeOp, Program
from pt2_viewer.core.util.words import format_bytes, plural

UNKNOWN_FIELD_CHARS = 200


class OpCount(msgspec.Struct, frozen=True):
    """How many times an operator is called, for the Summary's histogram."""

    op: str  # "aten.linear.default", "_operator.ge"
    count: int
    kind: str = "other"  # colour family (pt2_viewer.core.model.node_kinds): "matmul", "view" ...

    @property
    def short(self) -> str:
        """A bar label: `linear` for `aten.linear.default`; other overloads stay (`gt.Scalar`)."""
        parts = self.op.split(".")
        if len(parts) >= 3 and parts[0] not in ("_operator", "operator", "builtins", "math"):
            return parts[1] if parts[2] == "default" else f"{parts[1]}.{parts[2]}"
        return parts[-1]


class ProgramSummary(msgspec.Struct):
    """The Summary tab's figures for one program."""

    program: str
    torch_version: str
    schema_version: str
    dialect: str
    archive_format: str
    archive_version: str
    node_count: int  # nodes of the top graph, placeholders and output included
    nodes_in_subgraphs: int
    subgraph_count: int
    op_count: int  # call_function nodes in every graph
    histogram: list[OpCount]  # most frequent first, ties by name
    input_count: int
    output_count: int
    weight_count: int  # stored weights and constants
    weight_bytes: int
    weight_elements: int | None  # None when a stored tensor has no known shape
    symbol_count: int
    opset_version: dict[str, int] = msgspec.field(default_factory=dict)
    warnings: list[str] = msgspec.field(default_factory=list)
    unknown_fields: dict[str, str] = msgspec.field(default_factory=dict)  # field -> its JSON, shortened

    def facts(self) -> list[tuple[str, str]]:
        """(label, text) rows for the summary table."""
        ops = ", ".join(f"{k} {v}" for k, v in sorted(self.opset_version.items()))
        archive = " ".join(x for x in (self.archive_format, self.archive_version) if x)
        elements = "" if self.weight_elements is None else f", {human_count(self.weight_elements)} elements"
        rows = [
            ("program", self.program),
            ("torch", self.torch_version or "?"),
            ("schema", self.schema_version or "?"),
            ("archive", archive or "?"),
            ("dialect", self.dialect or "?"),
            ("opset", ops or "?"),
            ("nodes", f"{self.node_count} in the top graph"
                      + (f", {self.nodes_in_subgraphs} in {self.subgraph_count} subgraphs" if self.subgraph_count
                         else "")),
            ("ops", f"{self.op_count} calls of {len(self.histogram)} distinct ops"),
            ("inputs / outputs", f"{self.input_count} / {self.output_count}"),
            ("weights", f"{self.weight_count} tensors, {format_bytes(self.weight_bytes)}{elements}"),
            ("symbols", str(self.symbol_count)),
        ]
        return rows


class SignatureRow(msgspec.Struct, frozen=True):
    """One row of the Signature tab: an input or output, its kind, target and type."""

    direction: str  # "input" or "output"
    name: str  # the value's name
    kind: str  # "USER_INPUT", "PARAMETER", "BUFFER_MUTATION" ... ("SUBGRAPH_INPUT" inside a HOP subgraph)
    target: str  # parameter/buffer fqn, "" for user inputs
    dtype: str
    shape: str
    node: str  # the node to select: the placeholder, or the producer of an output


class SymbolRow(msgspec.Struct, frozen=True):
    """One row of the Symbols tab: a symbol, its range, where it comes from and what constrains it."""

    name: str
    min: int | None
    max: int | None
    unbacked: bool
    sources: tuple[str, ...]  # input dims it stands for, "x.shape[0]"
    hint: int | None  # the example value export traced with
    asserts: tuple[str, ...]  # runtime asserts that mention it, as expressions ("u0 <= 192")
    nodes: tuple[str, ...]  # nodes of the graph shown whose outputs' shapes or values use it

    @property
    def range_text(self) -> str:
        return format_range(self.min, self.max)


def program_summary(archive: Archive | None, program: Program) -> ProgramSummary:
    graphs = program.all_graphs()
    calls = [n for _, g in graphs for n in g.nodes if n.op is NodeOp.CALL_FUNCTION]
    ops = Counter(n.target.removeprefix("torch.ops.") for n in calls)
    kinds = {n.target.removeprefix("torch.ops."): node_kind(n) for n in calls}
    stored = [*program.weights, *program.constants]
    numels = [w.meta.numel() if w.meta is not None else None for w in stored]
    return ProgramSummary(
        program=program.name,
        torch_version=program.torch_version,
        schema_version=program.schema_version,
        dialect=program.dialect,
        archive_format=archive.archive_format if archive else "",
        archive_version=archive.archive_version if archive else "",
        node_count=len(program.graph.nodes),
        nodes_in_subgraphs=sum(len(g.nodes) for path, g in graphs if path),
        subgraph_count=len(graphs) - 1,
        op_count=sum(ops.values()),
        histogram=[OpCount(op, n, kinds[op]) for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))],
        input_count=len(program.signature.inputs),
        output_count=len(program.signature.outputs),
        weight_count=len(stored),
        weight_bytes=program.weight_bytes,
        weight_elements=None if any(n is None for n in numels) else sum(n for n in numels if n is not None),
        symbol_count=len(program.symbols),
        opset_version=dict(program.opset_version),
        warnings=list(archive.warnings) if archive else [],
        unknown_fields={k: _shorten(json.dumps(v, default=str)) for k, v in program.unknown_fields.items()},
    )


def nodes_with_op(graph: Graph, op: str) -> list[str]:
    """Names of the nodes in `graph` that call `op` (as the histogram spells it)."""
    return [n.name for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION and n.target.removeprefix("torch.ops.") == op]


def signature_rows(program: Program, graph: Graph, only: set[str] | None = None) -> list[SignatureRow]:
    """The program's inputs then outputs; for a HOP subgraph, that subgraph's own inputs and outputs. `only`: just
    the rows of these names (a 10k-node program has thousands of weight inputs, each a shape to parse)."""
    if graph is program.graph:
        ins = [(s.name, s.kind.value, s.target or "") for s in program.signature.inputs]
        outs = [(s.name, s.kind.value, s.target or "") for s in program.signature.outputs]
    else:
        ins = [(n, "SUBGRAPH_INPUT", "") for n in graph.inputs if n]
        outs = [(n, "SUBGRAPH_OUTPUT", "") for n in graph.outputs if n]
    rows = []
    for direction, specs in (("input", ins), ("output", outs)):
        for name, kind, target in specs:
            if only is not None and name not in only:
                continue
            value = graph.values.get(name)
            meta = value.meta if value is not None else None
            node = (value.producer if value is not None and value.producer else name)
            rows.append(SignatureRow(
                direction, name, kind, target,
                dtype=meta.dtype if meta else (value.kind if value else "?"),
                shape=meta.shape_text if meta else (type_text(value) if value else ""),
                node=node,
            ))
    return rows


def symbol_rows(program: Program, index: GraphIndex) -> list[SymbolRow]:
    """Every symbol of the program, with the nodes of `index.graph` that use it and the asserts that bound it."""
    asserts_index = index if index.graph is program.graph else GraphIndex(program.graph)
    users = index.symbol_users
    return [
        SymbolRow(
            name=s.name, min=s.min, max=s.max, unbacked=s.unbacked, sources=tuple(s.sources), hint=s.hint,
            asserts=tuple(assert_expression(m) for m in asserts_index.asserts_for(s.name)),
            nodes=tuple(users.get(s.name, [])),
        )
        for s in program.symbols
    ]


_ASSERT_MSG = re.compile(r"expression (?P<expr>.+?) on node '[^']*'$")


def assert_expression(message: str) -> str:
    """`Runtime assertion failed for expression u0 >= 0 on node 'ge'` -> `u0 >= 0` (other messages unchanged)."""
    m = _ASSERT_MSG.search(message)
    return m.group("expr") if m else message


def human_count(n: int) -> str:
    for div, unit in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def _shorten(text: str) -> str:
    return text if len(text) <= UNKNOWN_FIELD_CHARS else text[:UNKNOWN_FIELD_CHARS - 1] + "…"


def group_count_text(ops: int, nodes: int) -> str:
    """What a module group's box says it holds: its ops (the calls a user thinks of as the module's work), or its
    nodes when it has no op. The window's box, its tooltip and the report all say it this way (issue 30: "581 ops"
    on the box, "729 nodes" in the tooltip and "56 nodes" in the report counted three different things unsaid)."""
    return plural(ops, "op") if ops else plural(nodes, "node")


def open_groups_text(groups: Iterable[str], leaves: Container[str], expanded: Container[str]) -> str:
    """"15 of 15 module groups open": the groups that open and close (a one-op module is its op's box, never one),
    counted as the report's header counts them (core/report/assets.py: "15 module groups (+60 one-op modules drawn
    as their op)", where it said "75 module groups" beside the window's "Expanded 15 groups")."""
    shown = [path for path in groups if path and path not in leaves]
    return f"{sum(1 for path in shown if path in expanded):,} of {plural(len(shown), 'module group')} open"


def group_count_tip(ops: int, nodes: int) -> str:
    """The same count with what else the group holds, for a tooltip: "581 ops; 729 nodes with its weights, inputs
    and the ops' getitems"."""
    if not ops or ops == nodes:
        return group_count_text(ops, nodes)
    return f"{plural(ops, 'op')}; {plural(nodes, 'node')} with its weights, inputs and the ops' getitems"
