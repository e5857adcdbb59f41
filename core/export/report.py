"""The schema of export_script's report.json, shared by the job that writes it and the window that reads it.

No torch and no Qt: `read_report(path)` turns report.json back into the dataclasses the job filled in (with
`Failure`, `GuardLog` and `SourceLine` objects), so the GUI and tests never pick the JSON apart by hand. The layout
is described in docs/worker.md.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from pt2_viewer.core.export.doctor import Diagnosis
from pt2_viewer.core.export.failures import Failure, SourceLine, failure_from_json
from pt2_viewer.core.export.guards import GuardLog, guard_log_from_json

REPORT_FILE = "report.json"
REPORT_FORMAT = "pt2-viewer-export-report"
REPORT_VERSION = 1
CONVENTION = "convention"  # ExportCall.source of the job's own export of `model`, and Rerun.call to name it


@dataclass
class ExportCall:
    """One export call, as recorded in report.json."""

    index: int
    source: str  # "script" (the script called export) or "convention" (the job exported model/example_args)
    line: SourceLine | None
    model: str
    strict: bool
    dynamic_shapes: str | None  # repr of what was passed
    dynamic_shapes_spec: dict[str, Any] | None  # the same as the JSON spec, when expressible
    inputs: list[str] = field(default_factory=list)
    input_shapes: dict[str, list[int]] = field(default_factory=dict)  # each tensor input's example shape
    ok: bool = False
    pt2: str | None = None  # file name in the output folder
    save_error: str | None = None
    duration_s: float = 0.0
    program: dict[str, Any] | None = None
    failure: Failure | None = None
    guards: GuardLog = field(default_factory=GuardLog)
    rerun: bool = False  # options came from the request's "rerun"
    problems: Diagnosis | None = None  # the export doctor's findings (request "diagnose": true; core/export/doctor.py)
    item_values: dict[str, Any] = field(default_factory=dict)  # script line -> what .item() gave there, run eagerly

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ExportCall:
        d = dict(d)
        line = d.pop("line", None)
        failure = d.pop("failure", None)
        guards = d.pop("guards", None)
        problems = d.pop("problems", None)
        return cls(**d, line=SourceLine(**line) if line else None,
                   problems=Diagnosis.from_json(problems) if problems else None,
                   failure=failure_from_json(failure) if failure else None,
                   guards=guard_log_from_json(guards) if guards else GuardLog())


@dataclass
class ScriptError:
    """The script itself stopped with an exception (not an export failure it caught)."""

    type: str
    message: str
    line: SourceLine | None
    hint: str
    traceback: str
    call: int | None = None  # the export call whose failure the script did not catch, when it was one

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ScriptError:
        d = dict(d)
        line = d.pop("line", None)
        return cls(**d, line=SourceLine(**line) if line else None)


@dataclass
class Rerun:
    """Options for running one call again: None keeps what the script passed. `call` is an index or CONVENTION."""

    call: int | str
    strict: bool | None = None
    dynamic_shapes: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExportReport:
    """All of report.json."""

    script: str
    ok: bool  # the script ran to its end
    calls: list[ExportCall]
    script_error: ScriptError | None = None
    torch_version: str | None = None
    python_version: str = ""
    duration_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {"format": REPORT_FORMAT, "version": REPORT_VERSION, **d}


def read_report(path: str | os.PathLike[str]) -> ExportReport:
    """Read report.json; a file that is not one raises ValueError saying so."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise ValueError(f"{path} is not a PT2 Viewer export report")
    if data.get("version", 0) > REPORT_VERSION:
        raise ValueError(f"{path} was written by a newer PT2 Viewer (report version {data['version']})")
    error = data.get("script_error")
    return ExportReport(
        script=data["script"], ok=bool(data["ok"]), calls=[ExportCall.from_json(c) for c in data["calls"]],
        script_error=ScriptError.from_json(error) if error else None, torch_version=data.get("torch_version"),
        python_version=data.get("python_version", ""), duration_s=data.get("duration_s", 0.0),
    )
