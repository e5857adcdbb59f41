"""Build the bundled example program `resources/examples/example.pt2` (what `make run` opens for a new user).

A small two-layer transformer with a dynamic batch and sequence length, a data-dependent `torch.cond`, and a
multi-output op, exported with torch.export and saved with torch.export.save. Run it again after a torch upgrade:
`.venv/bin/python scripts/make_example.py`.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch.export import Dim


class Attention(torch.nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        y = att.softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(torch.nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(torch.nn.Module):
    def __init__(self, vocab: int = 64, d: int = 32, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        logits = self.head(x)
        # Data-dependent control flow, captured as a torch.cond with two subgraphs.
        logits = torch.cond(logits.mean() > 0, lambda z: z * 0.5, lambda z: z - 1.0, (logits,))
        values, indices = logits.topk(3, dim=-1)
        return values, indices


def main(out: str = "resources/examples/example.pt2") -> None:
    torch.manual_seed(0)
    model = TinyTransformer().eval()
    tokens = torch.randint(0, 64, (2, 8))
    batch, seq = Dim("batch", min=1, max=64), Dim("seq", min=2, max=512)
    ep = torch.export.export(model, (tokens,), dynamic_shapes={"tokens": {0: batch, 1: seq}})
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:  # same name inside: the archive root is the stem
        staged = Path(tmp) / target.name
        torch.export.save(ep, str(staged))
        staged.replace(target)
    print(f"wrote {out}: {len(ep.graph.nodes)} FX nodes")


if __name__ == "__main__":
    main(*sys.argv[1:])
