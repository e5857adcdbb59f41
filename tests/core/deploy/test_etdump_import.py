"""An ETDump recorded elsewhere, imported instead of running (issue 41 §2): `run FILE.pte --etdump RUN.etdp` gives the
times ExecuTorch's own Inspector reads from the recording (its event table is the referee), `numerics --candidate
FILE.pte --etdump --debug-buffer` the rows a local run gives, and a recording of another program, or a file that
lowering again does not reproduce and whose ETRecord is missing, is refused.

The recordings are written by a separate ExecuTorch runtime process (tests/etdump_recordings.py) from the zoo's CNN
lowered by the lower job (tests/deploy_programs.py), and the small zoo model lowered otherwise."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.deploy_programs import CNN, SMALL, Lowered, lowered_or_skip
from tests.etdump_recordings import Recording, lowered_otherwise, record

pytest.importorskip("executorch", reason="executorch lowers, runs and inspects the programs (requirements-dev.txt)")

SKIPPED = ("Method::init", "Program::load_method", "Method::execute", "OPERATOR_CALL")


@pytest.fixture(scope="module")
def xnnpack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lowered, Recording]:
    low = lowered_or_skip(CNN, "xnnpack")
    return low, record(low.pte, low.source, tmp_path_factory.mktemp("xnnpack"))


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lowered, Recording]:
    low = lowered_or_skip(CNN, "portable")
    return low, record(low.pte, low.source, tmp_path_factory.mktemp("portable"), runs=1)


def _run(request: dict[str, Any], out: Path) -> dict[str, Any]:
    from pt2_viewer.core.run.pte_job import run_job

    return run_job(request, out, lambda _event: None)


def _inspectors_table(rec: Recording, etrecord: Path) -> Any:
    """ExecuTorch's own event table of the recording: the Execute block's rows, in the order run."""
    import warnings

    from executorch.devtools import Inspector

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inspector = Inspector(etdump_path=str(rec.etdump), etrecord=str(etrecord),
                              debug_buffer_path=str(rec.debug_buffer))
    df = inspector.to_dataframe()
    return df[(df["event_block_name"] == "Execute") & ~df["event_name"].isin(SKIPPED)]


def test_an_imported_etdump_gives_the_inspectors_own_event_table(xnnpack: tuple[Lowered, Recording],
                                                                 tmp_path: Path) -> None:
    from pt2_viewer.core.pte.reader import read_pte

    low, rec = xnnpack
    result = _run({"program": str(low.pte), "etdump": str(rec.etdump), "debug_buffer": str(rec.debug_buffer),
                   "source": str(low.source), "etrecord": str(low.etrecord)}, tmp_path)
    assert result["ok"], result.get("error")
    assert result["etdump"] == str(rec.etdump) and result["etrecord_how"] == "given"
    assert "outputs" not in result and "latency" not in result  # nothing ran here
    table = _inspectors_table(rec, low.etrecord)
    calls = table[~table["is_delegated_op"].astype(bool)]
    order = sorted((int(n.metadata["instruction"]), n.name) for n in read_pte(low.pte).programs[0].graph.nodes
                   if "instruction" in n.metadata)
    assert len(calls) == len(order) == len(result["node_time_stats"])  # every instruction, one row each
    for (_, node), row in zip(order, calls.itertuples()):
        stats = result["node_time_stats"][node]
        assert stats["count"] == len(row.raw) == rec.runs
        assert stats["median_s"] == pytest.approx(row[table.columns.get_loc("p50 (ms)") + 1] * 1e-3, rel=1e-9)
        assert stats["p90_s"] == pytest.approx(row[table.columns.get_loc("p90 (ms)") + 1] * 1e-3, rel=1e-9)
        assert result["node_times"][node] == pytest.approx(row[table.columns.get_loc("min (ms)") + 1] * 1e-3,
                                                           rel=1e-9)
    inside = table[table["is_delegated_op"].astype(bool)]
    events = result["delegate_events"]
    assert len(inside) > 10 and [e["event"] for e in events] == list(inside["event_name"])
    assert all(e["node"].startswith("delegate_") and e["backend"] == "XnnpackBackend" for e in events)
    assert [e["median_s"] for e in events] == pytest.approx([v * 1e-3 for v in inside["p50 (ms)"]], rel=1e-9)
    assert "delegate_events_note" not in result  # XNNPACK's per-operator profiling logged them
    import torch

    sources = {n.name for n in torch.export.load(str(low.source)).graph.nodes if n.op == "call_function"}
    assert result["source_node_times"] and set(result["source_node_times"]) <= sources


@pytest.mark.worker  # the command line starts the run job's worker
def test_through_the_cli_with_its_etrecord_alone(xnnpack: tuple[Lowered, Recording]) -> None:
    import json

    from tests.core.jobs.test_hostile import cli_streams

    low, rec = xnnpack
    rc, out, err = cli_streams("run", str(low.pte), "--etdump", str(rec.etdump), "--etrecord", str(low.etrecord),
                               "--json", "-q")
    assert rc == 0, err
    result = json.loads(out)
    assert set(result["node_times"]) == set(result["node_time_stats"]) and result["source_node_times"]
    rc, text, err = cli_streams("run", str(low.pte), "--etdump", str(rec.etdump), "-q")
    assert rc == 0 and f"timed in {rec.etdump.name} ({rec.runs} recorded runs)" in text, err
    assert "event inside it" in text and "median ms" in text


def test_numerics_from_the_etdump_equals_the_local_run(portable: tuple[Lowered, Recording], tmp_path: Path) -> None:
    from pt2_viewer.core.numerics.job import run_job

    low, rec = portable
    base = {"program": str(low.source), "candidate": str(low.pte), "etrecord": str(low.etrecord),
            "inputs": "generated", "seed": 0, "top": 5}
    local = run_job(base, tmp_path / "local", lambda _event: None)
    imported = run_job({**base, "etdump": str(rec.etdump), "debug_buffer": str(rec.debug_buffer)},
                       tmp_path / "imported", lambda _event: None)
    assert local["ok"] and imported["ok"], imported.get("error")
    assert imported["compared_program"].startswith(local["compared_program"] + "; its values recorded in run.etdp")
    assert local["compared"] >= 50 and imported["compared"] == local["compared"]
    assert imported["nodes"] == local["nodes"]  # the same rows: node, instruction, group, every metric
    assert imported["first_divergence"] == local["first_divergence"]
    assert (tmp_path / "local" / "pte_numerics" / "run.etdp").is_file()  # the local run wrote its own ETDump
    assert not (tmp_path / "imported" / "pte_numerics" / "run.etdp").exists()  # the import ran nothing


def test_numerics_needs_the_debug_buffer(portable: tuple[Lowered, Recording], tmp_path: Path) -> None:
    from pt2_viewer.core.numerics.job import run_job

    low, rec = portable
    result = run_job({"program": str(low.source), "candidate": str(low.pte), "etrecord": str(low.etrecord),
                      "etdump": str(rec.etdump)}, tmp_path, lambda _event: None)
    assert result["ok"] is False and result["error"]["kind"] == "request"
    assert "needs its debug buffer (--debug-buffer RUN.bin)" in result["error"]["message"]


@pytest.mark.worker  # the command line starts the numerics job's worker
def test_an_etdump_of_another_program_is_refused(xnnpack: tuple[Lowered, Recording],
                                                 portable: tuple[Lowered, Recording], tmp_path: Path) -> None:
    from tests.core.jobs.test_hostile import cli_streams

    low, _ = xnnpack
    _, other = portable  # the same model lowered to portable kernels: another program
    result = _run({"program": str(low.pte), "etdump": str(other.etdump), "source": str(low.source),
                   "etrecord": str(low.etrecord)}, tmp_path / "a")
    assert result["ok"] is False and result["error"]["kind"] == "mismatch"
    assert result["error"]["message"].startswith(f"The ETDump 'run.etdp' was not recorded from '{low.pte.name}'")
    rc, out, err = cli_streams("numerics", str(low.source), "--candidate", str(low.pte), "--etrecord",
                               str(low.etrecord), "--etdump", str(other.etdump), "--debug-buffer",
                               str(other.debug_buffer), "-q")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert rc == 1 and len(errors) == 1 and "was not recorded from" in errors[0], err
    assert "Traceback" not in err + out


def test_without_its_etrecord_a_file_lowering_does_not_reproduce_is_refused(tmp_path: Path) -> None:
    low = lowered_or_skip(SMALL, "portable")
    other = lowered_otherwise(low.source, tmp_path / "device.pte")
    rec = record(other, low.source, tmp_path / "device")
    refused = _run({"program": str(other), "etdump": str(rec.etdump), "source": str(low.source)}, tmp_path / "a")
    assert refused["ok"] is False and refused["error"]["kind"] == "mismatch"
    assert "is not what lowering the source to portable gives now" in refused["error"]["message"]
    assert "--etrecord FILE.etrecord" in refused["error"]["hint"]

    same = tmp_path / "same.pte"  # the lower job's file without the ETRecord it saved: lowering again gives it
    shutil.copy(low.pte, same)
    mine = record(same, low.source, tmp_path / "same")
    result = _run({"program": str(same), "etdump": str(mine.etdump), "source": str(low.source)}, tmp_path / "b")
    assert result["ok"], result.get("error")
    assert result["etrecord_how"] == "relowered" and result["source_node_times"]
    assert "delegate_events_note" not in result and result["delegate_events"] == []  # no delegate to speak of
