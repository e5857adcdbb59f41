"""The run session on real run results from this torch: the inputs form's dims from a program's symbols, the request,
output rows, latency text, heat values normalised 0..1 keyed by the nodes the viewer shows, hottest nodes, failures
with advice, and what the result says about CUDA. No Qt: the run job runs in this process."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from pt2_viewer.core.jobs.schemas.run import RunResult
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.run.job import run
from pt2_viewer.core.run.readout import (
    UNBOUNDED_MAX,
    RunOptions,
    build_request,
    comparison_lines,
    cuda_status_of,
    dim_fields,
    failure_of,
    format_seconds,
    heat_values,
    hottest,
    latency_text,
    output_rows,
)
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


class TwoHeads(torch.nn.Module):
    """A dynamic batch, a linear layer and two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.fc(x).relu()
        return h.softmax(-1), 1.0 / x


@pytest.fixture(scope="session")
def two_heads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    batch = torch.export.Dim("batch", min=2, max=32)
    ep = torch.export.export(TwoHeads(), (torch.randn(3, 6),), dynamic_shapes=({0: batch},))
    path = tmp_path_factory.mktemp("run-session") / "two_heads.pt2"
    torch.export.save(ep, path)
    return path


@pytest.fixture(scope="session")
def ran(two_heads: Path, tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    program = read_archive(two_heads).program()
    (field,) = dim_fields(program)
    options = RunOptions(inputs="generated", dims={field.symbol: 5}, warmup=1, runs=3, node_times=True)
    result = run(build_request(str(two_heads), program.name, options), tmp_path_factory.mktemp("run"), lambda e: None)
    assert result.ok, result.error
    return result


def test_dim_fields_come_from_the_programs_symbols(two_heads: Path) -> None:
    (field,) = dim_fields(read_archive(two_heads).program())
    assert field.sources == ["x.shape[0]"] and field.label == "x.shape[0]"
    assert (field.minimum, field.maximum, field.default) == (2, 32, 3)
    assert field.range_text == f"{field.symbol} in [2, 32]"


def test_request_carries_dims_only_for_generated_inputs(two_heads: Path) -> None:
    sample = build_request("m.pt2", "model", RunOptions(inputs="auto", dims={"s0": 4}))
    assert sample.dims is None and sample.program_name == "model" and sample.device == "cpu"
    generated = build_request("m.pt2", None, RunOptions(inputs="generated", dims={"s0": 4}, aoti=True,
                                                        aoti_package="/tmp/p.pt2", preload="ops.py"))
    assert generated.dims == {"s0": 4} and generated.aoti_package == "/tmp/p.pt2"
    assert generated.preload == "ops.py" and generated.program_name is None
    with pytest.raises(ValueError, match="inputs must be one of"):
        build_request("m.pt2", None, RunOptions(inputs="random"))


def test_output_rows_and_latency(ran: RunResult) -> None:
    rows = output_rows(ran)
    assert [r.name for r in rows] == ["out[0]", "out[1]"]
    soft = rows[0]
    assert (soft.dtype, soft.shape) == ("float32", "[5, 4]")
    assert 0 <= float(soft.minimum) <= float(soft.maximum) <= 1
    assert soft.preview.endswith(", …")  # 20 values, 8 shown
    assert len(soft.cells()) == 9 and not soft.bad
    assert ran.latency is not None
    text = latency_text(ran.latency)
    assert text.startswith("median ") and "spread (IQR)" in text and "3 runs after 1 warm-up" in text
    assert comparison_lines(ran) == []  # neither torch.compile nor AOTInductor was asked for


def test_heat_is_normalised_and_keyed_by_shown_nodes(ran: RunResult, two_heads: Path) -> None:
    assert ran.node_times is not None
    heat = heat_values(ran.node_times)
    assert set(heat) == set(ran.node_times)
    assert max(heat.values()) == 1.0 and all(0.0 <= v <= 1.0 for v in heat.values())
    shown = {n.name for n in read_archive(two_heads).program().graph.nodes}
    assert set(heat) <= shown
    hot = hottest(ran, limit=3)
    assert [h.node for h in hot] == list(ran.node_times)[:3]
    assert heat[hot[0].node] == 1.0
    assert hot[0].seconds >= hot[1].seconds >= hot[2].seconds
    assert 0 < hot[0].share <= 1 and hot[0].node in hot[0].text()
    assert heat_values({}) == {} and heat_values({"a": 0.0}) == {"a": 0.0}


def test_failures_read_with_advice(two_heads: Path, tmp_path: Path) -> None:
    result = run(build_request(str(two_heads), None, RunOptions(inputs="generated", dims={"nope": 3})),
                 tmp_path, lambda e: None)
    failure = failure_of(result)
    assert failure is not None and failure.kind == "input"
    assert "No dynamic dim is called nope" in failure.text()
    assert "inputs form" in failure.text()  # the advice says where to fix it
    assert failure_of(RunResult(ok=True)) is None


def test_cuda_status_is_read_from_any_result(ran: RunResult) -> None:
    status = cuda_status_of(ran)
    assert status is not None and status.available == torch.cuda.is_available()
    if not status.available:
        assert status.reason and status.reason in status.button_tip()
    assert cuda_status_of(RunResult(ok=False)) is None
    assert format_seconds(0.0123) == "12.30 ms" and format_seconds(2.5) == "2.50 s"
    assert format_seconds(4e-6) == "4.0 µs" and format_seconds(None) == "–"


def test_dim_fields_follow_input_order_and_show_unbounded_ranges(pt2_path: Any) -> None:
    fields = dim_fields(read_archive(pt2_path("dynamic_shapes")).program())
    # x.shape[0] is Dim("batch", max=1024); the rest are Dim.AUTO: no upper end
    assert [f.label for f in fields] == ["x.shape[0]", "x.shape[1], y.shape[0]", "y.shape[1]"]
    assert [f.range_text.split(" in ")[1] for f in fields] == ["[2, 1024]", "[2, ∞]", "[2, ∞]"]
    assert [(f.minimum, f.maximum, f.default) for f in fields] == [(2, 1024, 4), (2, UNBOUNDED_MAX, 5),
                                                                  (2, UNBOUNDED_MAX, 6)]


def test_dim_fields_skip_derived_symbols_and_name_int_inputs(pt2_path: Any, tmp_path: Path) -> None:
    program = read_archive(pt2_path("tutorial_auto_dims")).program()
    assert any(not s.name.isidentifier() for s in program.symbols)  # z's size is s17*s77 in range_constraints
    fields = dim_fields(program)
    assert [f.label for f in fields] == ["w.shape[0]", "x.shape[0], y.shape[1]", "y.shape[0]"]
    options = RunOptions(inputs="generated", dims={f.symbol: f.default + 1 for f in fields}, warmup=0, runs=1)
    result = run(build_request(str(pt2_path("tutorial_auto_dims")), None, options), tmp_path, lambda e: None)
    assert result.ok, result.error
    assert [o["shape"] for o in result.outputs or []] == [[7, 3], [45]]

    (x, n) = dim_fields(read_archive(pt2_path("input_kinds")).program())
    assert (x.label, n.label) == ("x.shape[0]", "n")
    assert (n.minimum, n.default, n.range_text) == (0, 7, f"{n.symbol} in [0, ∞]")  # an int, not a size: from 0
