"""Read a `.onnx` into an `Archive` of one `Program`, without torch and without running anything.

The protobuf is parsed by the `onnx` package (`onnx.load`), never by hand, and with `load_external_data=False`: the
weights a model over 2 GB keeps in `*.onnx.data` files are never read to view its graph. Every tensor that names an
external file is checked first: a `location` that leaves the model's folder (an absolute path, `..`, a link out) is
refused, the onnx path-traversal CVE class (CVE-2024-27318). A damaged or truncated file, a protobuf nested past the
parser's limit (a "bomb"), or a file that is not ONNX at all becomes one `OnnxError` line.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.onnx.errors import OnnxError

MAX_MODEL_BYTES = 2 * 1024 * 1024 * 1024  # protobuf's own limit on one message: a bigger model uses external data
MAX_SUBGRAPH_DEPTH = 32  # If inside Loop inside If ...: real models nest a few levels


def load_model(path: str | os.PathLike[str]) -> Any:
    """The file's `ModelProto`, its external data unread and every external `location` checked; `OnnxError` with
    one line for the user on any problem."""
    p = Path(path)
    name = p.name
    try:
        size = p.stat().st_size
        if p.is_dir():
            raise OnnxError(f"'{name}' is a folder, not an ONNX model.")
    except OSError as e:
        raise OnnxError(f"Could not read '{p}': {e.strerror or e}.") from None
    if size > MAX_MODEL_BYTES:
        raise OnnxError(f"'{name}' is {size / 1e9:.1f} GB, more than one ONNX protobuf can hold (2 GB): a model that "
                        "big keeps its weights in external data. Save it with external data "
                        "(onnx.save(..., save_as_external_data=True)).")
    try:
        import onnx  # deferred: onnx imports numpy and protobuf, which the first view of a .pt2 does not pay for
    except ImportError as e:
        raise OnnxError(f"Reading '{name}' needs the onnx package, which this Python cannot import ({e}). Install "
                        "it with: pip install onnx") from None

    try:
        model = onnx.load(str(p), load_external_data=False)
    except OSError as e:
        raise OnnxError(f"Could not read '{p}': {e.strerror or e}.") from None
    except Exception as e:  # protobuf's DecodeError (a bomb, a truncation), onnx's own: no common base but this
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise OnnxError(f"'{name}' is not a readable ONNX model ({detail}): the file is damaged, truncated or nested "
                        "deeper than protobuf reads. Export or copy it again.") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise OnnxError(f"'{name}' is not an ONNX model: it holds no graph. Export it again with torch.onnx.export, "
                        "or open the .pt2 it came from.")
    check_external_data(model, p)
    return model


def read_onnx(path: str | os.PathLike[str]) -> Archive:
    """The model as an `Archive` holding one `Program` (core/onnx/program_map.py)."""
    from pt2_viewer.core.onnx.program_map import model_program

    p = Path(path)
    model = load_model(p)
    try:
        program, warnings = model_program(model)
    except RecursionError:
        raise OnnxError(f"'{p.name}' nests its subgraphs deeper than this viewer reads.") from None
    return Archive(path=str(p), root="", entries=[], programs=[program], archive_format="onnx",
                   archive_version=f"IR {model.ir_version}", byteorder="little", warnings=warnings)


def graphs_of(graph: Any, depth: int = 0) -> list[Any]:
    """`graph` and every subgraph its nodes' attributes hold (If's branches, Loop's and Scan's bodies), outermost
    first; `OnnxError` past MAX_SUBGRAPH_DEPTH."""
    if depth > MAX_SUBGRAPH_DEPTH:
        raise OnnxError(f"The graph nests subgraphs more than {MAX_SUBGRAPH_DEPTH} deep, more than this viewer reads.")
    out = [graph]
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                out.extend(graphs_of(sub, depth + 1))
    return out


def _tensors(model: Any) -> list[Any]:
    """Every tensor the model holds: initializers (sparse ones' values too) and tensor attributes (Constant's)."""
    out: list[Any] = []
    graphs = graphs_of(model.graph) + [f for f in model.functions]
    for g in graphs:
        out.extend(getattr(g, "initializer", ()))
        out.extend(s.values for s in getattr(g, "sparse_initializer", ()))
        for node in g.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    out.append(attr.t)
                out.extend(attr.tensors)
    return out


def check_external_data(model: Any, path: Path) -> None:
    """Refuse a tensor whose external data `location` is absolute or resolves outside the model's folder. Nothing is
    opened: the files are not read to view the graph."""
    folder = path.resolve().parent
    for t in _tensors(model):
        if t.data_location != 1:  # TensorProto.EXTERNAL
            continue
        location = next((e.value for e in t.external_data if e.key == "location"), "")
        target = (folder / location).resolve() if location else folder
        if not location or os.path.isabs(location) or not target.is_relative_to(folder) or target == folder:
            raise OnnxError(f"'{path.name}' is refused: its tensor '{t.name}' keeps its data at '{location}', "
                            "outside the model's folder (an ONNX file may only point at files beside it). Do not "
                            "open files from people you do not trust.")
