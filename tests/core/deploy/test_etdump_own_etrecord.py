"""An imported ETDump needs its ETRecord (issue 41 §2, its Done when): the zoo's CNN lowered to XNNPACK on "the
device's" terms (its memory plan aligned to 128 bytes, as tests/etdump_recordings.py `lowered_otherwise` does for
portable kernels), its ETRecord kept apart from the `.pte`, and a recording of it written by a separate ExecuTorch
runtime process. Without the ETRecord, lowering the source again here gives other instructions, and the import is
refused in one line saying what to pass; with it, the times are the Inspector's own event table."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.deploy.test_etdump_import import _inspectors_table
from tests.deploy_programs import CNN, Lowered, lowered_or_skip
from tests.etdump_recordings import Recording, record

pytestmark = pytest.mark.worker  # the command line starts the run job's worker


def _lowered_on_the_device(source: Path, folder: Path) -> tuple[Path, Path]:
    """`source` lowered to XNNPACK with a 128-byte memory plan, its `.pte` and its ETRecord (not beside it)."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    config = ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(alignment=128))
    edge = to_edge_transform_and_lower(torch.export.load(str(source)), partitioner=[XnnpackPartitioner()],
                                       generate_etrecord=True)
    program = edge.to_executorch(config)
    pte, etrecord = folder / "device.pte", folder / "records" / "device.etrecord"
    etrecord.parent.mkdir(parents=True)
    pte.write_bytes(program.buffer)
    program.get_etrecord().save(str(etrecord))
    return pte, etrecord


@pytest.fixture(scope="module")
def on_device(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lowered, Path, Path, Recording]:
    low = lowered_or_skip(CNN, "xnnpack")
    folder = tmp_path_factory.mktemp("device")
    pte, etrecord = _lowered_on_the_device(low.source, folder)
    return low, pte, etrecord, record(pte, low.source, folder / "run")


def test_without_its_etrecord_the_cnns_recording_is_refused(on_device: tuple[Lowered, Path, Path, Recording]
                                                            ) -> None:
    from tests.core.jobs.test_hostile import cli_streams

    low, pte, _, rec = on_device
    assert pte.read_bytes() != low.pte.read_bytes()  # the lower job's own lowering differs
    rc, out, err = cli_streams("run", str(pte), "--etdump", str(rec.etdump), "--source", str(low.source), "--json",
                               "-q")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert rc == 1 and len(errors) == 1, err
    assert "'device.pte' is not what lowering the source to xnnpack gives now" in errors[0]
    refused = json.loads(out)  # --json prints the failed result too
    assert refused["ok"] is False and refused["error"]["kind"] == "mismatch" and "node_times" not in refused
    assert "--etrecord FILE.etrecord" in err and "Traceback" not in err


def test_with_its_etrecord_the_cnns_recording_is_the_inspectors_table(
        on_device: tuple[Lowered, Path, Path, Recording]) -> None:
    from pt2_viewer.core.pte.reader import read_pte
    from tests.core.jobs.test_hostile import cli_streams

    low, pte, etrecord, rec = on_device
    rc, out, err = cli_streams("run", str(pte), "--etdump", str(rec.etdump), "--etrecord", str(etrecord),
                               "--source", str(low.source), "--json", "-q")
    assert rc == 0, err
    result = json.loads(out)
    assert result["etrecord_how"] == "given" and result["source_node_times"]
    table = _inspectors_table(rec, etrecord)
    calls = table[~table["is_delegated_op"].astype(bool)]
    order = [name for _, name in sorted((int(n.metadata["instruction"]), n.name)
                                        for n in read_pte(pte).programs[0].graph.nodes if "instruction" in n.metadata)]
    assert len(calls) == len(order) == len(result["node_time_stats"])
    for node, row in zip(order, calls.to_dict("records")):
        stats = result["node_time_stats"][node]
        assert stats["count"] == len(row["raw"]) == rec.runs
        assert stats["median_s"] == pytest.approx(row["p50 (ms)"] * 1e-3, rel=1e-9)
        assert stats["p90_s"] == pytest.approx(row["p90 (ms)"] * 1e-3, rel=1e-9)
        assert result["node_times"][node] == pytest.approx(row["min (ms)"] * 1e-3, rel=1e-9)
    inside = table[table["is_delegated_op"].astype(bool)]
    assert [e["event"] for e in result["delegate_events"]] == list(inside["event_name"]) and len(inside) > 10
