"""`pt2-viewer info`: the archive as one JSON object (for scripts) or a readable summary (for people).

The JSON shape is a public contract (users' scripts rely on it): `torch_version`, `schema_version`, `programs`
(each with `name`, `dialect`, `node_count`, `nodes`, `subgraphs`, `inputs`, `outputs`, `range_constraints`).
An ExecuTorch `.pte` has its own: `{"format": "pte", "schema_version", "methods": [{name, operators, delegates,
inputs, outputs, memory}]}` (`pte_info`).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pt2_viewer.core.model.program import Archive, Graph, Node, Program
from pt2_viewer.core.pt2.aoti import aoti_models
from pt2_viewer.core.pt2.errors import ArchiveError


def _node_entry(n: Node) -> dict[str, str]:
    return {"name": n.name, "op": n.op.value, "target": n.target}


def _subgraphs(g: Graph) -> list[dict[str, Any]]:
    out = []
    for n in g.nodes:
        for sg in n.subgraphs:
            out.append({"name": sg.name, "nodes": [_node_entry(x) for x in sg.nodes], "subgraphs": _subgraphs(sg)})
    return out


def program_info(p: Program) -> dict[str, Any]:
    return {
        "name": p.name,
        "dialect": p.dialect,
        "node_count": p.node_count,
        "nodes": [_node_entry(n) for n in p.graph.nodes],
        "subgraphs": _subgraphs(p.graph),
        "inputs": [{"name": s.name, "kind": s.kind.value, "target": s.target} for s in p.signature.inputs],
        "outputs": [{"name": s.name, "kind": s.kind.value, "target": s.target} for s in p.signature.outputs],
        "range_constraints": {k: [lo, hi] for k, (lo, hi) in p.range_constraints.items()},
    }


def archive_info(a: Archive) -> dict[str, Any]:
    if a.executorch is not None:
        return pte_info(a)
    info: dict[str, Any] = {
        "torch_version": a.torch_version,
        "schema_version": a.schema_version,
        "programs": [program_info(p) for p in a.programs],
    }
    if a.aoti is not None:
        info["aoti"] = {"models": a.aoti.models, "devices": a.aoti.devices, "files": len(a.aoti.files)}
    return info


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def summary_text(a: Archive) -> str:
    if a.executorch is not None:
        return pte_text(a)
    lines = [f"{a.path}", f"  torch {a.torch_version or '?'}, schema {a.schema_version or '?'}, "
                          f"{len(a.programs)} program(s)"]
    if a.aoti is not None:
        lines.append(f"  AOTInductor package: models {', '.join(a.aoti.models) or '?'} compiled for "
                     f"{', '.join(a.aoti.devices) or 'an unknown device'} ({len(a.aoti.files)} files). "
                     "It holds compiled code, not a program graph." if not a.programs else
                     f"  Also holds AOTInductor code for {', '.join(a.aoti.devices) or '?'}.")
        lines += aoti_model_lines(a)
    for p in a.programs:
        ops = Counter(n.target for n in p.graph.nodes if n.op.value == "call_function")
        lines.append(f"\nprogram '{p.name}' ({p.dialect}): {p.node_count} nodes, {len(ops)} distinct ops, "
                     f"{len(p.weights)} weights ({_bytes(p.weight_bytes)})")
        lines.append("  inputs:")
        for s in p.signature.inputs:
            v = p.graph.values.get(s.name)
            t = v.type_text if v else ""
            lines.append(f"    {s.name:<28} {s.kind.value:<16} {s.target or '':<28} {t}")
        lines.append("  outputs:")
        for o in p.signature.outputs:
            v = p.graph.values.get(o.name)
            t = v.type_text if v else ""
            lines.append(f"    {o.name:<28} {o.kind.value:<16} {o.target or '':<28} {t}")
        if p.symbols:
            lines.append("  symbols:")
            for sym in p.symbols:
                lo = "-inf" if sym.min is None else sym.min
                hi = "inf" if sym.max is None else sym.max
                src = ", ".join(sym.sources)
                label = ("unbacked" if sym.unbacked else "backed") + (" float" if "float" in sym.kind else "")
                lines.append(f"    {sym.name:<8} [{lo}, {hi}] {label:<9} {src}".rstrip())
        lines.append("  top ops:")
        for target, count in ops.most_common(10):
            lines.append(f"    {count:>6}  {target}")
    for w in a.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def aoti_text(archive: Archive) -> str:
    """What the window shows for an AOTInductor package (compiled code, no graph): its models, devices, files and
    metadata."""
    aoti = archive.aoti
    if aoti is None:
        return "This archive holds no program."
    lines = [f"{Path(archive.path).name} is an AOTInductor package: compiled code and metadata, no program graph "
             "to show.", "", f"Models: {', '.join(aoti.models) or '?'}",
             f"Compiled for: {', '.join(aoti.devices) or 'unknown device'}", "", "Files:"]
    lines += [f"  {f}" for f in aoti.files]
    for name, meta in aoti.metadata.items():
        lines += ["", f"{name}:"] + [f"  {k}: {v}" for k, v in meta.items()]
    return "\n".join(lines)


def aoti_model_lines(a: Archive) -> list[str]:
    """One line per compiled model of an AOTInductor package: device, platform, constants, sources and flags."""
    try:
        models = aoti_models(a)
    except ArchiveError as e:
        return [f"    (its compiled models could not be read: {e})"]
    out = []
    for m in models:
        where = " ".join(v for v in (m.metadata.get("AOTI_PLATFORM", ""), m.metadata.get("AOTI_MACHINE", ""),
                                     m.metadata.get("AOTI_CPU_ISA", "")) if v)
        out.append(f"    {m.name}: {m.device}{f' ({where})' if where else ''}, {len(m.constants)} constant(s) "
                   f"({_bytes(m.constant_bytes)}), inputs {', '.join(m.inputs) or '?'}, outputs "
                   f"{', '.join(m.outputs) or '?'}, {len(m.sources)} source file(s), {len(m.compile_flags)} compile "
                   "flag(s)")
    return out


# -- ExecuTorch .pte ------------------------------------------------------------------------------------------------
def pte_info(a: Archive) -> dict[str, Any]:
    """`info --json` of a `.pte`: `{"format": "pte", "schema_version", "methods": [{name, operators, delegates,
    inputs, outputs, memory}]}`, in parity with ExecuTorch's own deserializer (tests/core/pte/test_pte_parity.py)."""
    et = a.executorch
    assert et is not None
    return {
        "format": "pte",
        "schema_version": et.schema_version,
        "methods": [{
            "name": m.name,
            "operators": m.operators,
            "delegates": [{"backend": d.backend, "bytes": d.nbytes} for d in m.delegates],
            "inputs": [{"dtype": s.dtype, "shape": list(s.shape) if s.shape is not None else None} for s in m.inputs],
            "outputs": [{"dtype": s.dtype, "shape": list(s.shape) if s.shape is not None else None}
                        for s in m.outputs],
            "memory": {"buffers": m.memory.buffers, "peak": m.memory.peak},
        } for m in et.methods],
    }


