"""A `.pte` chosen as the Numerics tab's candidate is mapped through the ETRecord saved beside it (`NAME.etrecord`,
as Lower to ExecuTorch… saves it), as the pipeline view pairs them; without one, the source is lowered again.
Real files: the small linear program lowered by the lower job (tests/deploy_programs.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

from pt2_viewer.core.numerics.job import run_job
from pt2_viewer.core.numerics.readout import NumericsOptions, build_request
from tests.deploy_programs import SMALL, lowered_or_skip


def test_the_etrecord_beside_the_pte_maps_it_and_none_means_lowered_again(tmp_path: Path) -> None:
    low = lowered_or_skip(SMALL, "portable")
    pte = tmp_path / "mine.pte"  # the name the user gave it, not the lower job's
    shutil.copy(low.pte, pte)
    options = NumericsOptions(candidate="lowered", table=str(pte))
    assert build_request(str(low.source), None, options).etrecord is None
    shutil.copy(low.etrecord, tmp_path / "mine.etrecord")
    request = build_request(str(low.source), None, options)
    assert request.etrecord == str(tmp_path / "mine.etrecord")

    result = run_job(request.to_json(), tmp_path / "out", lambda _e: None)
    assert result["ok"], result.get("error")
    assert result["compared_program"] == "mine.pte, mapped through the ETRecord mine.etrecord"
    assert result["per_node"] and result["compared"] >= 1 and result["first_divergence"] is None
