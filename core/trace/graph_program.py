"""A graph of a torch.compile trace as the program model the graph view shows for a `.pt2` (core/model/program.py),
so the graph view, its index, Details, Find and the diff take it unchanged: `program_from_artifact(trace, "[0/0]",
"dynamo_output_graph")`.

The graph is read from its Python text with `ast` (core/trace/graph_text.py), its values typed from the annotations
(core/trace/graph_values.py), its nodes grouped by module from weight names and source lines
(core/trace/graph_modules.py, each node given an `nn_module_stack` as export writes it), and its parameters and
buffers made the signature's weights, so they are drawn as rows of the op that reads them, as a `.pt2`'s are.
AOTAutograd's and Inductor's graphs take their weights' names from Dynamo's graph of the same compile. Nothing of the
trace is run.
"""
from __future__ import annotations

from pt2_viewer.core.model.program import (
    Edge,
    Graph,
    InputKind,
    InputSpec,
    NodeOp,
    OutputKind,
    OutputSpec,
    Program,
    Ref,
    Signature,
    Symbol,
    Value,
)
from pt2_viewer.core.model.tensor_meta import SymDim
from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.graph_modules import WeightName, aot_input_index, node_modules, weight_name
from pt2_viewer.core.trace.graph_text import TextGraph, parse_graph_text
from pt2_viewer.core.trace.graph_values import ValueTypes
from pt2_viewer.core.trace.model import Artifact, Compile, Trace
from pt2_viewer.core.trace.reader import GRAPHS

DYNAMO = "dynamo_output_graph"
POST_GRAD = "inductor_post_grad_graph"
AOT_COMPILED = frozenset({"aot_forward_graph", "aot_inference_graph", "aot_backward_graph"})
NOT_GRAPHS = {"inductor_output_code": "Inductor's output code is Python source, not a graph"}
_RECORDS = {label: kind for kind, label in GRAPHS.items()}


def graph_artifacts(compile_: Compile) -> list[tuple[str, int]]:
    """(artifact name, its index among the compile's artifacts of that name) of every graph the compile logged, in
    the log's order: what `program_from_artifact` opens (a training compile logs two post-grad graphs)."""
    seen: dict[str, int] = {}
    out: list[tuple[str, int]] = []
    for a in compile_.artifacts:
        if a.name in GRAPHS and a.name not in NOT_GRAPHS:
            out.append((a.name, seen.get(a.name, 0)))
            seen[a.name] = seen.get(a.name, 0) + 1
    return out


def program_from_artifact(trace: Trace, compile_id: str, artifact_name: str, index: int = 0,
                          rank: int | None = None) -> Program:
    """The graph `artifact_name` (torch's record name, `dynamo_output_graph`, or the `trace` command's label,
    `dynamo`) of compile `compile_id` (`[0/1]`) as a Program; `index` picks among the compile's graphs of that name
    (the backward's post-grad graph is the second), `rank` among ranks (the first rank's by default). TraceError
    with one line for a graph it cannot find or read."""
    compile_ = _compile(trace, compile_id, rank)
    name = _RECORDS.get(artifact_name, artifact_name)
    if name in NOT_GRAPHS:
        raise TraceError(f"{compile_id} {artifact_name}: {NOT_GRAPHS[name]}; open it as text")
    artifact = _artifact(compile_, name, index)
    what = f"{compile_id} {name}" + (f" #{index + 1}" if index else "")
    text_graph = parse_graph_text(artifact.text(), what)
    dynamo = text_graph if name == DYNAMO else _parsed(compile_.artifact(DYNAMO), what)
    if name == POST_GRAD and (source := _aot_source(compile_, index, what)) is not None:
        weights = _by_position(text_graph, source, _weights(source, dynamo))
    else:
        weights = _weights(text_graph, dynamo)
    graph = _graph(text_graph, weights, ValueTypes(), top=True)
    return _program(graph, text_graph, weights, compile_, name, index)