def pte_text(a: Archive) -> str:
    et = a.executorch
    assert et is not None
    lines = [a.path, f"  ExecuTorch program ({et.identifier}, schema version {et.schema_version}), "
                     f"{len(et.methods)} method(s), {_bytes(et.file_bytes)} ({_bytes(et.program_bytes)} program, "
                     f"{len(et.segments)} segments)"]
    for m in et.methods:
        lines.append(f"\nmethod '{m.name}': {m.instructions} instructions, {m.values} values, "
                     f"{len(m.operators)} operators, {len(m.delegates)} delegate call(s)")
        lines.append(f"  memory: {len(m.memory.buffers)} planned buffer(s) "
                     f"[{', '.join(_bytes(b) for b in m.memory.buffers)}], peak {_bytes(m.memory.peak)}")
        for title, specs in (("inputs", m.inputs), ("outputs", m.outputs)):
            lines.append(f"  {title}:")
            lines += [f"    {s.value:<16} {s.dtype:<10} {list(s.shape) if s.shape is not None else ''}" for s in specs]
        if m.delegates:
            lines.append("  delegates:")
            backends = Counter(d.backend for d in m.delegates)
            for backend, n in backends.most_common():
                total = sum(d.nbytes for d in m.delegates if d.backend == backend)
                lines.append(f"    {n:>4} x {backend:<24} {_bytes(total)} of payload")
        lines.append("  operators:")
        lines += [f"    {op}" for op in m.operators]
    if et.constants:
        lines.append(f"\nconstants: {len(et.constants)} ({_bytes(sum(c.nbytes for c in et.constants))})")
    for w in a.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
