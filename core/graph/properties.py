"""What Details shows when nothing is selected: the program's own properties, as Netron's model sidebar shows a
model's (name, format, versions, inputs and outputs, weights, symbols).

An empty Details panel wastes the place users look first; the program's facts belong there. The rows reuse
`pt2_viewer.core.graph.details` (sections of rows, links to nodes) so the panel draws them as it draws a node's.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pt2_viewer.core.graph.details import DetailRow, DetailSection, NodeDetails, NodeLink, symbol_label
from pt2_viewer.core.graph.summary import human_count, signature_rows
from pt2_viewer.core.model.executorch import ExecutorchProgram
from pt2_viewer.core.model.expr import range_text
from pt2_viewer.core.model.program import Archive, InputKind, NodeOp, OutputKind, Program, StoredTensor
from pt2_viewer.core.util.words import format_bytes, plural

MAX_LISTED = 50  # inputs, outputs or symbols listed one per row; the rest are counted


def program_properties(archive: Archive | None, program: Program,
                       dim_names: Mapping[str, str] | None = None) -> NodeDetails:
    """Sections: Program, Inputs, Outputs, Weights, Symbols (Symbols only when there are any). `dim_names` (a
    script's {"x.shape[0]": "batch"}, core/export/dim_names.py) labels a named symbol `batch (s77)`."""
    sections = [_program(archive, program), *_signature(program), _weights(program)]
    if program.symbols:
        sections.append(_symbols(program, dim_names))
    return NodeDetails(name=program.name, title=Path(archive.path).name if archive else program.name,
                       kind="program", sections=sections)


def _program(archive: Archive | None, program: Program) -> DetailSection:
    graphs = program.all_graphs()
    call = NodeOp.CALL_FUNCTION  # compared by identity: an Enum's `.value` is a property, ~4x slower at 10k nodes
    calls = sum(1 for _, g in graphs for n in g.nodes if n.op is call)
    rows = [DetailRow("name", program.name)]
    if archive is not None and archive.executorch is not None:
        rows += _pte_rows(archive, archive.executorch)
    elif program.dialect == "ONNX":
        rows += _onnx_rows(archive, program)
    elif program.dialect == "torch.compile":
        rows += _compiled_rows(archive, program)
    else:
        rows += _pt2_rows(archive, program)
    nodes = plural(len(program.graph.nodes), "node")
    if len(graphs) > 1:
        nodes += f", {plural(len(graphs) - 1, 'subgraph')}"
    rows.append(DetailRow("graph", nodes, note=plural(calls, "op call")))
    return DetailSection("Program", rows)


def _pt2_rows(archive: Archive | None, program: Program) -> list[DetailRow]:
    """A torch.export program's: its dialect, the torch that exported it, torch's schema, the archive's format."""
    rows = [DetailRow("dialect", program.dialect or "?"),
            DetailRow("torch", program.torch_version or "?", note="the version that exported it"),
            DetailRow("schema", program.schema_version or "?", note="torch's serialized program schema")]
    if archive is not None:
        fmt = " ".join(x for x in (archive.archive_format, archive.archive_version) if x)
        rows.append(DetailRow("archive", fmt or "?", note=str(archive.path)))
        if len(archive.programs) > 1:
            rows.append(DetailRow("programs", ", ".join(p.name for p in archive.programs)))
    if program.opset_version:
        rows.append(DetailRow("opset", ", ".join(f"{k} {v}" for k, v in sorted(program.opset_version.items()))))
    return rows


def _pte_rows(archive: Archive, et: ExecutorchProgram) -> list[DetailRow]:
    """An ExecuTorch `.pte`'s: its flatbuffer schema (the file identifier and `Program.version`), the backends its
    delegates run on, its methods. It records no torch version and has no torch.export schema: none is shown."""
    calls = Counter(d.backend for m in et.methods for d in m.delegates)
    backends = (", ".join(f"{b} ({plural(n, 'delegate call')})" for b, n in sorted(calls.items())) if calls else
                "none: every op runs on ExecuTorch's kernels")
    rows = [DetailRow("format", "ExecuTorch program (.pte)", note=str(archive.path)),
            DetailRow("schema", f"{et.identifier}, version {et.schema_version}",
                      note="ExecuTorch's flatbuffer schema (file identifier, Program.version)"),
            DetailRow("backends", backends, note="the delegates' backends"),
            DetailRow("file", format_bytes(et.file_bytes), note=f"program {format_bytes(et.program_bytes)}")]
    if len(et.methods) > 1:
        rows.append(DetailRow("methods", ", ".join(m.name for m in et.methods)))
    return rows


def _onnx_rows(archive: Archive | None, program: Program) -> list[DetailRow]:
    """An ONNX model's: its IR version, the opset of each domain it imports, the tool that produced it."""
    ir = program.schema_version.removeprefix("IR ").strip() or "?"
    opsets = ", ".join(f"{k} {v}" for k, v in sorted(program.opset_version.items())) or "?"
    rows = [DetailRow("format", "ONNX model (.onnx)", note=str(archive.path) if archive is not None else ""),
            DetailRow("IR version", ir, note="the ONNX protobuf's IR version"),
            DetailRow("opsets", opsets, note="the operator set of each domain it imports"),
            DetailRow("producer", program.metadata.get("producer", "") or "(not named)",
                      note="the tool that wrote it")]
    return rows


def _compiled_rows(archive: Archive | None, program: Program) -> list[DetailRow]:
    """A graph of a torch.compile trace (core/trace/graph_program.py): the torch that compiled it where the trace
    names it, the compile and graph it is; it was read from the graph's printed code, so it has no serialized schema
    and none is shown (not 'schema ?')."""
    said = program.metadata
    rows = [DetailRow("format", "torch.compile trace", note=str(archive.path) if archive is not None else "")]
    if program.torch_version:
        rows.append(DetailRow("torch", program.torch_version, note="the version that compiled it"))
    rows += [DetailRow(title, said[key]) for key, title in (("compile id", "compile id"), ("graph", "logged as"),
                                                          ("rank", "rank"), ("function", "function"),
                                                          ("cache hit", "cache hit")) if said.get(key)]
    return rows


def _signature(program: Program) -> list[DetailSection]:
    user_in = {s.name for s in program.signature.inputs if s.kind is InputKind.USER_INPUT}
    user_out = {s.name for s in program.signature.outputs if s.kind is OutputKind.USER_OUTPUT}
    other_in = Counter(s.kind.value.lower() for s in program.signature.inputs if s.kind is not InputKind.USER_INPUT)
    other_out = Counter(s.kind.value.lower() for s in program.signature.outputs
                        if s.kind is not OutputKind.USER_OUTPUT)
    sections = []
    all_rows = signature_rows(program, program.graph, only=user_in | user_out)
    for title, users, others, direction in (("Inputs", user_in, other_in, "input"),
                                            ("Outputs", user_out, other_out, "output")):
        rows = []
        shown = [r for r in all_rows if r.direction == direction and r.name in users]
        for r in shown[:MAX_LISTED]:
            rows.append(DetailRow(r.name, f"{r.dtype}{r.shape}" if r.shape.startswith("[") else
                                  " ".join(x for x in (r.dtype, r.shape) if x), link=NodeLink(r.node)))
        if len(shown) > MAX_LISTED:
            rows.append(DetailRow("…", f"{len(shown) - MAX_LISTED} more (Signature tab)", muted=True))
        for kind, n in sorted(others.items()):
            rows.append(DetailRow("", "+ " + plural(n, kind.replace("_", " ")), muted=True))
        if not rows:
            rows.append(DetailRow("", "none", muted=True))
        sections.append(DetailSection(title, rows))
    return sections


def _weights(program: Program) -> DetailSection:
    params = [w for w in program.weights if w.is_param]
    buffers = [w for w in program.weights if not w.is_param]
    rows = []
    seen: dict[int, int | None] = {}
    for label, tensors in (("parameters", params), ("buffers", buffers), ("constants", program.constants)):
        if not tensors:
            continue
        numels = [_numel(t, seen) for t in tensors]
        known = [n for n in numels if n is not None]
        count = (f"{human_count(sum(known))} values" if len(known) == len(numels) else
                 f"{human_count(sum(known))}+ values") if known else ""
        rows.append(DetailRow(label, ", ".join(x for x in (plural(len(tensors), "tensor"), count,
                                                           format_bytes(sum(t.nbytes for t in tensors))) if x)))
    if not rows:
        rows.append(DetailRow("", "no stored weights", muted=True))
    return DetailSection("Weights", rows)


def _numel(t: StoredTensor, seen: dict[int, int | None]) -> int | None:
    """`t`'s element count, its metadata parsed once per distinct object (a cached program shares one per shape)."""
    key = id(t.meta_json)
    if key not in seen or t.meta_json is None:
        seen[key] = t.meta.numel() if t.meta is not None else None
    return seen[key]


def _symbols(program: Program, dim_names: Mapping[str, str] | None = None) -> DetailSection:
    rows = [DetailRow(symbol_label(s.name, s.sources, dim_names), range_text(s.min, s.max),
                      note=", ".join(s.sources) or ("unbacked" if s.unbacked else ""))
            for s in program.symbols[:MAX_LISTED]]
    if len(program.symbols) > MAX_LISTED:
        rows.append(DetailRow("…", f"{len(program.symbols) - MAX_LISTED} more (Symbols tab)", muted=True))
    return DetailSection("Symbols", rows)
