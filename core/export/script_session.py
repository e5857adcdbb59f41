"""The state of one model script in the window: its runs in the worker, the export calls each run made, and why
each call failed. No Qt, no torch: the script tab (app/export/script_document.py) is a thin view of a `ScriptSession`.

A run is one `export_script` worker job (docs/worker.md). While it runs, the session follows the job's events
(`export_started`, `export_finished`, `progress`, `script_error`) so the Exports list fills in as calls happen; when
the job ends, `finish()` reads `report.json`, which adds what events do not carry (the failure explanation with its
traceback and suggested fixes, the guards, the dynamic_shapes spec). A crashed, cancelled or timed-out job keeps the
calls seen so far and says in words what happened.

The dynamic_shapes editor edits `DimRow`s: one per input dimension, converted to and from the JSON spec of
core/export/dynamic_spec.py, so the GUI never builds that JSON by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.export.dim_names import dim_names
from pt2_viewer.core.export.failures import Failure, SourceLine, apply_changes, first_sentence
from pt2_viewer.core.export.guards import GuardLog
from pt2_viewer.core.export.plain_words import headline, symbol_names, user_words
from pt2_viewer.core.export.report import (
    CONVENTION,
    REPORT_FILE,
    ExportCall,
    ExportReport,
    Rerun,
    ScriptError,
    read_report,
)
from pt2_viewer.core.jobs.schemas.export import ExportRequest
from pt2_viewer.core.jobs.schemas.export import Rerun as RerunRequest
from pt2_viewer.core.model.expr import torch_range_text
from pt2_viewer.core.model.program import InputKind, Program
from pt2_viewer.core.util.words import plural

JOB = "export_script"

# ExportEntry.status
RUNNING, OK, FAILED, UNFINISHED = "running", "ok", "failed", "unfinished"
# ScriptSession.state
IDLE, STARTING, EXPORTING, DONE = "idle", "starting", "running", "done"

# DimRow.kind
STATIC, AUTO, DYNAMIC, NAMED = "static", "auto", "dynamic", "named"
DIM_KINDS = (STATIC, AUTO, DYNAMIC, NAMED)
SUMMARY_CHARS = 90


@dataclass
class ExportEntry:
    """One export call of a run: what the events said while it ran, completed from report.json at the end."""

    index: int
    model: str
    source: str = "script"  # "script" or "convention"
    line: SourceLine | None = None
    status: str = RUNNING
    kind: str | None = None  # failure kind, when failed
    message: str = ""  # failure key message, when failed
    pt2: Path | None = None  # the saved program, when ok and saved
    duration_s: float = 0.0
    strict: bool = False
    dynamic_shapes: str | None = None  # repr of what the script passed
    spec: dict[str, Any] | None = None  # the same as the JSON spec; None when not expressible
    inputs: list[str] = field(default_factory=list)
    input_shapes: dict[str, list[int]] = field(default_factory=dict)  # the example inputs' shapes
    failure: Failure | None = None
    guards: GuardLog = field(default_factory=GuardLog)
    program: dict[str, Any] | None = None  # report's summary: nodes, ops, range_constraints, user_inputs
    save_error: str | None = None
    rerun: bool = False  # this call ran with options the user chose in the window
    program_ranks: dict[str, int] = field(default_factory=dict)  # input ranks, once its .pt2 was read

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def call_id(self) -> int | str:
        """What a rerun request names this call by."""
        return CONVENTION if self.source == CONVENTION else self.index

    @property
    def title(self) -> str:
        where = f"line {self.line.line}" if self.line else "convention" if self.source == CONVENTION else "?"
        return f"#{self.index} {self.model}  ({where})"

    @property
    def summary(self) -> str:
        """One line for the Exports list: the outcome at a glance."""
        if self.status == RUNNING:
            return "exporting…"
        if self.status == UNFINISHED:
            return "did not finish (the worker stopped)"
        if self.ok:
            nodes = (self.program or {}).get("nodes")
            shown = plural(nodes, "node") if isinstance(nodes, int) else "exported"
            if self.pt2 is None:
                shown += f"; not saved: {self.save_error or 'no .pt2'}"
            return f"{shown}, {self.duration_s:.1f} s"
        first = self.headline
        if len(first) > SUMMARY_CHARS:
            first = first[:SUMMARY_CHARS - 1] + "…"
        return f"{(self.kind or 'failed').replace('_', ' ')}: {first}"


    @property
    def names(self) -> dict[str, str]:
        """torch's symbols -> the user's names (a script's Dim name, else the input dimension or variable)."""
        return symbol_names(self.guards.symbols, dim_names(self.spec))

    @property
    def headline(self) -> str:
        """Why the call failed, in one line of the user's words (plain_words.headline), for every place that says it."""
        if self.failure is not None:
            return headline(self.failure, self.spec, self.names)
        first = self.message.splitlines()[0] if self.message else ""
        return user_words(first, self.names)


@dataclass
class LogLine:
    stream: str  # "stdout", "stderr" or "worker" (what the viewer itself says about the run)
    text: str


class ScriptSession:
    """One script and its latest run. Feed it the worker's events, output and outcome; read entries and messages."""

    def __init__(self, script: str | Path) -> None:
        self.script = Path(script)
        self.state = IDLE
        self.entries: list[ExportEntry] = []
        self.log: list[LogLine] = []
        self.progress = ""  # what the worker is doing now, in words
        self.script_error: ScriptError | None = None
        self.outcome_status: str | None = None  # JobOutcome.status of the latest run
        self.outcome_message = ""  # JobOutcome.message, plus what it means for the calls
        self.out_dir: Path | None = None
        self.rerun: Rerun | None = None
        self.runs = 0

    # -- a run -------------------------------------------------------------------------------------------------
    def request(self, rerun: Rerun | None = None) -> ExportRequest:
        """The export_script request for a run of this script (optionally re-running one call)."""
        asked = None if rerun is None else RerunRequest(rerun.call, rerun.strict, rerun.dynamic_shapes)
        return ExportRequest(script=str(self.script), rerun=asked)

    def begin(self, out_dir: str | Path, rerun: Rerun | None = None) -> None:
        """A new run starts: the previous run's calls are replaced by what this one reports."""
        self.state = STARTING
        self.entries = []
        self.script_error = None
        self.outcome_status = None
        self.outcome_message = ""
        self.out_dir = Path(out_dir)
        self.rerun = rerun
        self.runs += 1
        self.progress = "Starting the worker"
        what = f"re-exporting call {rerun.call}" if rerun else "running"
        self.log.append(LogLine("worker", f"--- run {self.runs}: {what} {self.script.name} ---"))

    @property
    def running(self) -> bool:
        return self.state in (STARTING, EXPORTING)

    def apply_event(self, event: dict[str, Any]) -> ExportEntry | None:
        """Follow one worker event; returns the entry it created or changed, if any."""
        kind = event.get("type")
        if kind == "started":
            self.state = EXPORTING
            self.progress = "Worker started"
        elif kind == "progress":
            self.progress = str(event.get("message") or event.get("stage") or "")
        elif kind == "export_started":
            index = int(event.get("index", len(self.entries)))
            line = event.get("line")
            entry = ExportEntry(index=index, model=str(event.get("model") or "?"),
                                source=str(event.get("source") or "script"),
                                line=SourceLine(str(self.script), int(line)) if isinstance(line, int) else None)
            self.entries.append(entry)
            self.progress = f"Exporting {entry.model} (call #{index})"
            return entry
        elif kind == "export_finished":
            finished = self.entry(int(event.get("index", -1)))
            if finished is not None:
                finished.status = OK if event.get("ok") else FAILED
                finished.kind = event.get("kind")
                finished.message = str(event.get("message") or "")
                finished.duration_s = float(event.get("duration_s") or 0.0)
                if event.get("pt2") and self.out_dir is not None:
                    finished.pt2 = self.out_dir / str(event["pt2"])
                self.progress = f"Running {self.script.name}"
            return finished
        elif kind == "script_error":
            self.progress = f"The script stopped: {event.get('error_type')}: {user_words(str(event.get('message')))}"
        elif kind == "garbled":
            self.log.append(LogLine("worker", f"(unreadable worker event: {event.get('text', '')})"))
        return None

    def add_output(self, stream: str, text: str) -> None:
        self.log.append(LogLine(stream, text))

    def finish(self, status: str, message: str) -> None:
        """The job ended (JobOutcome.status and .message): read report.json if there is one and say what happened."""
        self.state = DONE
        self.outcome_status = status
        report = self._read_report()
        if report is not None:
            self._merge_report(report)
        for entry in self.entries:
            if entry.status == RUNNING:
                entry.status = UNFINISHED
        if status == "ok":
            self.outcome_message = self._summary_text()
        else:
            kept = (f" {plural(len(self.entries), 'export call')} seen before it stopped "
                    f"{'is' if len(self.entries) == 1 else 'are'} listed." if self.entries else "")
            self.outcome_message = message + kept
        self.progress = self.outcome_message
        self.log.append(LogLine("worker", f"--- {self.outcome_message} ---"))

    def _summary_text(self) -> str:
        ok = sum(1 for e in self.entries if e.ok)
        failed = sum(1 for e in self.entries if e.status == FAILED)
        text = f"{plural(len(self.entries), 'export call')}: {ok} exported, {failed} failed."
        failures = [e for e in self.entries if e.status == FAILED]
        if len(failures) == 1:  # the one failure, in the user's words (the list says each of several)
            text = f"{text[:-1]}: {failures[0].headline}"
        if not self.entries and self.script_error is None:
            text = ("The script ran but made no torch.export.export call, and defines no module-level `model` with "
                    "`example_args` to export. Call torch.export.export in the script, or define those names.")
        if self.script_error is not None and self.uncaught_export() is not None:
            text += " The script did not catch it and stopped there."
        elif self.script_error is not None:
            where = f" at line {self.script_error.line.line}" if self.script_error.line else ""
            text += f" The script stopped{where}: {self.script_error_text()}"
        return text

    def script_error_text(self) -> str:
        """The script's error in one line, in the user's words: an export failure it did not catch names that call
        (whose row says why it failed), never torch's exception."""
        error = self.script_error
        if error is None:
            return ""
        failed = self.uncaught_export()
        if failed is not None:
            return f"export #{failed.index} failed and the script did not catch it"
        return f"{error.type.rsplit('.', 1)[-1]}: {user_words(first_sentence(error.message))}"

    def uncaught_export(self) -> ExportEntry | None:
        """The failed export call whose exception stopped the script, if it was one."""
        error = self.script_error
        if error is None:
            return None
        if error.call is not None:
            return self.entry(error.call)
        for entry in reversed(self.entries):
            f = entry.failure
            if f is not None and (f.exception_type.rsplit(".", 1)[-1] == error.type.rsplit(".", 1)[-1]
                                  and (error.line is None or entry.line is None or error.line.line == entry.line.line)):
                return entry
        return None

    def _read_report(self) -> ExportReport | None:
        """report.json of the run; None when the worker stopped before writing it (or wrote something else)."""
        if self.out_dir is None:
            return None
        try:
            return read_report(self.out_dir / REPORT_FILE)
        except (OSError, ValueError, KeyError, TypeError) as e:
            if (self.out_dir / REPORT_FILE).exists():
                self.log.append(LogLine("worker", f"(could not read {REPORT_FILE}: {e})"))
            return None

    def _merge_report(self, report: ExportReport) -> None:
        assert self.out_dir is not None
        by_index = {e.index: e for e in self.entries}
        entries = []
        for call in report.calls:
            entry = by_index.get(call.index) or ExportEntry(index=call.index, model=call.model)
            update_entry(entry, call, self.out_dir)
            entries.append(entry)
        self.entries = entries
        self.script_error = report.script_error

    # -- reading the state -------------------------------------------------------------------------------------
    def entry(self, index: int) -> ExportEntry | None:
        return next((e for e in self.entries if e.index == index), None)

    def first_success(self) -> ExportEntry | None:
        return next((e for e in self.entries if e.ok and e.pt2 is not None), None)

    def rerun_entry(self) -> ExportEntry | None:
        """The call the latest run re-exported with the user's options."""
        return next((e for e in self.entries if e.rerun), None)

    def fixed_spec(self, entry: ExportEntry) -> dict[str, Any] | None:
        """The entry's dynamic_shapes spec with export's suggested fixes applied; None if there is nothing to apply."""
        if entry.failure is None or not entry.failure.fixes or entry.spec is None:
            return None
        try:
            return apply_changes(entry.spec, entry.failure.fixes)
        except ValueError:
            return None


def update_entry(entry: ExportEntry, call: ExportCall, out_dir: Path) -> None:
    """Fill an entry from one call of report.json."""
    entry.model = call.model
    entry.source = call.source
    entry.line = call.line or entry.line
    entry.status = OK if call.ok else FAILED
    entry.strict = bool(call.strict)
    entry.dynamic_shapes = call.dynamic_shapes
    entry.spec = call.dynamic_shapes_spec
    entry.inputs = list(call.inputs)
    entry.input_shapes = dict(call.input_shapes)
    entry.pt2 = out_dir / call.pt2 if call.pt2 else None
    entry.save_error = call.save_error
    entry.duration_s = call.duration_s
    entry.program = call.program
    entry.rerun = call.rerun
    entry.failure = call.failure
    if call.failure is not None:
        entry.kind, entry.message = call.failure.kind, call.failure.message
    entry.guards = call.guards


# --- the dynamic_shapes editor's rows ---------------------------------------------------------------------------

@dataclass
class DimRow:
    """One dimension of one input in the dynamic_shapes editor."""

    input: str
    axis: int
    kind: str = STATIC  # static, auto, dynamic or named
    name: str = ""  # the named Dim, for kind "named"
    min: int | None = None
    max: int | None = None
    mul: int = 1  # a derived Dim (mul * name + add), kept as the script wrote it
    add: int = 0
    size: int | None = None  # an exact size the spec pins (kind static)

    @property
    def label(self) -> str:
        return f"{self.input}.shape[{self.axis}]"


def input_ranks(entry: ExportEntry) -> dict[str, int]:
    """How many dimensions each input has, as far as is known: the example inputs' shapes, the exported program's
    inputs (once read), the spec's lists and the symbols' axes."""
    ranks: dict[str, int] = {k: len(v) for k, v in entry.input_shapes.items() if k in entry.inputs}
    ranks.update({k: v for k, v in entry.program_ranks.items() if k in entry.inputs})
    for name, dims in (entry.spec or {}).get("inputs", {}).items():
        if isinstance(dims, list):
            ranks[name] = len(dims)
    for sym in entry.guards.symbols:
        if sym.input in entry.inputs and sym.axis is not None:
            ranks[sym.input] = max(ranks.get(sym.input, 0), sym.axis + 1)
    return ranks


def program_input_ranks(program: Program) -> dict[str, int]:
    """The rank of each tensor user input of an exported program (placeholders carry the forward's names)."""
    ranks: dict[str, int] = {}
    for spec in program.signature.inputs:
        value = program.graph.values.get(spec.name) if spec.kind == InputKind.USER_INPUT else None
        meta = value.meta if value is not None and value.kind == "tensor" else None
        if meta is not None:
            ranks[spec.name] = len(meta.sizes)
    return ranks


def spec_to_rows(spec: dict[str, Any] | None, ranks: dict[str, int]) -> list[DimRow]:
    """Rows for every dimension of every input with a known rank (inputs missing from the spec are static)."""
    spec = spec or {}
    dims = spec.get("dims") or {}
    given = spec.get("inputs") or {}
    rows: list[DimRow] = []
    for name, rank in ranks.items():
        entries = given.get(name)
        for axis in range(rank):
            value = entries[axis] if isinstance(entries, list) and axis < len(entries) else "static"
            rows.append(_row_from_entry(name, axis, value, dims))
    return rows


def _row_from_entry(name: str, axis: int, value: Any, dims: dict[str, Any]) -> DimRow:
    row = DimRow(name, axis)
    if value in (AUTO, DYNAMIC):
        row.kind = value
    elif isinstance(value, bool) or value is None or value == STATIC:
        row.kind = STATIC
    elif isinstance(value, int):
        row.kind, row.size = STATIC, value
    elif isinstance(value, dict) and value.get("hint") in (AUTO, DYNAMIC):
        row.kind, row.min, row.max = value["hint"], value.get("min"), value.get("max")
    elif isinstance(value, dict) and isinstance(value.get("dim"), str):
        rng = dims.get(value["dim"]) or {}
        row.kind, row.name = NAMED, value["dim"]
        row.mul, row.add = int(value.get("mul", 1)), int(value.get("add", 0))
        row.min, row.max = rng.get("min"), rng.get("max")
    return row


def rows_to_spec(rows: list[DimRow]) -> dict[str, Any]:
    """The JSON spec for the rows. A named Dim's range is that of its last row with a range (rows share it)."""
    dims: dict[str, dict[str, int]] = {}
    inputs: dict[str, list[Any]] = {}
    for row in rows:
        inputs.setdefault(row.input, []).append(_entry_from_row(row, dims))
    for name, entries in inputs.items():
        if all(e == STATIC for e in entries):
            inputs[name] = None  # type: ignore[assignment]
    return {"dims": dims, "inputs": inputs}


def _entry_from_row(row: DimRow, dims: dict[str, dict[str, int]]) -> Any:
    rng = {k: v for k, v in (("min", row.min), ("max", row.max)) if v is not None}
    if row.kind == NAMED:
        name = row.name.strip()
        if not name.isidentifier():
            raise ValueError(f"{row.label}: a named Dim needs a Python identifier as its name, not {row.name!r}")
        if rng or name not in dims:
            dims[name] = rng
        ref: dict[str, Any] = {"dim": name}
        if row.mul != 1:
            ref["mul"] = row.mul
        if row.add:
            ref["add"] = row.add
        return ref
    if row.kind in (AUTO, DYNAMIC):
        return {"hint": row.kind, **rng} if rng else row.kind
    return row.size if row.size is not None else STATIC


# --- showing a spec and a change to it --------------------------------------------------------------------------

def program_facts(program: dict[str, Any] | None) -> list[str]:
    """The report's summary of an exported program as lines a user reads: counts in words, inputs, symbol ranges as
    `[2, ∞]` (torch writes `VR[2, int_oo]`)."""
    if not program:
        return []
    if "error" in program:
        return [f"(no summary: {program['error']})"]
    lines = []
    if isinstance(program.get("nodes"), int):
        ops = program.get("ops")
        lines.append(plural(program["nodes"], "node") + (f", {plural(ops, 'op call')}" if isinstance(ops, int) else ""))
    if program.get("user_inputs"):
        lines.append("inputs: " + ", ".join(str(i) for i in program["user_inputs"]))
    ranges = program.get("range_constraints") or {}
    if ranges:
        lines.append("symbol ranges: " + ", ".join(f"{k} in {torch_range_text(str(v))}" for k, v in ranges.items()))
    return lines


def fix_lines(suggested: list[str], before: dict[str, Any] | None, fixed: dict[str, Any] | None) -> list[str]:
    """The suggested-change box: what export suggests (if it said anything) and what dynamic_shapes becomes."""
    lines = ["export suggests:"] + [f"  {t}" for t in suggested] if suggested else []
    if fixed is not None:
        lines += ([""] if lines else []) + ["dynamic_shapes becomes:"] + spec_change_lines(before, fixed)
    return lines


def spec_lines(spec: dict[str, Any] | None) -> list[str]:
    """The JSON spec as the Python a user would write: named Dims first, then one line per input."""
    if spec is None:
        return ["(the script's own dynamic_shapes)"]
    lines = []
    for name, rng in (spec.get("dims") or {}).items():
        bounds = "".join(f", {k}={v}" for k, v in (rng or {}).items() if k in ("min", "max"))
        lines.append(f"{name} = Dim('{name}'{bounds})")
    for name, entries in (spec.get("inputs") or {}).items():
        if not isinstance(entries, list):
            lines.append(f"{name}: None")
        else:
            inner = ", ".join(_entry_text(e) for e in entries)
            lines.append(f"{name}: ({inner}{',' if len(entries) == 1 else ''})")
    return lines or ["None (all shapes static)"]


def _entry_text(entry: Any) -> str:
    if entry in (STATIC, AUTO, DYNAMIC):
        return f"Dim.{str(entry).upper()}"
    if isinstance(entry, dict) and entry.get("hint") in (AUTO, DYNAMIC):
        bounds = ", ".join(f"{k}={entry[k]}" for k in ("min", "max") if entry.get(k) is not None)
        return f"Dim.{entry['hint'].upper()}({bounds})"
    if isinstance(entry, dict) and "dim" in entry:
        text = str(entry["dim"])
        if int(entry.get("mul", 1)) != 1:
            text = f"{entry['mul']}*{text}"
        if entry.get("add"):
            text += f" + {entry['add']}" if entry["add"] > 0 else f" - {-entry['add']}"
        return text
    return str(entry)


def spec_change_lines(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """What a fix changes, as diff lines: "- x: (dx, Dim.STATIC)" / "+ x: (dx, 4)"; unchanged lines are indented."""
    old, new = spec_lines(before), spec_lines(after)
    out = [f"- {line}" for line in old if line not in new]
    out += [f"+ {line}" for line in new if line not in old]
    out += [f"  {line}" for line in new if line in old]
    return out
