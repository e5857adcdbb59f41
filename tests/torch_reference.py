"""What torch itself says a `.pt2` holds, in the shape of `pt2_viewer.core.pt2.info.archive_info`, plus every graph's
edges.

The parity tests hold our reader (plain JSON, no torch) against torch's own deserializer: the same file loaded back
with `load_pt2` (what `torch.export.load` uses), read through torch's public objects (`ExportedProgram.graph`,
`graph_signature`, `range_constraints`, `dialect`). Nothing here looks at the archive's JSON, so a reader bug cannot
hide by being copied into the expectation.

One modelling difference is reconciled here, once (see `folds_into_producer`): the archive keeps a multi-output op as
one node, while torch's FX graph adds an `operator.getitem` node per output.

torch's answers are stored with each fixture (`stored`): computed once (by `make fixtures`, or by the first test that
asks) and saved beside the archive, under a key naming the archive's bytes and the code that computed the answer, so
a test compares against stored truth instead of loading, decomposing or running the program with torch again.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import operator
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.fx
from torch._export.serde.schema import SCHEMA_VERSION
from torch.export import ExportedProgram
from torch.export.pt2_archive._package import load_pt2
from torch.utils._sympy.numbers import int_oo

from tests.fixture_root import FIXTURE_ROOT, SHARED_FIXTURE_ROOT


@dataclass(frozen=True, order=True)
class EdgeKey:
    """An edge as plain strings, comparable between our `pt2_viewer.core.model.program.Edge` and torch's FX graph."""

    src: str
    dst: str
    value: str


REPO_ROOT = Path(__file__).resolve().parent.parent
STORED_UNDER = (FIXTURE_ROOT, SHARED_FIXTURE_ROOT)  # answers are stored only for cached fixtures, not a test's files


def load_programs(path: str | Path) -> dict[str, ExportedProgram]:
    """Every program in the archive, loaded by torch (model name -> program), after the imports its pytree types and
    custom ops need: HuggingFace's output types; for the zoo, torchvision and transformers (shim first), then the
    module of any output type torch says is not registered (`CLIPOutput` lives in its model's module)."""
    import transformers.modeling_outputs  # noqa: F401  (registers the HF output types a program's spec may name)

    libraries = False
    tried: set[str] = set()
    while True:
        try:
            return dict(load_pt2(str(path)).exported_programs)
        except Exception as e:  # torch names a missing pytree type or custom op in several exception types
            if not libraries:
                from tests.zoo.torchvision_shim import import_model_libraries

                import_model_libraries()
                libraries = True
                continue
            found = re.search(r"Deserializing ([\w.]+) in pytree is not registered", str(e))
            module = found.group(1).rsplit(".", 1)[0] if found else None
            if module is None or module in tried:
                raise
            tried.add(module)
            importlib.import_module(module)


# --------------------------------------------------------------------------------------------------------------------
# Stored answers.


@functools.cache
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def stored_path(path: str | Path, kind: str, compute: Callable[[], Any]) -> Path:
    """Where torch's answer `kind` about the archive at `path` is stored: `ARCHIVE.reference/KIND-KEY.pt`, the key
    naming the archive's bytes and `compute`'s code (its source and the functions of its module it reaches)."""
    from tests.programs import builder_key

    path = Path(path).resolve()
    st = path.stat()
    key = builder_key(compute, _file_digest(path, st.st_size, st.st_mtime_ns))
    return path.parent / f"{path.name}.reference" / f"{kind}-{key}.pt"


def stored(path: str | Path, kind: str, compute: Callable[[], Any]) -> Any:
    """torch's answer `kind` about the fixture at `path`: read back if stored for these very bytes and this version
    of `compute`, else computed with torch and stored. Answers are plain data and tensors (saved by `torch.save`,
    read back with `weights_only=True`: nothing is unpickled but tensors and containers). A file outside the cache
    (a test's own output) is computed every time."""
    if not any(Path(path).resolve().is_relative_to(root) for root in STORED_UNDER):
        return compute()
    where = stored_path(path, kind, compute)
    if where.exists():
        try:
            return torch.load(where, weights_only=True)
        except Exception:  # a file from an older torch or a half-written one: compute again
            pass
    answer = compute()
    where.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=f".{where.name}.")
    os.close(fd)
    try:
        torch.save(answer, tmp)
        torch.load(tmp, weights_only=True)  # stored only if it reads back as plain data
        os.replace(tmp, where)
    except Exception:
        os.unlink(tmp)
    return answer