def _compile(trace: Trace, compile_id: str, rank: int | None) -> Compile:
    found = [c for c in trace.compiles if str(c.id) == compile_id and (rank is None or c.rank == rank)]
    if not found:
        where = f" on rank {rank}" if rank is not None else ""
        raise TraceError(f"{compile_id}: no such compile id in this trace{where}; `pt2-viewer trace` lists them")
    return found[0]


def _artifact(compile_: Compile, name: str, index: int) -> Artifact:
    found = [a for a in compile_.artifacts if a.name == name]
    if index >= len(found) or index < 0:
        have = ", ".join(dict.fromkeys(a for a, _ in graph_artifacts(compile_))) or "none"
        raise TraceError(f"{compile_.id}: no graph {name}" + (f" #{index + 1}" if index else "")
                         + f" in this compile (its graphs: {have})")
    return found[index]


def _parsed(artifact: Artifact | None, what: str) -> TextGraph | None:
    """Another graph of the compile, to name this one's inputs; None where there is none or it does not read (the
    graph asked for still opens, its inputs unnamed)."""
    if artifact is None:
        return None
    try:
        return parse_graph_text(artifact.text(), what)
    except TraceError:
        return None


def _aot_source(compile_: Compile, index: int, what: str) -> TextGraph | None:
    """The AOTAutograd graph Inductor's post-grad graph `index` was compiled from: the forward's (or the inference
    graph) first, then the backward's, as torch compiles and logs them."""
    sources = [a for a in compile_.artifacts if a.name in AOT_COMPILED]
    return _parsed(sources[index], what) if index < len(sources) else None


def _by_position(graph: TextGraph, source: TextGraph, named: dict[str, WeightName]) -> dict[str, WeightName]:
    """`graph`'s inputs named as the inputs of `source` at their positions (Inductor keeps AOTAutograd's inputs in
    order, renamed `argN_1`), where both have as many."""
    mine, theirs = _placeholders(graph), _placeholders(source)
    if len(mine) != len(theirs):
        return {}
    return {value: named[other] for value, other in zip(mine, theirs) if other in named}


def _placeholders(graph: TextGraph) -> list[str]:
    return [n.outputs[0] for n in graph.nodes if n.op is NodeOp.PLACEHOLDER and n.outputs and n.outputs[0]]


def _weights(graph: TextGraph, dynamo: TextGraph | None) -> dict[str, WeightName]:
    """Placeholder value -> the parameter or buffer it is: by its own name in Dynamo's graph, else by the Dynamo
    input its comment (or its position, where no input has a comment) says it is."""
    mine = _placeholders(graph)
    if graph is dynamo or dynamo is None:
        found = {v: w for v in mine if (w := weight_name(v)) is not None}
        for n in graph.nodes:  # torch < 2.5: `l__self___fc_weight = self.L__self___fc_weight`, lifted as export does
            if n.op is NodeOp.GET_ATTR and n.outputs and n.outputs[0] and (w := weight_name(n.target)) is not None:
                found[n.outputs[0]] = w
                n.op = NodeOp.PLACEHOLDER
        return found
    theirs = _placeholders(dynamo)
    noted = {n.outputs[0]: aot_input_index(note) for n in graph.nodes
             if (note := graph.input_notes.get(n.name)) and n.outputs and n.outputs[0]}
    out: dict[str, WeightName] = {}
    for position, value in enumerate(mine):
        at = noted.get(value) if noted else (position if len(mine) == len(theirs) else None)
        if at is not None and 0 <= at < len(theirs) and (w := weight_name(theirs[at])) is not None:
            out[value] = w
    return out


def _module_stack(path: str) -> str:
    """`a.b` as torch's `nn_module_stack` text (`key,path,class;...`, core/model/metadata.py): `a,a,;a.b,a.b,`."""
    parts = path.split(".")
    return ";".join(f"{p},{p}," for p in (".".join(parts[:i + 1]) for i in range(len(parts))))


