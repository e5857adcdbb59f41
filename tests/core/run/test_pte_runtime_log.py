"""A `.pte` ExecuTorch cannot load says the runtime's own reason, and `run` keeps the runtime's noise out (issue 43
§2): a program that needs `aten::sort.values`, lowered without a backend that takes it, names the missing operator,
says the portable kernels lack it and suggests the fix, not "a delegate missing… pip install executorch"; running
an XNNPACK `.pte` prints none of XNNPACK's `[cpuinfo_utils.cpp…]` lines."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("executorch", reason="executorch builds and runs the .pte test files (requirements-dev.txt)")


@pytest.fixture(scope="module")
def sort_pte(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from executorch.exir import to_edge_transform_and_lower

    class Sorted(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sort(x, dim=-1).values + 1

    path = tmp_path_factory.mktemp("pte") / "sorted.pte"  # no partitioner: the portable kernels, which lack sort
    ep = torch.export.export(Sorted(), (torch.randn(2, 8),))
    path.write_bytes(to_edge_transform_and_lower(ep).to_executorch().buffer)
    return path


def _run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pt2_viewer", "run", str(path), "--device", "cpu"],
                          capture_output=True, text=True, timeout=600)


def test_a_missing_operator_is_named_with_its_fix(sort_pte: Path) -> None:
    done = _run(sort_pte)
    assert done.returncode != 0
    error = next(line for line in done.stderr.splitlines() if line.startswith("error: "))
    assert "missing operator aten::sort.values" in error and "portable kernels" in error
    assert "XnnpackPartitioner" in done.stderr and "custom-ops library" in done.stderr
    assert "A delegate (XNNPACK" not in done.stderr and "pip install executorch" not in done.stderr


def test_run_prints_none_of_the_runtimes_cpu_probing() -> None:
    from tests.programs import ExportFailed
    from tests.zoo.pipeline import small_pte

    try:
        path = small_pte("xnnpack")
    except ExportFailed as e:
        pytest.skip(str(e))
    done = _run(path)
    assert done.returncode == 0, done.stderr
    assert "Latency" in done.stdout or "latency" in done.stdout
    assert "cpuinfo_utils" not in done.stderr
