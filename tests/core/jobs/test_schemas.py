"""The job schemas (core/jobs/schemas/) on real results: every result a real decompose, run and numerics job returns,
successful or failed, reads through its schema and writes back as the same JSON, keys in the same order, plus
`version`; the documented fields are there (docs/jobs.md, docs/numerics.md); a field of the wrong type is named; a
newer version is refused; a JobSpec reads its request through its kind's schema, and the worker turns a malformed
request into a `request` failure; the fields that hold local paths are the ones the remote worker carries."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pt2_viewer.core.decompose.job import run_job as decompose
from pt2_viewer.core.jobs import client, protocol
from pt2_viewer.core.jobs.kinds import JOB_KINDS, job_kind
from pt2_viewer.core.jobs.schemas.artifact_run import ArtifactRunRequest
from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.decompose import DecomposeRequest, DecomposeResult
from pt2_viewer.core.jobs.schemas.events import EVENTS, JobFailed, Progress
from pt2_viewer.core.jobs.schemas.failure import Failure
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.jobs.schemas.run import RunRequest, RunResult
from pt2_viewer.core.jobs.spec import JobSpec
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
    written = job_kind(job).result.from_json(data).to_json()
    assert written == {**data, "version": 1}
    assert list(written) == [*data, "version"], "the keys keep their order (--json prints them)"
    return written


@pytest.fixture(scope="module")
def results(pt2_path: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory  # noqa: F811
            ) -> dict[str, dict[str, Any]]:
    program = str(pt2_path("batchnorm_train"))
    out = tmp_path_factory.mktemp("schemas")
    sent: dict[str, list[str]] = {}  # the event types each job sent

    def events_of(job: str) -> Callable[[dict[str, Any]], None]:
        return lambda event: sent.setdefault(job, []).append(event["type"])

    d, r, n = events_of("decompose"), events_of("run_program"), events_of("numerics")
    return {
        "decompose": decompose({"program": program, "to": "core", "output": str(out / "bn.core.pt2")}, out, d),
        "decompose_failed": decompose({"program": program, "to": "nowhere"}, out, d),
        "run": run({"program": program, "runs": 2, "warmup": 1, "node_times": True}, out, r),
        "run_failed": run({"program": str(out / "missing.pt2")}, out, r),
        "numerics_core": numerics({"program": program, "candidate": "core", "save_candidate": True}, out, n),
        "numerics_bf16": numerics({"program": program, "candidate": "bf16"}, out, n),
        "numerics_failed": numerics({"program": program, "candidate": "int3"}, out, n),
        "events": sent,
    }


def test_jobs_send_only_every_job_s_events_and_their_kind_s(results: dict[str, dict[str, Any]]) -> None:
    for job, types in results["events"].items():
        assert "progress" in types and "job_failed" in types, job
        assert set(types) <= set(EVENTS) | set(job_kind(job).events), job


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


def test_a_job_s_request_is_its_kind_s(tmp_path: Path) -> None:
    """JobSpec reads JSON through the kind's request schema and names what does not fit; a request of another type
    is refused, one of the type its kind's extends is read as the kind's."""
    spec = JobSpec("run_program", {"program": "a.pt2", "runs": 2}, tmp_path)
    assert type(spec.request) is RunRequest and spec.request.runs == 2 and spec.kind is job_kind("run_program")
    with pytest.raises(SchemaError, match="run request.runs: expected a whole number, got a string"):
        JobSpec("run_program", {"program": "a.pt2", "runs": "ten"}, tmp_path)
    with pytest.raises(TypeError, match="the job 'decompose' takes a DecomposeRequest, not a RunRequest"):
        JobSpec("decompose", RunRequest(program="a.pt2"), tmp_path)
    with pytest.raises(ValueError, match="there is no job named 'no_such_job' \\(jobs: decompose, export_script"):
        JobSpec("no_such_job", {}, tmp_path)
    widened = JobSpec("run_pte", RunRequest(program="m.pte", runs=3), tmp_path).request  # the Run tab's, on a .pte
    assert isinstance(widened, ArtifactRunRequest) and widened.runs == 3 and widened.source is None


def test_the_worker_turns_a_malformed_request_into_a_request_failure(pt2_path: Callable[[str], Path],  # noqa: F811
                                                                     tmp_path: Path) -> None:
    # a caller that ignored the types (dataclasses do not check them): the worker's own reading is the one that counts
    malformed = RunRequest(program=str(pt2_path("batchnorm_train")), runs="ten")  # type: ignore[arg-type]
    job, outcome = client.run_job("run_program", malformed, tmp_path, timeout_s=240)
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
    for kind in JOB_KINDS:
        inputs, outputs = kind.path_fields()  # what a remote job copies there, and what it brings back
        assert set(inputs) | set(outputs) == set(kind.request.local_paths()), kind.name
        assert outputs == list(kind.outputs), f"{kind.name}: its outputs are local-path fields of its request"
    decompose, run = job_kind("decompose").path_fields(), job_kind("run_program").path_fields()
    assert decompose == (["program", "preload", "to", "table"], ["output"])
    assert run == (["program", "preload"], ["aoti_package"])
