"""The ONNX lower job's request and result (`core/deploy/onnx_lower.py`; the JSON is documented in docs/onnx.md,
"Lower to ONNX").

The result is what `pt2-viewer lower --to onnx --json` prints: `onnx`, `opset`, `dynamic_dims` and `nodes`, one row
per call_function node of the source saying what it became in the ONNX graph (the other fields are for the window
and the log)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pt2_viewer.core.jobs.schemas.base import Schema, items, local_path, optional
from pt2_viewer.core.jobs.schemas.failure import JobResult
from pt2_viewer.core.jobs.schemas.run import ProgramRequest

ONNX = "onnx"  # `lower --to`'s word for this job
BECAME, FUSED, DROPPED = "onnx", "fused", "dropped"  # a source node's fate


@dataclass
class OnnxLowerRequest(ProgramRequest):
    KIND = "onnx lower request"
    VERSIONED = True

    output: str | None = local_path()  # where to write the .onnx (default OUT/lowered.onnx)
    optimize: bool = True  # onnxscript's optimizer and rewrite rules (BatchNorm folded into Conv, ...)


@dataclass
class SourceFate(Schema):
    """One call_function node of the source and what it became: `onnx` (the ONNX nodes computing it, in `onnx`; `rule`
    where a rewrite rule remade them), `fused` (with another op into the ONNX nodes in `onnx` by the rewrite rule in
    `rule`), or `dropped` (no ONNX node computes it: folded to a constant, an identity removed, an assertion)."""

    KIND = "source fate"

    node: str
    target: str
    fate: str  # BECAME, FUSED or DROPPED
    onnx: list[str] = items()
    rule: str | None = optional()

    def became(self) -> str:
        """What it became, in words: `node_relu`, `fused by FuseBatchNormIntoConv into node_Conv_17`, `dropped`."""
        if self.fate == DROPPED:
            return "dropped"
        nodes = ", ".join(self.onnx[:6]) + (", …" if len(self.onnx) > 6 else "")
        if self.fate == FUSED:
            return f"fused by {self.rule} into {nodes}"
        return f"{nodes} (rewritten by {self.rule})" if self.rule else nodes


@dataclass
class OnnxLowerResult(JobResult):
    KIND = "onnx lower result"
    VERSIONED = True

    onnx: str | None = local_path(omit_none=True)
    opset: int | None = optional()
    dynamic_dims: list[str] | None = optional()  # the model's symbolic dims, as its inputs name them
    nodes: list[SourceFate] | None = optional()
    program: str | None = local_path(omit_none=True)
    program_name: str | None = optional()
    imported: list[str] | None = optional()
    imports: list[dict[str, Any]] | None = optional()
    seconds: dict[str, float] = items(dict)  # load, export, save
    log: list[str] = items()

    def counts(self) -> str:
        """`8 source ops: 4 became ONNX nodes, 4 fused, 0 dropped`."""
        rows = self.nodes or []
        n = {fate: sum(r.fate == fate for r in rows) for fate in (BECAME, FUSED, DROPPED)}
        ops = f"{len(rows)} source op" + ("" if len(rows) == 1 else "s")
        return f"{ops}: {n[BECAME]} became ONNX nodes, {n[FUSED]} fused, {n[DROPPED]} dropped"

    def source_to_onnx(self) -> dict[str, list[str]]:
        """Source node -> the ONNX nodes (by the file's names) it became or was fused into."""
        return {row.node: list(row.onnx) for row in self.nodes or [] if row.onnx}


__all__ = ["BECAME", "DROPPED", "FUSED", "ONNX", "OnnxLowerRequest", "OnnxLowerResult", "SourceFate"]
