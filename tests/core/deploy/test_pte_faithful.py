"""Numerics never reports a divergence that is not there (issue 43 item 0): a faithful fp32 `.pte` of the zoo's
transformer, LSTM and CNN, lowered to portable and to XNNPACK, compares within the threshold at every row, each row
compared (a value the emitter left in its pre-view shape is read in the source's shape, an LSTM's one output paired
with the output the program reads); a file lowered from one Linear weight changed diverges first at that linear.
Which ETRecord mapped the file is said: the one beside it, or a fresh lowering whose instructions equal the file's,
argument for argument (a file with the same operators but another literal is refused); `run --node-times --source`
times the source's nodes the same way."""
from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.deploy_programs import lowered_or_skip
from tests.pte_numerics_programs import FAITHFUL, changed_weight, other_bounds

pytest.importorskip("executorch", reason="executorch lowers and runs the programs (requirements-dev.txt)")


def _numerics(request: dict[str, Any], out: Path) -> dict[str, Any]:
    from pt2_viewer.core.numerics.job import run_job

    return run_job({"inputs": "generated", "seed": 0, "top": 5, **request}, out, lambda _event: None)


@pytest.mark.parametrize(("model", "backend"), FAITHFUL)
def test_a_faithful_fp32_pte_has_no_divergence_and_every_row_is_compared(model: str, backend: str,
                                                                         tmp_path: Path) -> None:
    low = lowered_or_skip(model, backend)
    result = _numerics({"program": str(low.source), "candidate": str(low.pte)}, tmp_path)  # its ETRecord beside it
    assert result["ok"], result.get("error")
    assert result["etrecord_how"] == "beside" and result["etrecord_used"] == str(low.etrecord)
    assert result["compared_program"] == f"{low.pte.name}, mapped through the ETRecord {low.etrecord.name} " \
        "(found beside it)"
    rows = result["nodes"]
    assert result["first_divergence"] is None, [(r["node"], r["note"]) for r in rows if float(r["error"]) > 0.01]
    # every row the Inspector pairs is compared (before, a pre-view value or an LSTM's three outputs were `inf`),
    # but where the logged value has another number of elements than the source's: no value stands for it there
    skipped = [r for r in rows if r.get("compared") is False]
    assert rows and result["compared"] == len(rows) - len(skipped) and set(result["not_compared"]) >= {
        r["node"] for r in skipped}
    for r in skipped:
        logged, source = (math.prod(int(d) for d in re.findall(r"\d+", shape)) for shape in
                          re.findall(r"\[[\d, ]*\]", r["note"])[:2])
        assert r["note"].startswith("not compared: ") and logged != source, r
    assert len(skipped) <= len(rows) // 20
    assert all(float(r["error"]) <= 1e-3 for r in rows if r not in skipped)
    if (model, backend) == ("nn_transformer", "portable"):  # the emitter ran no instruction for a linear's view
        reshaped = [r for r in rows if "read as" in r["note"]]
        assert reshaped and all(r["candidate"].startswith("addmm_") for r in reshaped)
    if model == "nn_lstm" and backend == "portable":
        assert [r["note"] for r in rows if r["node"] == "lstm"] == ["output 0 of 3"]


def test_a_pte_lowered_from_a_changed_weight_diverges_first_at_that_linear(tmp_path: Path) -> None:
    import torch

    changed = changed_weight()
    result = _numerics({"program": str(changed.source), "candidate": str(changed.pte)}, tmp_path)
    assert result["ok"], result.get("error")
    # no ETRecord: the source lowered again, its instructions those of the file (the weights are not instructions)
    assert result["etrecord_how"] == "relowered" and result.get("etrecord_used") is None
    assert "fresh portable lowering of the source" in result["compared_program"]
    ep = torch.export.load(str(changed.source))
    linear = next(n.name for n in ep.graph.nodes if n.op == "call_function"
                  and list(n.meta.get("nn_module_stack", {}).values())[-1][0] == changed.module)
    found = result["first_divergence"]
    assert found is not None and found["node"] == linear
    rows = {r["node"]: r for r in result["nodes"]}
    assert float(rows[linear]["error"]) > 0.01 and "read as" in rows[linear]["note"]


def test_a_pte_with_the_same_operators_but_other_arguments_is_refused(tmp_path: Path) -> None:
    source, pte = other_bounds()
    result = _numerics({"program": str(source), "candidate": str(pte)}, tmp_path)
    assert result["ok"] is False and result["error"]["kind"] == "mismatch"
    message = result["error"]["message"]
    assert "clamp" in message and "with other arguments" in message
    assert "--etrecord" in result["error"]["hint"] and "NAME.etrecord" in result["error"]["hint"]


def test_run_node_times_by_source_node_without_an_etrecord(tmp_path: Path) -> None:
    from pt2_viewer.core.run.pte_job import run_job

    low = lowered_or_skip("nn_lstm", "portable")
    alone = tmp_path / "alone" / "tagger.pte"  # no ETRecord beside it: the source is lowered again
    alone.parent.mkdir()
    shutil.copy(low.pte, alone)
    request = {"source": str(low.source), "node_times": True, "warmup": 1, "runs": 1}
    relowered = run_job({**request, "program": str(alone)}, tmp_path / "a", lambda _event: None)
    beside = run_job({**request, "program": str(low.pte)}, tmp_path / "b", lambda _event: None)
    for result, how in ((relowered, "relowered"), (beside, "beside")):
        assert result["ok"], result.get("error")
        assert result["etrecord_how"] == how
        assert set(result["source_node_times"]) >= {"lstm", "linear"}
    assert beside["etrecord_used"] == str(low.etrecord)
    source, stranger = other_bounds()
    refused = run_job({**request, "source": str(source), "program": str(stranger)}, tmp_path / "c",
                      lambda _event: None)
    assert refused["ok"] is False and refused["error"]["kind"] == "mismatch"