def _graph(text: TextGraph, weights: dict[str, WeightName], types: ValueTypes, top: bool = False) -> Graph:
    values: dict[str, Value] = {}
    producer: dict[str, str] = {}
    subgraphs = {name: _graph(sub, {}, types) for name, sub in text.subgraphs.items()}
    graph_values: set[str] = set()  # the values that are a subgraph (a cond's branch)
    for node in text.nodes:
        for out in node.outputs:
            if out is None:
                continue
            if node.op is NodeOp.GET_ATTR and node.target in subgraphs:
                values[out] = Value(out, "graph", producer=node.name)
                graph_values.add(out)
            else:
                value = types.value(out, text.annotations.get(out))
                value.producer = node.name
                values[out] = value
            producer[out] = node.name
    stacks: dict[str, str] = {}
    by_path: dict[str, str] = {}  # one string per module: parse_module_stack's cache then shares one tuple
    for name, path in node_modules(text, weights).items():
        if path:
            stack = by_path.get(path)
            stacks[name] = stack if stack is not None else by_path.setdefault(path, _module_stack(path))
    edges: list[Edge] = []
    by_name = {n.name: n for n in text.nodes}
    for node in text.nodes:
        stack = stacks.get(node.name)
        if stack:
            node.metadata["nn_module_stack"] = stack
        for ref in node.input_refs():
            src = producer.get(ref)
            if src is not None:
                edges.append(Edge(src, node.name, ref))
                if ref in graph_values:
                    sub = subgraphs.get(by_name[src].target)
                    if sub is not None and sub not in node.subgraphs:
                        node.subgraphs = (*node.subgraphs, sub)
    inputs: list[str | None] = [n.outputs[0] for n in text.nodes if n.op is NodeOp.PLACEHOLDER]
    output = next((n for n in reversed(text.nodes) if n.op is NodeOp.OUTPUT), None)
    returned = output.inputs[0].value if output is not None and output.inputs else []
    outputs: list[str | None] = [x.value if isinstance(x, Ref) else None for x in returned] \
        if isinstance(returned, list) else []
    return Graph("" if top else text.name, text.nodes, edges, values, inputs, outputs)


def _program(graph: Graph, text: TextGraph, weights: dict[str, WeightName], compile_: Compile, name: str,
             index: int) -> Program:
    specs = [InputSpec(n.name, weights[n.outputs[0]].kind, weights[n.outputs[0]].fqn)
             if n.outputs and n.outputs[0] in weights else InputSpec(n.name, InputKind.USER_INPUT, None)
             for n in graph.nodes if n.op is NodeOp.PLACEHOLDER]
    outputs = [OutputSpec(o, OutputKind.USER_OUTPUT, None) for o in graph.outputs if o]
    symbols: dict[str, Symbol] = {}
    for spec in specs:
        node = graph.node_by_name[spec.name]
        value = graph.values.get(node.outputs[0] or "") if node.outputs else None
        if spec.kind is not InputKind.USER_INPUT or value is None:
            continue
        if value.expr is not None and value.expr.text in value.expr.symbols:  # `s77: "Sym(s77)"`: the symbol
            symbols.setdefault(value.expr.text, Symbol(value.expr.text, None, None))
        for i, d in enumerate(value.meta.sizes if value.meta is not None else ()):
            if isinstance(d, SymDim) and d.symbols == (d.text,):
                symbols.setdefault(d.text, Symbol(d.text, None, None)).sources.append(f"{spec.name}.shape[{i}]")
    label = GRAPHS.get(name, name) + (f" #{index + 1}" if index else "")
    metadata = {"format": "torch.compile trace", "compile id": str(compile_.id), "graph": name,
                "log": str(compile_.log)}
    if compile_.rank is not None:
        metadata["rank"] = str(compile_.rank)
    if compile_.frame is not None:
        metadata["function"] = f"{compile_.frame.function} ({compile_.frame.file}:{compile_.frame.line})"
    if compile_.cache_hit:
        metadata["cache hit"] = "replayed from an earlier run's cache: its source lines are that run's"
    return Program(name=f"{label} {compile_.id}", graph=graph, signature=Signature(specs, outputs),
                   range_constraints={s: (None, None) for s in symbols}, symbols=list(symbols.values()),
                   module_call_graph=[], weights=[], constants=[], dialect="torch.compile", opset_version={},
                   schema_version="", torch_version="", metadata=metadata)