# --------------------------------------------------------------------------------------------------------------------
# THE RECONCILIATION RULE (multi-output ops)
#
# The archive stores an op with several outputs (topk, split, cond, map, any HOP) as ONE node listing all its output
# values; torch's FX graph has that node plus one `operator.getitem` node per used output. Our model keeps the
# archive's one node, so on the torch side:
#   * a getitem node whose first argument is a call_function node is dropped from the node list (it folds into the
#     node that produced the tuple), and
#   * an FX edge from such a getitem to a consumer becomes an edge from the getitem's producer to that consumer,
#     carrying the getitem's name (which is the name of the value in the archive).
# A getitem of a getitem (an op returning a Tensor[] inside a tuple) folds all the way up to the op itself.
# A getitem on anything else (say a placeholder) is a real node in the archive too and stays.


def folds_into_producer(node: torch.fx.Node) -> bool:
    """True for the getitem nodes that the archive folds into the multi-output node they index."""
    return (
        node.op == "call_function"
        and node.target is operator.getitem
        and isinstance(node.args[0], torch.fx.Node)
        and node.args[0].op == "call_function"
    )


def producer_of(node: torch.fx.Node) -> torch.fx.Node:
    """The node that produces `node`'s value in the archive's model: itself, or the op a folded getitem indexes."""
    while folds_into_producer(node):
        node = node.args[0]  # type: ignore[assignment]
    return node


# --------------------------------------------------------------------------------------------------------------------
# Nodes, edges and subgraphs of one FX graph.


def archive_spelling(target: Any) -> str:
    """A call_function target as the archive spells it. Mirrors torch's `GraphModuleSerializer.serialize_operator`:
    `torch.ops.aten.linear.default`, `torch.ops.higher_order.cond`, `_operator.add`."""
    if isinstance(target, str):
        return target
    module = target.__module__
    if module.startswith("torch._ops"):
        return f"{module.replace('torch._ops', 'torch.ops')}.{target.__name__}"
    return f"{module}.{target.__name__}"


def node_entry(node: torch.fx.Node) -> dict[str, str]:
    """`{name, op, target}` as `pt2-viewer info --json` prints a node."""
    if node.op == "placeholder":
        target = node.name
    elif node.op == "output":
        return {"name": "output", "op": "output", "target": "output"}
    elif node.op == "get_attr":
        target = str(node.target)
    else:
        target = archive_spelling(node.target)
    return {"name": node.name, "op": node.op, "target": target}


def kept_nodes(graph: torch.fx.Graph) -> list[torch.fx.Node]:
    return [n for n in graph.nodes if not folds_into_producer(n)]


def graph_nodes(graph: torch.fx.Graph) -> list[dict[str, str]]:
    return [node_entry(n) for n in kept_nodes(graph)]


def graph_edges(graph: torch.fx.Graph) -> set[EdgeKey]:
    """One edge per (producer, consumer, value), after folding getitems; a consumer node's name is "output" for the
    output node (its FX name)."""
    edges: set[EdgeKey] = set()
    for consumer in kept_nodes(graph):
        dst = "output" if consumer.op == "output" else consumer.name
        for source in consumer.all_input_nodes:
            edges.add(EdgeKey(producer_of(source).name, dst, source.name))
    return edges


def subgraph_modules(gm: torch.fx.GraphModule) -> list[tuple[torch.fx.Node, torch.fx.GraphModule]]:
    """(get_attr node, the GraphModule it fetches) in graph order: the HOP bodies (cond branches, map body...)."""
    found = []
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            attr = operator.attrgetter(str(node.target))(gm)
            if isinstance(attr, torch.fx.GraphModule):
                found.append((node, attr))
    return found


def graph_subgraphs(gm: torch.fx.GraphModule) -> list[dict[str, Any]]:
    """`subgraphs` as info prints them: `{name, nodes, subgraphs}`, nested."""
    return [
        {"name": str(node.target), "nodes": graph_nodes(sub.graph), "subgraphs": graph_subgraphs(sub)}
        for node, sub in subgraph_modules(gm)
    ]


def subgraph_edges(gm: torch.fx.GraphModule) -> dict[str, set[EdgeKey]]:
    """Edges of every subgraph, nested ones included, keyed by a path of subgraph names
    ("body_graph_0/true_graph_0")."""
    out: dict[str, set[EdgeKey]] = {}
    for node, sub in subgraph_modules(gm):
        name = str(node.target)
        out[name] = graph_edges(sub.graph)
        for inner, edges in subgraph_edges(sub).items():
            out[f"{name}/{inner}"] = edges
    return out


