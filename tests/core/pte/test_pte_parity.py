"""`info --json` of a `.pte` agrees with ExecuTorch's own deserializer (`executorch.exir._serialize`), on the zoo's
CNN and transformer, portable and lowered to XNNPACK; and the graph the window draws says the same."""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.formats.registry import read
from pt2_viewer.core.model.program import NodeOp
from pt2_viewer.core.pt2.info import archive_info
from tests.pte_reference import executorch_answer
from tests.zoo.pipeline import PTE_KINDS, PTE_MODELS

CASES = [(m, k) for m in PTE_MODELS for k in PTE_KINDS]


@pytest.mark.parametrize(("model", "kind"), CASES)
def test_info_json_matches_executorch(pte_file: Callable[[str, str], Path], model: str, kind: str) -> None:
    path = pte_file(model, kind)
    ours = archive_info(read(path))
    assert ours == executorch_answer(path)
    method = ours["methods"][0]
    if kind == "xnnpack":
        assert method["delegates"] and {d["backend"] for d in method["delegates"]} == {"XnnpackBackend"}
    else:
        assert method["delegates"] == [] and any(op.startswith("aten::") for op in method["operators"])
    assert method["memory"]["peak"] > 0


def test_info_cli_prints_the_documented_object(pte_file: Callable[[str, str], Path], tmp_path: Path) -> None:
    """Recognised by its magic whatever its name: the same file, renamed `.bin`, is still a `.pte`."""
    renamed = tmp_path / "model.bin"
    original = pte_file("mobilenet_v3_small", "xnnpack")
    renamed.write_bytes(original.read_bytes())
    out = subprocess.run([sys.executable, "-m", "pt2_viewer", "info", str(renamed), "--json"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert list(info) == ["format", "schema_version", "methods"]
    assert list(info["methods"][0]) == ["name", "operators", "delegates", "inputs", "outputs", "memory"]
    assert info == executorch_answer(original)  # what ExecuTorch reads in these very bytes


@pytest.mark.parametrize(("model", "kind"), CASES)
def test_the_graph_is_the_execution_plan(pte_file: Callable[[str, str], Path], model: str, kind: str) -> None:
    """One node per instruction, each kernel named as torch spells the operator, each delegate call one block naming
    its backend and payload, every tensor with its dtype, shape and dim order, the memory plan's tensors in buffers
    no larger than planned."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    path = pte_file(model, kind)
    archive = read(path)
    plan = deserialize_pte_binary(path.read_bytes()).program.execution_plan[0]
    program = archive.programs[0]
    calls = [n for n in program.graph.nodes if n.op is NodeOp.CALL_FUNCTION]
    assert len(calls) == sum(len(c.instructions) for c in plan.chains)
    ops = {f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators}
    kernels = [n for n in calls if "operator" in n.metadata]
    assert {n.metadata["operator"] for n in kernels} <= ops
    for n in kernels:
        assert n.target.startswith("torch.ops.") and n.outputs, n.name
    delegates = [n for n in calls if n.target.startswith("delegate.")]
    assert len(delegates) == (len(plan.delegates) if kind == "xnnpack" else 0)
    for n in delegates:
        assert n.metadata["backend"] == "XnnpackBackend" and int(n.metadata["payload bytes"]) > 0
        assert n.metadata["delegated ops"]  # read from the XNNPACK payload (core/pte/xnnpack.py)
    if model == "mobilenet_v3_small" and kind == "xnnpack":  # the CNN's convolutions went to XNNPACK
        ops = archive.executorch.method(program.name).delegates[0].ops  # type: ignore[union-attr]
        assert any(op.startswith("Conv2d x") for op in ops) and any(op.startswith("DepthwiseConv2d") for op in ops)
    for name in program.graph.inputs + program.graph.outputs:
        v = program.graph.values[name or ""]
        assert v.kind != "tensor" or (v.meta is not None and v.meta.dtype == "float32")
    memory = archive.executorch.method(program.name).memory  # type: ignore[union-attr]
    assert memory.tensors
    for t in memory.tensors:
        assert t.offset + t.nbytes <= memory.buffers[t.buffer - 1], t
    assert 0 < max(memory.live_bytes()) <= memory.peak
    for n in kernels[:20]:
        assert any(k.endswith("dim order") for k in n.metadata), n.metadata


def test_reading_a_pte_imports_neither_torch_nor_executorch(pte_file: Callable[[str, str], Path]) -> None:
    """The window reads a `.pte` as it reads a `.pt2`: no torch, no executorch, no Qt in the reading process."""
    script = ("import json, sys\n"
              "from pt2_viewer.core.formats.registry import read\n"
              "from pt2_viewer.core.pt2.info import archive_info, summary_text\n"
              "from pt2_viewer.core.graph.document import DocumentModel\n"
              "a = read(sys.argv[1]); json.dumps(archive_info(a)); summary_text(a)\n"
              "DocumentModel(a, a.programs[0])\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('torch', 'executorch', 'PySide6'))))\n")
    done = subprocess.run([sys.executable, "-c", script, str(pte_file("nn_transformer", "xnnpack"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
