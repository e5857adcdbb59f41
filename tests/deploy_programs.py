"""Programs past the deploy boundary, made by the `lower` job itself (core/deploy/lower.py, in-process) and cached as
the test programs are (tests/programs.py `cached_file`, keyed by this builder's source and executorch's version):
the zoo's CNN and transformer lowered to portable and to XNNPACK, and a PT2E int8 program (XNNPACKQuantizer,
`prepare_pt2e`/`convert_pt2e`) lowered to XNNPACK. Each lowering keeps its `.pte`, its ETRecord and the job's
result (`NAME.BACKEND.lower.json`: delegated, not_delegated, checks).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tests.fixture_root import SHARED_FIXTURE_ROOT
from tests.programs import builder_key, cache_dir, cached_file

CNN, TRANSFORMER, INT8 = "mobilenet_v3_small", "nn_transformer", "int8_cnn"
SMALL = "small"  # tests/zoo/pipeline.py's linear layer: what the hostile and fuzz cases mutate


def _deploy_code() -> str:
    """The lowering code's own version: a change to core/deploy/ (how verdicts are found) rebuilds the results."""
    import hashlib

    folder = Path(__file__).resolve().parent.parent / "core" / "deploy"
    files = ("lower.py", "why.py", "provenance.py", "pte_map.py")
    return hashlib.sha256(b"".join((folder / f).read_bytes() for f in files)).hexdigest()[:12]


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return "missing"


@dataclass
class Lowered:
    source: Path  # the .pt2 lowered
    pte: Path
    etrecord: Path
    result: dict[str, Any]  # the lower job's result


class SmallCnn(torch.nn.Module):
    """What the int8 program quantizes: convolution, batch norm, ReLU, pooling and a linear layer."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(y, 1))


def _int8_source(tmp: Path) -> None:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(0)
    model = SmallCnn().eval()
    example = (torch.randn(1, 3, 16, 16),)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(torch.export.export(model, example).module(), quantizer)
    for _ in range(4):
        prepared(torch.randn(1, 3, 16, 16))
    converted = convert_pt2e(prepared)
    torch.export.save(torch.export.export(converted, example), str(tmp))


def source_path(model: str) -> Path:
    """The `.pt2` a deploy fixture is lowered from: the zoo's own program, the PT2E int8 CNN, or the small model."""
    if model == INT8:
        return cached_file(cache_dir(_int8_source, _version("executorch")) / "int8_cnn.pt2", _int8_source)
    from tests.zoo.pipeline import small_pt2, source_pt2

    if model == SMALL:
        return small_pt2()
    return source_pt2(model)


def lowered(model: str, backend: str) -> Lowered:
    """`model` lowered to `backend` by the lower job, with its ETRecord and result."""
    from pt2_viewer.core.deploy.lower import run_job

    source = source_path(model)
    # a zoo model's lowering is kept per user, beside the zoo (tests/fixture_root.py); the int8 CNN's source is
    # this checkout's own program, so its lowering stays with it
    key = (_version("executorch"), _deploy_code())
    root = cache_dir(lowered, *key) if model == INT8 else (
        SHARED_FIXTURE_ROOT / "deployed" / torch.__version__ / builder_key(lowered, *key))
    folder = root / f"{model}.{backend}"

    def build(tmp: Path) -> None:
        result = run_job({"program": str(source), "to": backend, "output": str(folder / f"{model}.pte")},
                         tmp.parent, lambda _event: None)
        if not result["ok"]:
            raise RuntimeError(result["error"]["message"])
        tmp.write_text(json.dumps(result), encoding="utf-8")

    path = cached_file(folder / "lower.json", build)
    result = json.loads(path.read_text(encoding="utf-8"))
    return Lowered(source, Path(result["pte"]), Path(result["etrecord"]), result)


def lowered_or_skip(model: str, backend: str) -> Lowered:
    """`lowered`, skipping the test (with ExecuTorch's or torch's reason) when the program cannot be built."""
    import pytest

    from tests.programs import ExportFailed

    pytest.importorskip("executorch", reason="executorch lowers the programs (requirements-dev.txt)")
    try:
        return lowered(model, backend)
    except ExportFailed as e:
        pytest.skip(str(e))


def inside_delegates(etrecord: Path) -> tuple[set[str], set[str]]:
    """ExecuTorch's own answer: source nodes whose debug handles a delegate call carries, and those a kernel call
    carries (the ETRecord's instruction maps, its delegate map naming the delegate calls, and the handles ExecuTorch
    propagates back onto the source)."""
    from executorch.devtools.etrecord import parse_etrecord
    from executorch.devtools.inspector._inspector_utils import propagate_back_debug_handle

    rec = parse_etrecord(str(etrecord))
    assert propagate_back_debug_handle(rec.exported_program, rec.export_graph_id, rec.edge_dialect_program, True)
    by_handle: dict[int, set[str]] = {}
    for n in rec.exported_program.graph.nodes:
        h = n.meta.get("debug_handle")
        for x in ([h] if isinstance(h, int) else h or []):
            by_handle.setdefault(int(x), set()).add(n.name)
    delegate_calls = set((rec._delegate_map or {}).get("forward", {}))
    inside: set[str] = set()
    outside: set[str] = set()
    for instruction, handles in rec._debug_handle_map["forward"].items():
        names = {n for h in ([handles] if isinstance(handles, int) else handles) for n in by_handle.get(int(h), ())}
        (inside if instruction in delegate_calls else outside).update(names)
    return inside, outside


def executorch_delegation(low: Lowered) -> tuple[set[str], set[str]]:
    """`inside_delegates(low.etrecord)`, stored beside the ETRecord (tests/torch_reference.py `stored`): parsing the
    transformer's ETRecord and propagating its handles takes ExecuTorch over a minute; `make fixtures` computes it."""
    from tests.torch_reference import stored

    inside, outside = stored(low.etrecord, "delegation", lambda: [sorted(s) for s in inside_delegates(low.etrecord)])
    return set(inside), set(outside)
