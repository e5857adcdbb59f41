"""The job schemas (core/jobs/schemas/) on real results: every result a real decompose, run and numerics job returns,
successful or failed, reads through its schema and writes back as the same JSON, keys in the same order, plus
`version`; the documented fields are there (docs/jobs.md, docs/numerics.md); a field of the wrong type is named; a
newer version is refused; the worker turns a malformed request into a `request` failure; the fields that hold local
paths are the ones the remote worker carries."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.decompose.job import run_job as decompose
from pt2_viewer.core.jobs import client, protocol
from pt2_viewer.core.jobs.remote.paths import OUTPUT_FIELDS, path_fields
from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult
from pt2_viewer.core.jobs.schemas.events import JobFailed, Progress
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.jobs import JOB_SCHEMAS, local_path_fields
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.numerics.job import run_job as numerics
from pt2_viewer.core.run.job import run_job as run
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)

DECOMPOSE_FIELDS = ["ok", "program", "program_name", "target", "table", "output", "mapping", "nodes_before",
                    "nodes_after", "op_diff", "non_core_ops", "mapping_methods", "unmapped_before", "unmapped_after",
                    "imported", "seconds", "log"]
RUN_FIELDS = ["ok", "cuda_available", "cuda_unavailable_reason", "program", "device", "inputs", "outputs", "latency",
              "node_times", "hottest"]
NUMERICS_FIELDS = ["ok", "program", "candidate", "kind", "threshold", "inputs", "per_node", "note", "compared",
                   "not_compared", "first_divergence", "worst", "nodes", "memory", "seconds"]


def round_trip(job: str, result: dict[str, Any]) -> dict[str, Any]:
    """The result as the worker writes it (through the schema), from its JSON text."""
    data = json.loads(json.dumps(result))
    written = JOB_SCHEMAS[job].result.from_json(data).to_json()
    assert written == {**data, "version": 1}
    assert list(written) == [*data, "version"], "the keys keep their order (--json prints them)"
    return written


@pytest.fixture(scope="module")
def results(pt2_path: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory  # noqa: F811
            ) -> dict[str, dict[str, Any]]:
    program = str(pt2_path("batchnorm_train"))
    out = tmp_path_factory.mktemp("schemas")
    quiet = lambda _e: None  # noqa: E731
    return {
        "decompose": decompose({"program": program, "to": "core", "output": str(out / "bn.core.pt2")}, out, quiet),
        "decompose_failed": decompose({"program": program, "to": "nowhere"}, out, quiet),
        "run": run({"program": program, "runs": 2, "warmup": 1, "node_times": True}, out, quiet),
        "run_failed": run({"program": str(out / "missing.pt2")}, out, quiet),
        "numerics_core": numerics({"program": program, "candidate": "core", "save_candidate": True}, out, quiet),
        "numerics_bf16": numerics({"program": program, "candidate": "bf16"}, out, quiet),
        "numerics_failed": numerics({"program": program, "candidate": "int3"}, out, quiet),
    }


def test_decompose_results_are_their_schema_s_json(results: dict[str, dict[str, Any]]) -> None:
    written = round_trip("decompose", results["decompose"])
    assert [k for k in DECOMPOSE_FIELDS if k not in written] == []
    typed = DecomposeResult.from_json(written)
    assert typed.ok and typed.op_diff and all(r.change == r.after - r.before for r in typed.op_diff)
    assert typed.output is not None and Path(typed.output).is_file()
    failed = DecomposeResult.from_json(round_trip("decompose", results["decompose_failed"]))
    assert not failed.ok and failed.error is not None and failed.error.kind == "request"
    assert "nowhere" in failed.error.text()


def test_run_and_numerics_results_are_their_schemas_json(results: dict[str, dict[str, Any]]) -> None:
    run_typed = RunResult.from_json(round_trip("run_program", results["run"]))
    assert [k for k in RUN_FIELDS if k not in run_typed.to_json()] == []
    assert run_typed.latency is not None and run_typed.latency.runs == 2 and run_typed.hottest
    failed = RunResult.from_json(round_trip("run_program", results["run_failed"]))
    assert failed.error is not None and failed.error.kind == "load" and failed.cuda_available is not None
    for key in ("numerics_core", "numerics_bf16"):
        written = round_trip("numerics", results[key])
        assert [k for k in NUMERICS_FIELDS if k not in written] == []
        typed = NumericsResult.from_json(written)
        assert typed.nodes and typed.memory is not None and typed.compared == len(typed.nodes)
    saved = NumericsResult.from_json(results["numerics_core"])
    assert saved.candidate_program and saved.mapping and Path(saved.mapping).is_file()
    bad = NumericsResult.from_json(round_trip("numerics", results["numerics_failed"]))
    assert bad.error is not None and bad.error.kind == "request" and "int3" in bad.error.message


def test_a_field_of_the_wrong_type_is_named_and_a_newer_version_refused() -> None:
    with pytest.raises(SchemaError, match=r"decompose result\.op_diff\[0\]\.before: expected a whole number, "
                                          "got a string"):
        DecomposeResult.from_json({"ok": True, "op_diff": [{"op": "aten.add.Tensor", "before": "1", "after": 2}]})
    with pytest.raises(SchemaError, match="'to' is missing|expected a string, got a number"):
        DecomposeRequest.from_json({"to": 3})
    with pytest.raises(SchemaError, match="format version 99, newer than this PT2 Viewer reads"):
        DecomposeResult.from_json({"ok": True, "version": 99})
    with pytest.raises(SchemaError, match="expected true or false, got a number"):
        RunResult.from_json({"ok": 1})
    # numbers JSON cannot hold come as words, as the jobs write them
    built = {"compile_s": 1.0, "latency": {"warmup": 1, "runs": 2, "median_s": 0.1, "min_s": 0.1, "max_s": 0.2,
                                           "iqr_s": 0.0}, "speedup": 1.5,
             "difference": {"max_abs": "inf", "max_rel": "nan", "worst_output": "out", "mismatch": None}}
    assert RunResult.from_json({"ok": True, "compile": built}).to_json()["compile"] == built
    with pytest.raises(SchemaError, match="fraction 1.5 is not between 0 and 1"):
        Progress.from_json({"type": "progress", "fraction": 1.5})
    # an event is garbled when a field the client acts on has the wrong type
    assert protocol.decode_event(json.dumps({"type": "job_failed", "kind": "load", "consent": "all"}))["type"] == \
        "garbled"
    assert JobFailed.from_json({"type": "job_failed", "kind": "load", "message": "m"}).failure().text() == "m"


def test_the_worker_turns_a_malformed_request_into_a_request_failure(pt2_path: Callable[[str], Path],  # noqa: F811
                                                                     tmp_path: Path) -> None:
    job, outcome = client.run_job("run_program", {"program": str(pt2_path("batchnorm_train")), "runs": "ten"},
                                  tmp_path, timeout_s=240)
    assert outcome.status == protocol.OK, outcome.message
    result = RunResult.from_json(outcome.result)
    assert not result.ok and result.error is not None and result.error.kind == "request"
    assert "run request.runs: expected a whole number, got a string" in result.error.message
    assert any(e["type"] == "job_failed" for e in job.events)
    assert json.loads((tmp_path / "result.json").read_text())["version"] == 1
    # the one way a failure is said: message and hint, from the result
    said = outcome.failure_text()
    assert said is not None and said[0] == result.error.text() and said[0].endswith("docs/jobs.md describes.")
    assert Failure.of_result({"ok": False, "error": "not an object"}) == Failure(
        "unknown", "The job failed.", "Its result gives no readable reason; the log may say more.")
    assert Failure.of_result({"ok": True}) is None


def test_local_path_fields_are_what_the_remote_worker_carries() -> None:
    for job in JOB_SCHEMAS:
        inputs, outputs = path_fields(job)  # what a remote job copies there, and what it brings back
        assert set(inputs) | set(outputs) == set(local_path_fields(job)), job
        assert set(outputs) <= OUTPUT_FIELDS
    assert set(local_path_fields("decompose")) == {"program", "to", "preload", "table", "output"}
    assert "aoti_package" in local_path_fields("run_program")
