"""`pt2-viewer info FILE.onnx --json`: the model as the file holds it, a stable shape for scripts.

    {"format": "onnx", "ir_version", "opset": {domain: version}, "producer",
     "graphs": [{"name", "node_count",
                 "nodes": [{"name", "op_type", "domain", "source": {"node", "module"} | null}],
                 "inputs": [{"name", "dtype", "shape"}], "outputs": [...], "initializers": [...]}]}

`graphs[0]` is the main graph, then each subgraph (If's branches, Loop's and Scan's bodies) in the order the file
holds them; a graph's `node_count` and `nodes` are its own nodes as the file holds them (names unchanged, a
subgraph's nodes not counted in its parent's). `source` is the FX node and module torch's exporter recorded
(core/onnx/provenance.py), null for a node with no such metadata. `dtype` is torch's spelling (`float32`), `shape`
a list of ints, symbolic dims by name (`"batch"`) and null for a dim the file leaves unknown; null for a value with
no tensor shape. `initializers` lists the graph's weights as `{"name", "dtype", "shape"}`.
"""
from __future__ import annotations

from typing import Any

from pt2_viewer.core.onnx import provenance
from pt2_viewer.core.onnx.dtypes import dtype_name, type_of
from pt2_viewer.core.onnx.reader import graphs_of


def _value(v: Any) -> dict[str, Any]:
    dtype, shape = type_of(v.type) if v.HasField("type") else ("unknown", None)
    return {"name": v.name, "dtype": dtype, "shape": shape}


def _node(n: Any) -> dict[str, Any]:
    link = provenance.source_link({p.key: p.value for p in n.metadata_props})
    return {"name": n.name, "op_type": n.op_type, "domain": n.domain or "ai.onnx",
            "source": None if link is None else {"node": link.node, "module": link.module}}


def graph_info(g: Any) -> dict[str, Any]:
    return {
        "name": g.name,
        "node_count": len(g.node),
        "nodes": [_node(n) for n in g.node],
        "inputs": [_value(v) for v in g.input],
        "outputs": [_value(v) for v in g.output],
        "initializers": [{"name": t.name, "dtype": dtype_name(t.data_type), "shape": list(t.dims)}
                         for t in g.initializer],
    }


def onnx_info(model: Any) -> dict[str, Any]:
    return {
        "format": "onnx",
        "ir_version": model.ir_version,
        "opset": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "producer": " ".join(x for x in (model.producer_name, model.producer_version) if x),
        "graphs": [graph_info(g) for g in graphs_of(model.graph)],
    }
