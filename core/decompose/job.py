"""The decompose job: lower a program to functional ATen, core ATen or a user's table, and record what became what.

Request (JSON): `program` (.pt2 path), `to` ("functional", "core" or "table"), `table` (a .py file, when `to` is
"table"), optional `table_name`, `program_name` (which program of the archive), `preload` (a .py file to import first,
e.g. a custom op's definition), `trust` (true: the user trusts the file to run code, see core/jobs/archive_check.py)
and `output` (where to write the decomposed .pt2; default `OUT/decomposed.pt2`).
Writes the decomposed `.pt2` and, beside it, `<output stem>.mapping.json` (see `core/compare/mapping.py`). `run`
takes the `DecomposeRequest` and returns the `DecomposeResult` (core/jobs/schemas/decompose.py; its JSON in
docs/jobs.md); on failure `ok` is false and `error` says what went wrong and what to do.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.compare.mapping import write_mapping
from pt2_viewer.core.decompose.non_core import non_core_ops
from pt2_viewer.core.decompose.provenance import provenance_mapping
from pt2_viewer.core.decompose.table import load_table
from pt2_viewer.core.graph.op_stats import program_diff
from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.kinds import DECOMPOSE
from pt2_viewer.core.jobs.loading import captured_torch_logs, load_program, trust_options
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult, OpChange
from pt2_viewer.core.jobs.typed_job import TypedJob, failed
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.util.files import save_program

TARGETS = ("functional", "core", "table")

Emit = Callable[[dict[str, Any]], None]


def progress(emit: Emit, stage: str, fraction: float, message: str) -> None:
    emit({"type": "progress", "stage": stage, "fraction": fraction, "message": message})


def mapping_path_for(output: Path) -> Path:
    """model.core.pt2 -> model.core.mapping.json, beside it."""
    return output.with_name(output.stem + ".mapping.json")


def decomposition_table(to: str, table: str | None, table_name: str | None) -> dict[Any, Any]:
    import torch

    if to == "functional":
        return {}
    if to == "core":
        return torch.export.default_decompositions()
    if to == "table":
        if not table:
            raise JobFailure("request", "A custom decomposition needs a table file.", "Name a .py file.")

        return load_table(table, table_name)
    raise JobFailure("request", f"Unknown decomposition target '{to}'.",
                     f"Choose one of {', '.join(TARGETS)}, or name a .py table file.")


def decompose(ep: Any, table: dict[Any, Any], log: list[str]) -> Any:
    """`ep.run_decompositions(table)`, with a failure that says it was the decomposition that failed."""
    try:
        with captured_torch_logs(log):
            return ep.run_decompositions(table)
    except Exception as e:
        raise JobFailure("decompose", f"The decomposition failed: {first_line(e)}",
                         "This program cannot be lowered to that target as it is; the log has torch's full message. "
                         "A lighter target (functional) or a custom table that leaves the failing op alone may work.",
                         _format(e)) from e


def _format(e: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(e), e, e.__traceback__))


def counted_diff(src: Path, program_name: str, output: Path) -> list[OpChange]:
    """The op diff counted on the two archives as the viewer reads them (core/graph/op_stats.py: the one place that
    counts ops), not on torch's FX graphs, so the job, the compare view and the report give the same numbers."""

    try:
        before = read_archive(src).program(program_name)
        after = read_archive(output).program()
    except (ArchiveError, KeyError) as e:
        raise JobFailure("save", f"The decomposed program was saved but cannot be read back: {e}",
                         "Please report it with the file.") from e
    return program_diff(before, after)


def run(request: DecomposeRequest, out: Path, emit: Emit) -> DecomposeResult:
    seconds: dict[str, float] = {}
    log: list[str] = []
    try:
        return _run(request, Path(out), emit, seconds, log)
    except JobFailure as f:
        emit({"type": "job_failed", **f.failure.to_json()})
        return failed(DecomposeResult, f.failure, seconds=seconds, log=log)


run_job = TypedJob(run, DECOMPOSE)  # the worker's entry: the `decompose` job of core/jobs/kinds.py


def _normalise_target(request: DecomposeRequest) -> tuple[str, str | None]:
    to, table = request.to, request.table
    if to.endswith(".py"):
        to, table = "table", to
    return to, table


def _run(request: DecomposeRequest, out: Path, emit: Emit, seconds: dict[str, float], log: list[str]
         ) -> DecomposeResult:
    if request.program is None:
        raise JobFailure("request", "The request names no program.", "Pass the .pt2 path as 'program'.")
    src = Path(request.program)
    to, table_file = _normalise_target(request)
    output = Path(request.output or out / "decomposed.pt2")
    t = time.perf_counter()

    progress(emit, "load", 0.0, f"Loading {src.name}")
    loaded = load_program(src, request.program_name, request.preload, **trust_options(request))
    log += loaded.log
    seconds["load"] = time.perf_counter() - t

    progress(emit, "table", 0.15, f"Preparing the {to} decomposition table")
    table = decomposition_table(to, table_file, request.table_name)

    t = time.perf_counter()
    progress(emit, "decompose", 0.2, f"Decomposing {len(loaded.ep.graph.nodes)} nodes ({to})")
    after = decompose(loaded.ep, table, log)
    seconds["decompose"] = time.perf_counter() - t

    t = time.perf_counter()
    progress(emit, "map", 0.7, "Mapping nodes and counting ops")
    mapping = provenance_mapping(loaded.ep.graph, after.graph, before_label=f"{src.name} / {loaded.name}",
                                 after_label=f"{output.name} / model")
    seconds["map"] = time.perf_counter() - t

    t = time.perf_counter()
    progress(emit, "save", 0.85, f"Saving {output.name}")
    with captured_torch_logs(log):
        save_program(after, output)
    mapping_file = mapping_path_for(output)
    write_mapping(mapping, mapping_file)
    diff = counted_diff(src, loaded.name, output)  # counted as the compare view and the report count
    seconds["save"] = time.perf_counter() - t
    progress(emit, "done", 1.0, f"Wrote {output.name} and {mapping_file.name}")

    return DecomposeResult(
        ok=True,
        program=str(src),
        program_name=loaded.name,
        target=to,
        table=str(table_file) if table_file else None,
        output=str(output),
        mapping=str(mapping_file),
        nodes_before=len(mapping.before_nodes),
        nodes_after=len(mapping.after_nodes),
        op_diff=diff,
        non_core_ops=non_core_ops(after.graph_module),
        mapping_methods=mapping.method_counts(),
        unmapped_before=mapping.unmapped_before,
        unmapped_after=mapping.unmapped_after,
        imported=loaded.imported,
        imports=loaded.import_details,
        seconds=seconds,
        log=log,
    )
