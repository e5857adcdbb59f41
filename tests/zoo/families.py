"""Families whose programs name modules of their own libraries: what the import policy (core/jobs/import_policy.py)
must let through with no flag, because no author can save them "without custom objects".

- Mamba: its output type lives in its model's module (`transformers.models.mamba.modeling_mamba.MambaCausalLMOutput`),
  not in `transformers.modeling_outputs`;
- a DeepSeek-V3-style mixture of experts: multi-head latent attention, shared and routed experts, whose expert matmuls
  are `transformers::grouped_mm_fallback` ops (registered by `transformers.integrations.moe`);
- a CNN quantized with PT2E (XNNPACK's quantizer): `quantized_decomposed::` ops, registered by torch's own
  `torch.ao.quantization.fx._decomposed` only when it is imported;
- torchao's int8 weight-only quantization: the weights are `torchao.quantization.Int8Tensor` tensor subclasses,
  pickled; torch's weights-only unpickler loads them once torchao is imported (it registers them as safe).

Small widths, random weights, nothing downloaded. Kept out of tests/zoo/hf.py so that adding them re-exports none of
the other families (the cache hashes each builder's module).
"""
from __future__ import annotations

from typing import Any

import torch

from tests.zoo.entry import Recipe, ZooEntry
from tests.zoo.torchvision_shim import install as install_torchvision_shim

VOCAB = 1000


def _transformers() -> Any:
    install_torchvision_shim()
    import transformers

    return transformers


def _ids(batch: int, seq: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq))


def mamba() -> Recipe:
    """A state-space model: 4 Mamba blocks (selective scan in plain PyTorch on CPU), output type of its own module."""
    t = _transformers()
    config = t.MambaConfig(vocab_size=VOCAB, hidden_size=64, state_size=8, num_hidden_layers=4, intermediate_size=128,
                           use_cache=False)
    return Recipe(t.MambaForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False})


def deepseek_moe() -> Recipe:
    """DeepSeek-V3's shape at a small width: one dense layer then MoE layers (8 routed experts, 2 per token, grouped
    routing, one shared expert), multi-head latent attention with low-rank q and kv."""
    t = _transformers()
    config = t.DeepseekV3Config(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=3,
        first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=8,
        num_experts_per_tok=2, n_shared_experts=1, n_group=2, topk_group=1, kv_lora_rank=16, q_lora_rank=32,
        qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, use_cache=False)
    return Recipe(t.DeepseekV3ForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False})


class SmallCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        return self.fc(torch.relu(self.conv2(x)).mean((2, 3)))


def pt2e_cnn() -> Recipe:
    """A CNN through PT2E static quantization (XNNPACK's symmetric int8 config), calibrated on one batch: the
    program holds quantize/dequantize pairs in the `quantized_decomposed` namespace."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    x = torch.randn(1, 3, 16, 16)
    graph = torch.export.export(SmallCNN().eval(), (x,)).module()
    prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    prepared(x)
    return Recipe(convert_pt2e(prepared), (x,))


def torchao_int8() -> Recipe:
    """An MLP with torchao's int8 weight-only quantization: weights are `Int8Tensor` subclasses (int8 data, scales)."""
    from torchao.quantization import Int8WeightOnlyConfig, quantize_

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).eval()
    quantize_(model, Int8WeightOnlyConfig())
    return Recipe(model, (torch.randn(2, 32),))


ENTRIES = [
    ZooEntry("mamba", "hf-ssm", mamba, "output type in its model's module"),
    ZooEntry("deepseek_moe", "hf-moe", deepseek_moe, "transformers:: MoE ops, latent attention"),
    ZooEntry("pt2e_cnn", "quantized", pt2e_cnn, "quantized_decomposed:: ops"),
    ZooEntry("torchao_int8", "quantized", torchao_int8, "torchao tensor-subclass weights"),
]
