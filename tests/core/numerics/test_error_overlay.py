"""The Numerics error overlay on real runs: a faithful run's noise is painted as agreement, however its errors
compare with each other (fp16 noise, 4e-4 beside 1e-3, once took the whole scale, dark red), and a divergence stands
out."""
from __future__ import annotations

from pathlib import Path

from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.numerics.job import run_job
from pt2_viewer.core.numerics.readout import OVER_FLOOR, error_overlay
from tests.core.numerics.programs import numerics_programs  # noqa: F401  (a fixture)


def overlay_of(path: Path, out: Path, candidate: str):  # type: ignore[no-untyped-def]
    result = NumericsResult.from_json(run_job({"program": str(path), "candidate": candidate}, out, lambda e: None))
    assert result.ok, result.error
    overlay = error_overlay(result)
    assert overlay is not None
    return result, overlay


def test_noise_without_a_divergence_is_painted_as_agreement(numerics_programs: dict[str, Path],
                                                           tmp_path: Path) -> None:
    result, overlay = overlay_of(numerics_programs["convs"], tmp_path, "fp16")
    assert result.first_divergence is None
    noise = sorted({v for v in overlay.values.values() if v > 0})
    assert len(noise) >= 2 and noise[-1] < 1e-2  # errors of different sizes, all far under the threshold
    assert set(overlay.levels.values()) == {0.0}  # every node the agreement colour, the largest noise included
    assert [i.label for i in overlay.legend] == ["within threshold 0.01", "over 0.01"]


def test_a_divergence_is_painted_over_agreement(numerics_programs: dict[str, Path], tmp_path: Path) -> None:
    result, overlay = overlay_of(numerics_programs["overflow"], tmp_path, "fp16")
    first = result.first_divergence.node if result.first_divergence else None
    assert first == "mul_1" and overlay.levels[first] == 1.0
    over = {n for n, v in overlay.values.items() if not v <= 0.01}
    assert over and all(overlay.levels[n] >= OVER_FLOOR for n in over)
    assert all(level == 0.0 for n, level in overlay.levels.items() if n not in over)
    assert overlay.legend[0].label == "within threshold 0.01" and overlay.legend[1].label.startswith("worst ")
