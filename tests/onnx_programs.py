"""Real `.onnx` files for the ONNX reader's tests (core/onnx), exported by torch as users export them:
- with torch's dynamo exporter (`torch.onnx.export(..., dynamo=True)`, which needs onnxscript): a small CNN with
  BatchNorm (the fusion case: its BatchNorms are folded into the convolutions, `FuseBatchNormIntoConv`), an
  `nn.TransformerEncoder`, an MLP with a dynamic batch (`Dim("batch")`), a `torch.cond` (an ONNX `If` with two
  branches) and a Hugging Face Llama decoder with random weights (nothing downloaded);
- with the TorchScript exporter (`dynamo=False`), which writes no metadata: torchvision's ResNet-18 (random weights;
  a residual CNN of the same module names where torchvision does not load).
Each is cached as the test programs are (tests/programs.py `cached_file`, keyed by its builder and the exporter's
versions); `make fixtures` builds them (`prebuild_fixtures`). `source_program` saves the `.pt2` of a dynamo one, the
program its ONNX nodes' metadata names, and `provenance_truth` torch's own map from the exporter's FX nodes to that
`.pt2`'s nodes (`from_node`), which the viewer's links are checked against.
"""
from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.export import Dim

from tests.deploy_programs import _version
from tests.programs import cache_dir, cached_file

CNN = "cnn_batchnorm"
TRANSFORMER = "transformer_encoder"
DYNAMIC = "dynamic_batch"
COND = "cond"
DECODER = "hf_decoder"
RESNET = "resnet_torchscript"
DYNAMO = (CNN, TRANSFORMER, DYNAMIC, COND, DECODER)


class SmallCnn(torch.nn.Module):
    """Two convolutions, each with a BatchNorm and a ReLU, and a classifier: the exporter fuses each BatchNorm."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean((2, 3)))


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.nn.functional.gelu(self.hidden(x)))


class Branchy(torch.nn.Module):
    """`torch.cond` on the input's sum: one If node, a branch each."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return torch.cond(y.sum() > 0, lambda t: t.sin() * 2, lambda t: t.cos(), (y,))


class Block(torch.nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class ResidualCnn(torch.nn.Module):
    """ResNet-18's module names (`conv1`, `layer1.0.conv1` ... `layer4.1.conv2`, `fc`: four layers of two blocks) at a
    small size, where torchvision does not load: the tests ask for the same module groups from either."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.layer1 = torch.nn.Sequential(Block(8), Block(8))
        self.layer2 = torch.nn.Sequential(Block(8), Block(8))
        self.layer3 = torch.nn.Sequential(Block(8), Block(8))
        self.layer4 = torch.nn.Sequential(Block(8), Block(8))
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer4(self.layer3(self.layer2(self.layer1(torch.relu(self.conv1(x))))))
        return self.fc(x.mean((2, 3)))


def _decoder() -> tuple[torch.nn.Module, tuple[Any, ...], dict[str, Any]]:
    from tests.zoo.hf import VOCAB, _transformers

    t = _transformers()
    config = t.LlamaConfig(vocab_size=VOCAB, num_hidden_layers=2, num_key_value_heads=2, use_cache=False,
                           hidden_size=64, intermediate_size=128, num_attention_heads=4)
    return t.LlamaForCausalLM(config).eval(), (torch.randint(0, VOCAB, (1, 12)),), {"input_ids": {1: Dim("seq")}}


def _model(name: str) -> tuple[torch.nn.Module, tuple[Any, ...], Any]:
    """(model, example inputs, dynamic shapes) of one test model, seeded."""
    torch.manual_seed(0)
    if name == CNN:
        return SmallCnn().eval(), (torch.randn(2, 3, 16, 16),), None
    if name == TRANSFORMER:
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        with torch.no_grad():  # as if trained: the clones' weights differ (the exporter keeps equal tensors once)
            for p in encoder.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        return encoder, (torch.randn(2, 5, 32),), None
    if name == DYNAMIC:
        return Mlp().eval(), (torch.randn(4, 16),), ({0: Dim("batch")},)
    if name == COND:
        return Branchy().eval(), (torch.randn(2, 8),), None
    if name == DECODER:
        return _decoder()
    raise KeyError(name)


def _quietly(run: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):  # the exporter prints its progress
        return run()


def _export_dynamo(name: str) -> Callable[[Path], None]:
    def build(tmp: Path) -> None:
        model, args, dynamic = _model(name)
        program = _quietly(lambda: torch.onnx.export(model, args, dynamo=True, dynamic_shapes=dynamic))
        program.save(str(tmp))
    return build


def _export_resnet(tmp: Path) -> None:
    torch.manual_seed(0)
    try:
        from tests.zoo.torchvision_shim import import_torchvision

        model = import_torchvision().models.resnet18(weights=None, num_classes=10).eval()
    except Exception:  # torchvision's wheel does not load on every machine: the same module names, smaller
        model = ResidualCnn().eval()
    _quietly(lambda: torch.onnx.export(model, (torch.randn(1, 3, 64, 64),), str(tmp), dynamo=False))


def _key() -> tuple[str, str]:
    return _version("onnx"), _version("onnxscript")


def onnx_path(name: str) -> Path:
    """The `.onnx` of one test model (DYNAMO's names, or RESNET), exported once and cached; `ExportFailed` when
    torch could not export it."""
    if name == RESNET:
        return cached_file(cache_dir(_export_resnet, *_key()) / f"{name}.onnx", _export_resnet)
    build = _export_dynamo(name)
    return cached_file(cache_dir(_export_dynamo, *_key(), name) / f"{name}.onnx", build)


def source_program(name: str) -> Path:
    """The `.pt2` of one DYNAMO model as `torch.export` gives it (non-strict, as the ONNX exporter exports it): the
    program its ONNX export came from."""
    def build(tmp: Path) -> None:
        model, args, dynamic = _model(name)
        torch.export.save(torch.export.export(model, args, dynamic_shapes=dynamic, strict=False), str(tmp))
    return cached_file(cache_dir(source_program, *_key(), name) / f"{name}.pt2", build)


def _root_name(node: Any) -> str | None:
    """The name of the node of the first exported program that `node` comes from, following its `from_node`
    provenance to the end; None where it has none."""
    sources = node.meta.get("from_node") or []
    source = sources[-1] if sources else None
    while source is not None and source.from_node:
        source = source.from_node[-1]
    return source.name if source is not None else None


def provenance_truth(name: str) -> dict[str, str]:
    """torch's own answer to "which `.pt2` node did this FX node come from", for one DYNAMO model: each call node of
    the program the ONNX exporter decomposed (`ONNXProgram.exported_program`, the names its ONNX nodes' metadata
    carry) -> the node of `source_program(name)` its `from_node` provenance names."""
    def build(tmp: Path) -> None:
        model, args, dynamic = _model(name)
        program = _quietly(lambda: torch.onnx.export(model, args, dynamo=True, dynamic_shapes=dynamic))
        truth = {n.name: _root_name(n) for n in program.exported_program.graph.nodes if n.op == "call_function"}
        tmp.write_text(json.dumps({k: v for k, v in truth.items() if v}, indent=1), encoding="utf-8")
    path = cached_file(cache_dir(provenance_truth, *_key(), name) / f"{name}.provenance.json", build)
    return json.loads(path.read_text(encoding="utf-8"))


LINKED = (CNN, TRANSFORMER, DYNAMIC, DECODER)  # the models whose links to their .pt2 are checked


def prebuild_fixtures() -> None:
    for name in (*DYNAMO, RESNET):
        onnx_path(name)
    for name in LINKED:
        source_program(name)
        provenance_truth(name)
