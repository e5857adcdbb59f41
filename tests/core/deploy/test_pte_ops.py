"""A `.pte` op by op: `numerics SOURCE.pt2 --candidate FILE.pte --etrecord FILE.etrecord` compares each instruction
and delegate call with the source's node, matched as ExecuTorch's own Inspector matches them (its
`calculate_numeric_gap` on the same run is the referee), and `run FILE.pte --node-times` times them by the `.pte`
graph's nodes and the source's. Programs: the zoo's CNN lowered to XNNPACK and to portable, the PT2E int8 CNN (the
transformer's lowering is checked in test_lower.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.deploy_programs import lowered_or_skip

pytest.importorskip("executorch", reason="executorch lowers and runs the programs (requirements-dev.txt)")


def _numerics(request: dict[str, Any], out: Path) -> dict[str, Any]:
    from pt2_viewer.core.numerics.job import run_job

    result = run_job({"inputs": "generated", "seed": 0, "top": 5, **request}, out, lambda _event: None)
    assert result["ok"], result.get("error")
    return result


def _inspectors_rows(low: Any, out: Path) -> list[tuple[list[str], float]]:
    """ExecuTorch's answer for the run the job made: (aot_ops, MSE) per row of calculate_numeric_gap."""
    import torch
    import torch.utils._pytree as pytree
    from executorch.devtools import Inspector
    from executorch.devtools.etrecord import parse_etrecord

    from pt2_viewer.core.run.inputs import generate_inputs

    made = generate_inputs(torch.export.load(str(low.source)), None, 0)
    rec = parse_etrecord(str(low.etrecord))
    rec.update_representative_inputs([tuple(pytree.tree_leaves((made.args, made.kwargs)))])
    work = out / "pte_numerics"
    inspector = Inspector(etdump_path=str(work / "run.etdp"), etrecord=rec,
                          debug_buffer_path=str(work / "run.debug"))
    df = inspector.calculate_numeric_gap("MSE")
    return [(list(r.aot_ops), float(r.gap[0])) for r in df.itertuples()]


@pytest.mark.parametrize("model", ["mobilenet_v3_small", "int8_cnn"])
def test_each_instruction_is_compared_where_the_inspector_compares_it(model: str, tmp_path: Path) -> None:
    low = lowered_or_skip(model, "xnnpack")
    result = _numerics({"program": str(low.source), "candidate": str(low.pte), "etrecord": str(low.etrecord)},
                       tmp_path)
    assert result["per_node"] is True and result["kind"] == "pte"
    assert result["compared_program"] == f"{low.pte.name}, mapped through the ETRecord {low.etrecord.name}"
    rows = {tuple(sorted(r["group"])): r for r in result["nodes"]}
    referee = _inspectors_rows(low, tmp_path)
    assert len(referee) == len(result["nodes"])
    for aot_ops, mse in referee:
        row = rows[tuple(sorted(aot_ops))]  # the same source nodes, for the same runtime value
        assert row["node"] in aot_ops
        assert mse <= float(row["max_abs"]) ** 2 * 1.0001 + 1e-12  # MSE never exceeds the largest error squared
    delegated = [r for r in result["nodes"] if r["delegate"]]
    assert delegated and all(r["delegate"] == "XnnpackBackend" and r["candidate"].startswith("delegate_")
                             for r in delegated)


def test_a_tight_threshold_names_the_first_divergent_op(tmp_path: Path) -> None:
    low = lowered_or_skip("mobilenet_v3_small", "xnnpack")
    result = _numerics({"program": str(low.source), "candidate": str(low.pte), "etrecord": str(low.etrecord),
                        "threshold": 1e-7}, tmp_path)
    found = result["first_divergence"]
    assert found is not None
    rows = {r["node"]: r for r in result["nodes"]}
    assert float(rows[found["node"]]["error"]) > 1e-7
    assert all(float(rows[i]["error"]) <= 1e-7 for i in found["inputs"] if i in rows)


def test_without_an_etrecord_the_source_is_lowered_again_and_a_stranger_refused(tmp_path: Path) -> None:
    import shutil

    low = lowered_or_skip("mobilenet_v3_small", "portable")
    alone = tmp_path / "alone.pte"  # without the ETRecord the lower job saved beside it
    shutil.copy(low.pte, alone)
    result = _numerics({"program": str(low.source), "candidate": str(alone)}, tmp_path / "a")
    assert result["per_node"] is True and "fresh portable lowering" in result["compared_program"]
    assert result["etrecord_how"] == "relowered" and "etrecord_used" not in result
    assert result["compared"] >= 10 and all(r["delegate"] == "" for r in result["nodes"])
    from pt2_viewer.core.numerics.job import run_job

    int8 = lowered_or_skip("int8_cnn", "xnnpack")
    refused = run_job({"program": str(low.source), "candidate": str(int8.pte), "etrecord": str(int8.etrecord)},
                      tmp_path / "b", lambda _event: None)
    assert refused["ok"] is False and refused["error"]["kind"] == "mismatch"
    assert "was not made from this source program" in refused["error"]["message"]


def test_node_times_are_keyed_by_the_pte_graph_and_the_source(tmp_path: Path) -> None:
    import torch

    from pt2_viewer.core.pte.reader import read_pte
    from pt2_viewer.core.run.pte_job import run_job

    low = lowered_or_skip("mobilenet_v3_small", "xnnpack")
    result = run_job({"program": str(low.pte), "source": str(low.source), "etrecord": str(low.etrecord),
                      "node_times": True, "warmup": 1, "runs": 2}, tmp_path, lambda _event: None)
    assert result["ok"], result.get("error")
    shown = {n.name for n in read_pte(low.pte).programs[0].graph.nodes}
    times, source = result["node_times"], result["source_node_times"]
    assert times and set(times) <= shown and any(n.startswith("delegate_") for n in times)
    assert [h["node"] for h in result["hottest"]] == list(times)[:len(result["hottest"])]
    calls = {n.name for n in torch.export.load(str(low.source)).graph.nodes if n.op == "call_function"}
    assert source and set(source) <= calls
    assert sum(source.values()) <= sum(times.values()) * 1.0001
