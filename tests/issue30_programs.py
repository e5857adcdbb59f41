"""Programs for issue 30's on-screen faults, exported by real torch and cached as tests/programs.py caches its own
(one folder per builder version, `cache_dir`)."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.programs import cache_dir, save_programs


class Bad1Fixed(torch.nn.Module):
    """The torch.export tutorial's data-dependent `if` fixed with `cond`: each branch one op."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def true_fn(x: torch.Tensor) -> torch.Tensor:
            return torch.sin(x)

        def false_fn(x: torch.Tensor) -> torch.Tensor:
            return torch.cos(x)

        return torch.cond(x.sum() > 0, true_fn, false_fn, [x])


class BranchWithModule(torch.nn.Module):
    """A branch that calls a submodule: its op stays in the module's group (`lin: Linear`)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda x: self.lin(x).sin(), lambda x: x.cos(), [x])


def strict_cond_branches() -> Path:
    """Both, exported with strict=True: torch names the root `_export_root` inside each branch's module stack."""
    path = cache_dir(strict_cond_branches) / "strict_cond_branches.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        x = torch.randn(3, 3)
        save_programs({"bad1_fixed": torch.export.export(Bad1Fixed(), (x,), strict=True),
                       "branch_with_module": torch.export.export(BranchWithModule(), (x,), strict=True)}, path)
    return path


class Transformer(torch.nn.Module):
    """Weights named as GPT-2's are (`transformer.h.0.attn.c_attn.weight`): long names that differ in the middle."""

    def __init__(self) -> None:
        super().__init__()
        blocks = []
        for _ in range(3):
            block = torch.nn.Module()
            block.attn = torch.nn.Module()
            block.attn.c_attn = torch.nn.Linear(8, 8)
            block.mlp = torch.nn.Module()
            block.mlp.c_fc = torch.nn.Linear(8, 8)
            blocks.append(block)
        self.transformer = torch.nn.Module()
        self.transformer.h = torch.nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.transformer.h:
            x = block.mlp.c_fc(block.attn.c_attn(x)).relu()
        return x


def transformer_names() -> Path:
    path = cache_dir(transformer_names) / "transformer_names.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        save_programs({"model": torch.export.export(Transformer(), (torch.randn(2, 8),))}, path)
    return path


class Stack(torch.nn.Module):
    """An encoder or decoder that embeds with the model's shared table."""

    def __init__(self, embed: torch.nn.Embedding, d: int) -> None:
        super().__init__()
        self.embed_tokens = embed
        self.block = torch.nn.Linear(d, d)

    def forward(self, ids: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
        h = self.embed_tokens(ids)
        if memory is not None:
            h = h + memory.mean(1, keepdim=True)
        return self.block(h).relu()


class T5Like(torch.nn.Module):
    """T5's ties: `shared`, both `embed_tokens` and `lm_head` are one tensor. torch keeps `lm_head.weight` in use
    (by the encoder's and the decoder's embedding and the head) and leaves the other three names with no user."""

    def __init__(self, vocab: int = 32, d: int = 8) -> None:
        super().__init__()
        self.shared = torch.nn.Embedding(vocab, d)
        self.encoder = Stack(self.shared, d)
        self.decoder = Stack(self.shared, d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.shared.weight

    def forward(self, input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.decoder(decoder_input_ids, self.encoder(input_ids)))


class Gpt2Like(torch.nn.Module):
    """GPT-2's tie: `lm_head.weight` is `transformer.wte.weight`."""

    def __init__(self, vocab: int = 32, d: int = 8) -> None:
        super().__init__()
        self.transformer = torch.nn.Module()
        self.transformer.wte = torch.nn.Embedding(vocab, d)
        self.transformer.h = torch.nn.Linear(d, d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.transformer.h(self.transformer.wte(ids)).relu())


def tied_weights_programs() -> Path:
    """Both, in one archive (programs `t5` and `gpt2`)."""
    path = cache_dir(tied_weights_programs) / "tied_weights.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        ids = torch.randint(0, 32, (1, 6))
        save_programs({"t5": torch.export.export(T5Like(), (ids, ids[:, :4])),
                       "gpt2": torch.export.export(Gpt2Like(), (ids,))}, path)
    return path


class DecoderLayer(torch.nn.Module):
    """One Llama-style layer, reduced: norm, attention projections, an MLP, two residual adds."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.input_layernorm = torch.nn.LayerNorm(d)
        self.q_proj = torch.nn.Linear(d, d)
        self.o_proj = torch.nn.Linear(d, d)
        self.post_attention_layernorm = torch.nn.LayerNorm(d)
        self.up_proj = torch.nn.Linear(d, 2 * d)
        self.down_proj = torch.nn.Linear(2 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.o_proj(self.q_proj(self.input_layernorm(x)).softmax(-1))
        return x + self.down_proj(torch.nn.functional.silu(self.up_proj(self.post_attention_layernorm(x))))


class DeepDecoder(torch.nn.Module):
    """80 layers, as Llama-2-70B has: `render --expand all` of it is a very tall picture."""

    def __init__(self, layers: int = 80, d: int = 8) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(DecoderLayer(d) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def deep_decoder() -> Path:
    path = cache_dir(deep_decoder) / "deep_decoder.pt2"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        save_programs({"model": torch.export.export(DeepDecoder(), (torch.randn(1, 4, 8),))}, path)
    return path
