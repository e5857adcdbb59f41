"""`pt2-viewer lower`: every call_function node of the source is delegated or named with the partitioner's reason,
checked against what ExecuTorch itself put in its delegates (the ETRecord's edge program: the nodes inside each
lowered module, traced back through torch's provenance), on the zoo's transformer and a PT2E int8 CNN."""
from __future__ import annotations

import json
import operator
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.deploy_programs import executorch_delegation, lowered_or_skip
from tests.programs import ExportFailed

pytest.importorskip("executorch", reason="executorch lowers the programs (requirements-dev.txt)")


def cli_json(*args: str) -> dict[str, Any]:
    """`pt2-viewer ARGS --json -q` through the worker, as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "pt2_viewer", *args, "--json", "-q"], capture_output=True, text=True,
                          timeout=900)
    assert done.stdout, done.stderr
    return dict(json.loads(done.stdout))


def _source_calls(path: Path) -> list[str]:
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (the int8 program's quantized_decomposed ops)

    ep = torch.export.load(str(path))
    return [n.name for n in ep.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]


@pytest.mark.parametrize("model", ["nn_transformer", "int8_cnn"])
def test_every_op_is_delegated_or_has_the_partitioners_reason(model: str) -> None:
    low = lowered_or_skip(model, "xnnpack")
    result = low.result
    calls = _source_calls(low.source)
    left = {r["node"]: r for r in result["not_delegated"]}
    assert sorted(result["delegated"] + list(left)) == sorted(calls)  # each source op once, nothing invented
    assert result["delegated"], "XNNPACK takes some of these ops"
    inside, outside = executorch_delegation(low)  # ExecuTorch's own answer, stored beside the ETRecord
    assert set(result["delegated"]) <= inside - outside  # what we call delegated is wholly in ExecuTorch's delegates
    for node, row in left.items():
        assert row["reason"] and row["target"]
        if node in inside or node in outside:
            assert node in outside  # not delegated: ExecuTorch kept an op of it outside every delegate
    refused = {c["node"] for c in result["checks"] if c["phase"] == "partition" and not c["verdict"]}
    for row in left.values():  # a config's refusal is quoted from a check that returned False
        if "refused it" in row["reason"]:
            assert refused, row
    assert low.pte.read_bytes()[4:8] == b"ET12" and low.etrecord.stat().st_size > 0


def test_the_command_line_writes_the_pte_and_etrecord_and_prints_exactly_the_issue_json(tmp_path: Path) -> None:
    from tests.zoo.pipeline import small_pt2

    try:
        source = small_pt2()
    except ExportFailed as e:
        pytest.skip(str(e))
    out = tmp_path / "user" / "small.pte"
    out.parent.mkdir()
    result = cli_json("lower", str(source), "--to", "portable", "-o", str(out))
    assert list(result) == ["pte", "etrecord", "backend", "delegated", "not_delegated"]
    assert result["backend"] == "portable" and result["delegated"] == []
    assert {r["node"] for r in result["not_delegated"]} == set(_source_calls(source))
    assert all("portable kernels" in r["reason"] for r in result["not_delegated"])
    assert sorted(p.name for p in out.parent.iterdir()) == ["small.etrecord", "small.pte"]  # no job files here
    json.dumps(result)
