"""What the details panel says about one node, as sections of rows, some rows linking to another node, a subgraph or
a source line.

The panel only renders these rows and turns a clicked link into a signal, so everything a reader learns about a node
is decided (and tested) here: the operator and overload, each schema-named argument as a literal or as a link to the
node that produces it, the outputs' dtype, shape and stride, the module path with each module's class, and the stack
trace with the user's own frames first. A HOP node (cond, map, while_loop ...) links to its subgraphs by role name.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.overlays import Overlay
from pt2_viewer.core.graph.readable import literal, type_text
from pt2_viewer.core.model.metadata import user_frames_first
from pt2_viewer.core.model.node_kinds import input_kinds, node_kind
from pt2_viewer.core.model.program import Graph, Node, NodeOp, Program, Ref, TensorMeta, Value
from pt2_viewer.core.util.words import plural

# Operand names of torch's higher-order ops, whose archive arguments have no schema names.
HOP_ARG_NAMES: dict[str, tuple[str, ...]] = {
    "cond": ("pred", "true_fn", "false_fn", "operands"),
    "map_impl": ("body_fn", "xs", "additional_inputs"),
    "while_loop": ("cond_fn", "body_fn", "carried_inputs", "additional_inputs"),
    "scan": ("combine_fn", "init", "xs", "additional_inputs"),
    "associative_scan": ("combine_fn", "xs", "additional_inputs"),
    "invoke_subgraph": ("subgraph", "identifier", "operands"),
    "wrap_with_set_grad_enabled": ("enable_grad", "body_fn"),
    "wrap_with_autocast": ("device_type", "dtype", "enabled", "cache_enabled", "body_fn"),
}
_METADATA_SHOWN = {"stack_trace", "nn_module_stack"}


class NodeLink(msgspec.Struct, frozen=True):
    """Select this node in the graph shown."""

    node: str


class SubgraphLink(msgspec.Struct, frozen=True):
    """Open `subgraph`, a body of the HOP node `hop`."""

    hop: str
    subgraph: str


class SourceLink(msgspec.Struct, frozen=True):
    """Open this file at this (1-based) line."""

    file: str
    line: int


class CopyLink(msgspec.Struct, frozen=True):
    """Copy `text` to the clipboard: the whole of a value the row shows cut (a hostile file's 50 MB target), so the
    value stays to be had on demand while no label, index or row holds it."""

    text: str


Link = NodeLink | SubgraphLink | SourceLink | CopyLink


class DetailRow(msgspec.Struct, frozen=True):
    """One line of the Details panel: a label and its text, maybe a link."""

    label: str
    text: str
    link: Link | None = None
    note: str = ""  # secondary text: a type, a full class name, a function name
    muted: bool = False  # less important (library stack frames)


class DetailSection(msgspec.Struct):
    """A titled section of the Details panel."""

    title: str
    rows: list[DetailRow] = msgspec.field(default_factory=list)


class NodeDetails(msgspec.Struct):
    """What the Details panel shows for a node, a group or the program."""

    name: str
    title: str  # "aten.linear.default", "placeholder", "output"
    kind: str  # the colour family from pt2_viewer.core.model.node_kinds ("matmul", "hop", "parameter" ...)
    sections: list[DetailSection]

    def section(self, title: str) -> DetailSection | None:
        return next((s for s in self.sections if s.title == title), None)

    def links(self) -> list[Link]:
        return [r.link for s in self.sections for r in s.rows if r.link is not None]


def node_details(program: Program, graph: Graph, node_name: str, index: GraphIndex | None = None) -> NodeDetails:
    """Everything the details panel shows about `node_name` in `graph` (the top graph or a HOP subgraph).

    `index` (the graph's GraphIndex) adds a "Users" section. Raises KeyError naming the graph if there is no such node.
    """
    node = graph.node_by_name.get(node_name)
    if node is None:
        where = f"subgraph '{graph.name}'" if graph.name else f"program '{program.name}'"
        raise KeyError(f"There is no node named '{node_name}' in {where}.")
    kind = node_kind(node, input_kinds(program) if graph is program.graph else None)
    sections = [_operator(node, kind)]
    if node.op is NodeOp.PLACEHOLDER:
        sections.append(_input(program, graph, node))
    elif node.op is NodeOp.GET_ATTR:
        sections.append(_subgraph_owner(graph, node))
    elif node.op is NodeOp.OUTPUT:
        sections.append(_returned(program, graph, node))
    else:
        arguments = _arguments(graph, node)
        sections.append(DetailSection("Subgraphs", [r for r in arguments.rows if isinstance(r.link, SubgraphLink)]))
        sections.append(arguments)
    if node.op is not NodeOp.GET_ATTR:
        sections.append(_outputs(graph, node))
    if index is not None:
        sections.append(DetailSection("Users", [_user_row(graph, u) for u in index.users.get(node.name, [])]))
    sections.append(DetailSection("Module", [
        DetailRow(s.path or "(root)", s.short_class, note=s.class_name) for s in node.module_stack
    ]))
    sections.append(DetailSection("Stack trace", [
        DetailRow(f"{_basename(f.file)}:{f.line}", f.code, SourceLink(f.file, f.line), note=f"in {f.function}",
                  muted=not f.is_user)
        for f in user_frames_first(node.stack)
    ]))
    extra = [DetailRow(k, v) for k, v in node.metadata.items() if k not in _METADATA_SHOWN]
    sections.append(DetailSection("Metadata", extra))
    title = node.target.removeprefix("torch.ops.") if node.op is NodeOp.CALL_FUNCTION else node.op.value
    return NodeDetails(node.name, title, kind, [s for s in sections if s.rows])


def value_description(meta: TensorMeta) -> str:
    """`float32  [s77, 3]  stride (3, 1)`, plus device and layout when they are not the everyday ones."""
    text = f"{meta.dtype}  {meta.shape_text}  stride ({', '.join(str(s) for s in meta.strides)}"
    text += ",)" if len(meta.strides) == 1 else ")"
    if meta.device != "cpu":
        text += f"  {meta.device}"
    if meta.layout != "strided":
        text += f"  {meta.layout}"
    if meta.requires_grad:
        text += "  requires_grad"
    return text


def _operator(node: Node, kind: str) -> DetailSection:
    rows = [DetailRow("op", node.op.value)]
    if node.op is NodeOp.CALL_FUNCTION:
        if node.full_target is None:
            rows.append(DetailRow("target", node.target))
        else:
            rows.append(DetailRow("target", node.target, CopyLink(node.full_target), note="click to copy all of it"))
        if node.namespace:
            rows.append(DetailRow("namespace", node.namespace))
        rows.append(DetailRow("operator", node.op_name))
        if node.overload:
            rows.append(DetailRow("overload", node.overload))
    rows.append(DetailRow("kind", kind))
    return DetailSection("Operator", rows)


def _arguments(graph: Graph, node: Node) -> DetailSection:
    hop_names = HOP_ARG_NAMES.get(node.op_name, ()) if node.namespace == "higher_order" else ()
    rows: list[DetailRow] = []
    for i, arg in enumerate(node.inputs):
        name = arg.name or (hop_names[i] if i < len(hop_names) else f"arg{i}")
        label = f"{name}=" if arg.kind == "keyword" else name
        rows.extend(_argument_rows(graph, node, label, arg.value))
    return DetailSection("Arguments", rows)


def _argument_rows(graph: Graph, node: Node, label: str, value: Any) -> list[DetailRow]:
    """One row for a literal; one row per element for a value reference or a list holding references."""
    if isinstance(value, Ref):
        return [_ref_row(graph, label, value.value)]
    if isinstance(value, Graph):
        return [DetailRow(label, value.name, SubgraphLink(node.name, value.name), note="subgraph")]
    if isinstance(value, (list, tuple)) and any(isinstance(v, (Ref, Graph, list, tuple)) for v in value):
        rows: list[DetailRow] = []
        for i, v in enumerate(value):
            rows.extend(_argument_rows(graph, node, f"{label}[{i}]", v))
        return rows or [DetailRow(label, "[]")]
    return [DetailRow(label, literal(value))]


def _ref_row(graph: Graph, label: str, value_name: str) -> DetailRow:
    value = graph.values.get(value_name)
    producer = value.producer if value is not None else None
    text = value_name if producer in (None, value_name) else f"{value_name}  (output of {producer})"
    return DetailRow(label, text, NodeLink(producer) if producer else None, note=_value_type(value))


def _input(program: Program, graph: Graph, node: Node) -> DetailSection:
    if graph is not program.graph:
        return DetailSection("Input", [DetailRow("kind", f"input of subgraph '{graph.name}'")])
    spec = next((s for s in program.signature.inputs if s.name == node.name), None)
    if spec is None:
        return DetailSection("Input", [])
    rows = [DetailRow("kind", spec.kind.value)]
    if spec.target:
        rows.append(DetailRow("target", spec.target))
    if spec.persistent is not None:
        rows.append(DetailRow("persistent", str(spec.persistent)))
    if spec.constant is not None:
        rows.append(DetailRow("constant", literal(spec.constant)))
    stored = next((w for w in (*program.weights, *program.constants) if w.name == spec.target), None)
    if stored is not None:
        rows.append(DetailRow("stored as", stored.path, note=f"{stored.nbytes} bytes"))
    targets = weight_targets(program)
    twin = targets.tied.get(node.name)
    if twin is not None:  # no user of its own: the graph uses the same tensor under its twin's name
        rows.append(DetailRow("tied to", twin, NodeLink(twin), note=f"{targets[twin]}, the same tensor"))
    return DetailSection("Input", rows)


def _subgraph_owner(graph: Graph, node: Node) -> DetailSection:
    """A `get_attr` node stands for a subgraph: link it to the HOP that runs it."""
    rows = []
    for hop in graph.nodes:
        for sub in hop.subgraphs:
            if sub.name == node.target:
                rows.append(DetailRow("open", f"{sub.name}  ({len(sub.nodes)} nodes)", SubgraphLink(hop.name, sub.name),
                                      note=f"body of {hop.name}"))
                rows.append(DetailRow("used by", hop.name, NodeLink(hop.name)))
    return DetailSection("Subgraph", rows)


def _returned(program: Program, graph: Graph, node: Node) -> DetailSection:
    specs = {s.name: s for s in program.signature.outputs} if graph is program.graph else {}
    rows = []
    values = node.inputs[0].value if node.inputs else []
    for i, ref in enumerate(values):
        if not isinstance(ref, Ref):
            rows.append(DetailRow(f"[{i}]", literal(ref)))
            continue
        spec = specs.get(ref.value)
        label = f"[{i}] {spec.kind.value}" if spec else f"[{i}]"
        if spec and spec.target:
            label += f" {spec.target}"
        rows.append(_ref_row(graph, label, ref.value))
    return DetailSection("Returns", rows)


def _outputs(graph: Graph, node: Node) -> DetailSection:
    rows = []
    for i, out in enumerate(node.outputs):
        if out is None:
            rows.append(DetailRow(f"[{i}]", "None"))
            continue
        value = graph.values.get(out)
        rows.append(DetailRow(out, _value_text(value), note=value.kind if value and value.kind != "tensor" else ""))
    return DetailSection("Outputs", rows)


def _value_text(value: Value | None) -> str:
    if value is None:
        return "?"
    if value.meta is not None:
        return value_description(value.meta)
    return _value_type(value)


def _value_type(value: Value | None) -> str:
    """Short type: `f32[s77, 3]`, `Sym(u0)`, a custom object's class."""
    if value is None:
        return ""
    return type_text(value) or value.class_fqn or value.kind


def _user_row(graph: Graph, name: str) -> DetailRow:
    """A consumer: its op as the label, its name as the link, its first output's type as the note."""
    user = graph.node_by_name[name]
    label = user.op_name if user.op is NodeOp.CALL_FUNCTION else user.op.value
    first = user.outputs[0] if user.outputs else None
    return DetailRow(label, name, NodeLink(name), note=_value_type(graph.values.get(first)) if first else "")


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def measure_sections(measures: Mapping[str, Overlay], node: str) -> list[DetailSection]:
    """A section per overlay that has figures for `node` (a numerics comparison's error, a run's time), titled by
    the overlay's name, so the node "Go to first divergence" selects shows its error values beside its op."""
    out = []
    for name, overlay in measures.items():
        rows = overlay.detail_rows(node)
        if rows:
            out.append(DetailSection(name, [DetailRow(label, text) for label, text in rows]))
    return out


def symbol_label(name: str, sources: Iterable[str], dim_names: Mapping[str, str] | None = None) -> str:
    """`batch (s77)` where the script named a dim the symbol stands for (`dim_names`: {"x.shape[0]": "batch"},
    core/export/dim_names.py), its name first as the shapes show it and torch's symbol as an aside; else `s77`.
    Details, the Symbols panel and the report's Symbols tab label a symbol this one way."""
    named = dim_names or {}
    names = list(dict.fromkeys(named[s] for s in sources if s in named))
    return f"{', '.join(names)} ({name})" if names else name


def node_tooltip(program: Program, graph: Graph, node_name: str, index: GraphIndex | None = None,
                 dim_names: Mapping[str, str] | None = None) -> str:
    """What hovering a node says that its box does not print: the full target, the module path (with the module's
    class), the output types, who uses it, and the script's names for the symbols in its types (`dim_names`, by
    the input dim they stand for: {"x.shape[0]": "batch"}, core/export/dim_names.py). Empty for a name not in
    `graph`."""
    node = graph.node_by_name.get(node_name)
    if node is None:
        return ""
    if node.op is NodeOp.CALL_FUNCTION:
        head = f"{node.name}  ·  {node.target.removeprefix('torch.ops.')}"
    elif node.op is NodeOp.PLACEHOLDER and graph is program.graph:
        spec = next((s for s in program.signature.inputs if s.name == node.name), None)
        head = f"{node.name}  ·  {spec.kind.value.lower().replace('_', ' ') if spec else 'input'}" + (
            f" {spec.target}" if spec is not None and spec.target and spec.target != node.name else "")
    else:
        head = f"{node.name}  ·  {node.op.value}"
    lines = [head]
    scopes = node.module_stack
    if scopes and scopes[-1].path:
        lines.append(f"module: {scopes[-1].path} ({scopes[-1].short_class})")
    types = [_value_type(graph.values.get(o)) if o else "None" for o in node.outputs]
    if types:
        shown = ", ".join(t for t in types[:4] if t) + (f", … {len(types) - 4} more" if len(types) > 4 else "")
        if shown:
            lines.append(f"{'outputs' if len(types) > 1 else 'output'}: {shown}")
    if index is not None:
        users = index.users.get(node.name, ())
        if users:
            more = f", … {len(users) - 4} more" if len(users) > 4 else ""
            lines.append(f"{plural(len(users), 'user')}: {', '.join(users[:4])}{more}")
        elif node.op is not NodeOp.OUTPUT:
            lines.append("no users")
        if dim_names:
            named = [f"{sym.name} = {dim_names[src]}" for sym in program.symbols
                     for src in sym.sources[:1] if src in dim_names
                     and node.name in index.symbol_users.get(sym.name, [])]
            if named:
                lines.append(f"named dims: {', '.join(named)}")
    return "\n".join(lines)