def hop_subgraph_names(graph: torch.fx.Graph) -> dict[str, list[str]]:
    """For every node that takes subgraphs (a HOP), the names of its subgraph operands in argument order."""
    out: dict[str, list[str]] = {}
    for node in graph.nodes:
        names = [str(a.target) for a in node.all_input_nodes if a.op == "get_attr"]
        if node.op == "call_function" and names:
            out[node.name] = names
    return out


# --------------------------------------------------------------------------------------------------------------------
# The program- and archive-level expectation.


def _bound(value: Any) -> int | None:
    """A range end as info prints it: an int, or None when unbounded (torch's int_oo / sympy oo)."""
    if value in (int_oo, -int_oo) or getattr(value, "is_infinite", False):
        return None
    return int(value)


def program_expectation(name: str, ep: ExportedProgram) -> dict[str, Any]:
    nodes = graph_nodes(ep.graph)
    return {
        "name": name,
        "dialect": ep.dialect,
        "node_count": len(nodes),
        "nodes": nodes,
        "subgraphs": graph_subgraphs(ep.graph_module),
        "inputs": [
            {"name": spec.arg.name, "kind": spec.kind.name, "target": spec.target}
            for spec in ep.graph_signature.input_specs
        ],
        "outputs": [
            {"name": spec.arg.name, "kind": spec.kind.name, "target": spec.target}
            for spec in ep.graph_signature.output_specs
        ],
        "range_constraints": {
            str(symbol): [_bound(r.lower), _bound(r.upper)] for symbol, r in ep.range_constraints.items()
        },
    }


def expected_info(path: str | Path) -> dict[str, Any]:
    """What `archive_info(read_archive(path))` must equal, per torch. Programs are listed in name order; the files
    in this test suite were written by this torch, so its version and schema version are the archive's. Stored with
    the fixture."""
    return stored(path, "info", lambda: _torch_info(path))  # type: ignore[no-any-return]


def _torch_info(path: str | Path) -> dict[str, Any]:
    programs = load_programs(path)
    return {
        "torch_version": str(torch.__version__),  # plain str: TorchVersion is no plain data to store
        "schema_version": f"{SCHEMA_VERSION[0]}.{SCHEMA_VERSION[1]}",
        "programs": [program_expectation(name, programs[name]) for name in sorted(programs)],
    }


def expected_edges(path: str | Path) -> dict[str, dict[str, set[EdgeKey]]]:
    """model name -> graph path ("" for the top graph, "true_graph_0", "body_graph_0/true_graph_0") -> edges.
    Stored with the fixture (as sorted triples)."""
    triples = stored(path, "edges", lambda: _torch_edges(path))
    return {name: {graph: {EdgeKey(*e) for e in edges} for graph, edges in graphs.items()}
            for name, graphs in triples.items()}


def _torch_edges(path: str | Path) -> dict[str, dict[str, list[tuple[str, str, str]]]]:
    out: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    for name, ep in load_programs(path).items():
        graphs = {"": graph_edges(ep.graph)}
        graphs.update(subgraph_edges(ep.graph_module))
        out[name] = {graph: sorted((e.src, e.dst, e.value) for e in edges) for graph, edges in graphs.items()}
    return out


def expected_hop_subgraphs(path: str | Path) -> dict[str, dict[str, dict[str, list[str]]]]:
    """model name -> graph path -> {HOP node: its subgraph operands' names}, per torch (`hop_subgraph_names` on
    every graph, nested ones included). Stored with the fixture."""
    return stored(path, "hops", lambda: _torch_hops(path))  # type: ignore[no-any-return]


def _torch_hops(path: str | Path) -> dict[str, dict[str, dict[str, list[str]]]]:
    def walk(gm: torch.fx.GraphModule, prefix: str, out: dict[str, dict[str, list[str]]]) -> None:
        out[prefix] = hop_subgraph_names(gm.graph)
        for node, sub in subgraph_modules(gm):
            walk(sub, f"{prefix}/{node.target}" if prefix else str(node.target), out)

    result: dict[str, dict[str, dict[str, list[str]]]] = {}
    for name, ep in load_programs(path).items():
        result[name] = {}
        walk(ep.graph_module, "", result[name])
    return result
