"""A program against its own `.pte` reads as what lowering did, not as a list of changes (issue 43 §3): on the zoo's
transformer lowered by the lower job to portable and to XNNPACK, paired through the ETRecord's debug handles, an op's
`.out` kernel, a `_copy` view, an op taken into a delegate, a decomposition's kernels and a planned-away view are
`lowered`, counted apart in `diff`'s JSON (a kind and counts added, none renamed) and drawn in the muted colour; a
dtype lowering changed is still `changed`. The delegation overlay gives delegated and not delegated one colour each,
whatever the backend, and its legend names both."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.deploy.delegation import DELEGATED, NOT_DELEGATED, delegation_overlay
from pt2_viewer.core.diff.handles import pte_provenance
from pt2_viewer.core.diff.nodes import CHANGED, LOWERED
from pt2_viewer.core.diff.output import summary_line, to_json
from pt2_viewer.core.diff.overlay import changed_nodes, diff_overlay
from pt2_viewer.core.diff.program_diff import ProgramDiff, diff_programs
from pt2_viewer.core.formats.registry import read
from pt2_viewer.core.graph import palette
from pt2_viewer.core.jobs.schemas.lower import LowerResult
from tests.deploy_programs import TRANSFORMER, Lowered, _version, lowered_or_skip
from tests.programs import cache_dir, cached_file

BACKENDS = ("portable", "xnnpack")
OLD_SUMMARY = {"added", "removed", "changed"}  # issue 29's format: kept, the count `lowered` added


def _diff(low: Lowered) -> ProgramDiff:
    source, pte = read(low.source).program(), read(low.pte).program()
    return diff_programs(source, pte, pte_provenance(source, pte, low.result["source_to_pte"]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lowering_is_lowered_not_changed(backend: str) -> None:
    diff = _diff(lowered_or_skip(TRANSFORMER, backend))
    s = diff.summary
    assert s["lowered"] > 500
    assert (s["added"], s["removed"], s["changed"]) == (0, 0, 0)  # nothing lowering was not expected to do
    assert not diff.kinds() & {"ops", "dtypes", "shapes"}
    by_a = {c.a: c for c in diff.nodes if c.a}
    relu = by_a["relu"]
    assert relu.kind == LOWERED
    if backend == "xnnpack":  # relu taken into the delegate (its pair, or a node the delegate also computes)
        assert relu.reason.startswith("taken into delegate_") and relu.reason.endswith("(XnnpackBackend)")
        delegated = [c for c in diff.nodes if c.a and c.b and c.b.startswith("delegate_")]
        assert delegated and all(c.kind == LOWERED and c.what[0] == "op" for c in delegated)
    else:  # relu -> relu_N: its .out kernel, and what differs is still said
        target = diff.b.graph.node_by_name[relu.b or ""].target.removeprefix("torch.ops.")
        assert target == "aten.relu.out" and relu.reason == "its kernel aten.relu.out" and relu.what[0] == "op"
    kernels = {c.reason.split()[-1] for c in diff.nodes if c.kind == LOWERED and c.a and c.b}
    assert "aten.select_copy.int_out" in kernels  # a `_copy` view
    made = [c for c in diff.nodes if c.kind == LOWERED and c.a is None and not c.placeholder]
    assert made and all(c.reason.startswith("made by lowering ") for c in made)  # sdpa's kernels
    assert "lowered" in summary_line(diff) and "(kinds: ops" not in summary_line(diff)


def test_lowered_nodes_are_drawn_muted_and_not_counted_as_changes() -> None:
    diff = _diff(lowered_or_skip(TRANSFORMER, "xnnpack"))
    overlay = diff_overlay(diff, "b")
    lowered = [c.b for c in diff.nodes if c.kind == LOWERED and c.b]
    assert {overlay.categories[n] for n in lowered} == {palette.DIFF_CATEGORIES[LOWERED]} == {palette.MUTED}
    assert palette.OVERLAY_CATEGORIES[palette.MUTED] not in palette.OVERLAY_CATEGORIES[:palette.MUTED]
    assert [i.label for i in overlay.legend] == [f"lowered ({len(lowered)})"]
    assert not overlay.values and not changed_nodes(diff, "b")  # a collapsed group holds no change


def test_diff_json_adds_the_lowered_kind_and_keeps_its_format(capsys: pytest.CaptureFixture[str]) -> None:
    low = lowered_or_skip(TRANSFORMER, "portable")
    assert cli_main(["diff", str(low.source), str(low.pte), "--json", "--etrecord", str(low.etrecord)]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert set(out["summary"]) == OLD_SUMMARY | {"lowered"} and out["summary"]["lowered"] > 500
    assert {"path", "added", "removed", "changed", "lowered"} == set(out["modules"][0])
    relu = next(n for n in out["nodes"] if n["a"] == "relu")
    assert relu["kind"] == LOWERED and relu["what"][0] == "op" and relu["reason"] == "its kernel aten.relu.out"
    assert cli_main(["diff", str(low.source), str(low.pte), "--etrecord", str(low.etrecord),
                     "--fail-on", "ops,dtypes,shapes"]) == 0  # what lowering does fails no build
    assert "lowered" in capsys.readouterr().out


def _float64_lowering(folder: Path) -> dict[str, Any]:
    """The zoo's small linear model as float64, lowered to portable by the lower job: its fp32 export's `.pte`
    with every dtype changed."""
    from pt2_viewer.core.deploy.lower import run_job
    from tests.zoo.pipeline import _Small

    def build(tmp: Path) -> None:
        torch.manual_seed(0)
        model = _Small().eval().to(torch.float64)
        source = folder / "small64.pt2"
        torch.export.save(torch.export.export(model, (torch.randn(2, 8, dtype=torch.float64),)), str(source))
        result = run_job({"program": str(source), "to": "portable", "output": str(folder / "small64.pte")},
                         folder, lambda _event: None)
        assert result["ok"], result
        tmp.write_text(json.dumps(result), encoding="utf-8")

    folder.mkdir(parents=True, exist_ok=True)
    return dict(json.loads(cached_file(folder / "small64.lower.json", build).read_text(encoding="utf-8")))


def test_a_dtype_lowering_changed_is_still_changed() -> None:
    pytest.importorskip("executorch", reason="executorch lowers the program (requirements-dev.txt)")
    from tests.zoo.pipeline import small_pt2

    result = _float64_lowering(cache_dir(_float64_lowering, _version("executorch")) / "small64")
    source, pte = read(small_pt2()).program(), read(result["pte"]).program()
    diff = diff_programs(source, pte, pte_provenance(source, pte, result["source_to_pte"]))
    by_a = {c.a: c for c in diff.nodes if c.a}
    for op in ("linear", "relu", "mul"):  # f32 -> f64: not what lowering does
        assert by_a[op].kind == CHANGED and "dtype" in by_a[op].what
    assert {"dtypes", "ops"} <= diff.kinds()
    made = next(c for c in diff.nodes if c.a is None and c.b and c.b.startswith("permute_copy"))
    assert made.kind == LOWERED  # linear's permute, made by lowering, is still only that
    assert to_json(diff, "a", "b")["summary"]["changed"] >= 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_delegated_and_not_delegated_keep_their_colours(backend: str) -> None:
    """Portable delegates nothing and XNNPACK most: the counts flip, the colours do not."""
    low = lowered_or_skip(TRANSFORMER, backend)
    overlay = delegation_overlay(LowerResult.from_json(low.result))
    colour = {n: overlay.categories[n] for n in low.result["delegated"]}
    colour.update({r["node"]: overlay.categories[r["node"]] for r in low.result["not_delegated"]})
    assert colour
    for n in low.result["delegated"]:
        assert colour[n] == palette.DELEGATION_CATEGORIES[DELEGATED]
    for r in low.result["not_delegated"]:
        assert colour[r["node"]] == palette.DELEGATION_CATEGORIES[NOT_DELEGATED]
    legend = {i.label.split(" (")[0]: i.category for i in overlay.legend}
    assert legend == {DELEGATED: 0, NOT_DELEGATED: 1}  # both named, even where one has no node
    assert palette.DELEGATION_CATEGORIES == {DELEGATED: 0, NOT_DELEGATED: 1}
