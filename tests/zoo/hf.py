"""HuggingFace families built from their `Config` classes: small widths, the depths of real checkpoints, random
weights (nothing is downloaded). Encoder-only, decoder-only with grouped-query attention and RoPE, encoder-decoder,
vision, speech, multimodal and mixture of experts.

`transformers` model imports pull in torchvision when it is installed, so the torchvision shim goes first.
"""
from __future__ import annotations

from typing import Any

import torch
from torch.export import Dim

from tests.zoo.entry import Recipe, ZooEntry
from tests.zoo.torchvision_shim import install as install_torchvision_shim

VOCAB = 1000
SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4}


def _transformers() -> Any:
    install_torchvision_shim()
    import transformers

    return transformers


def _ids(batch: int, seq: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq))


def bert() -> Recipe:
    """Encoder-only, BERT-base depth (12 layers), with an attention mask and a dynamic sequence length."""
    t = _transformers()
    model = t.BertModel(t.BertConfig(vocab_size=VOCAB, num_hidden_layers=12, **SMALL))
    seq = Dim("seq", min=2, max=512)  # BERT's position table ends at 512
    return Recipe(model.eval(), (), {"input_ids": _ids(2, 16), "attention_mask": torch.ones(2, 16, dtype=torch.long)},
                  dynamic_shapes={"input_ids": {1: seq}, "attention_mask": {1: seq}})


def llama() -> Recipe:
    """Decoder-only with grouped-query attention (4 query heads, 2 key/value heads) and rotary embeddings, Llama 3.2
    1B's depth (16 layers); the sequence length is unbounded above."""
    t = _transformers()
    config = t.LlamaConfig(vocab_size=VOCAB, num_hidden_layers=16, num_key_value_heads=2, use_cache=False, **SMALL)
    return Recipe(t.LlamaForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False},
                  dynamic_shapes={"input_ids": {1: Dim("seq", min=2)}, "use_cache": None})


def t5() -> Recipe:
    """Encoder-decoder, t5-small's depth (6 + 6 layers), relative position buckets."""
    t = _transformers()
    config = t.T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=6, num_decoder_layers=6,
                        num_heads=4, use_cache=False)
    return Recipe(t.T5Model(config).eval(), (), {"input_ids": _ids(1, 16), "decoder_input_ids": _ids(1, 8),
                                                 "use_cache": False})


def hf_vit() -> Recipe:
    """Vision: ViT-base's depth (12 layers) on 64x64 images, 16x16 patches."""
    t = _transformers()
    config = t.ViTConfig(num_hidden_layers=12, image_size=64, patch_size=16, num_labels=10, **SMALL)
    return Recipe(t.ViTForImageClassification(config).eval(), (torch.randn(1, 3, 64, 64),))


def whisper() -> Recipe:
    """Speech: whisper-tiny's depth (4 + 4 layers) on 64 mel frames (positions shortened to match)."""
    t = _transformers()
    config = t.WhisperConfig(vocab_size=VOCAB, d_model=64, encoder_layers=4, decoder_layers=4,
                             encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                             decoder_ffn_dim=128, num_mel_bins=80, max_source_positions=32, max_target_positions=64,
                             pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                             use_cache=False)
    model = t.WhisperForConditionalGeneration(config).eval()
    return Recipe(model, (), {"input_features": torch.randn(1, 80, 64), "decoder_input_ids": _ids(1, 8),
                              "use_cache": False})


def clip() -> Recipe:
    """Multimodal: CLIP's text and vision towers (12 layers each, as clip-vit-base) and their similarity logits."""
    t = _transformers()
    text = {"vocab_size": VOCAB, "num_hidden_layers": 12, "max_position_embeddings": 32, **SMALL}
    vision = {"num_hidden_layers": 12, "image_size": 64, "patch_size": 16, **SMALL}
    model = t.CLIPModel(t.CLIPConfig(text_config=text, vision_config=vision, projection_dim=32)).eval()
    return Recipe(model, (), {"input_ids": _ids(2, 16), "pixel_values": torch.randn(2, 3, 64, 64),
                              "attention_mask": torch.ones(2, 16, dtype=torch.long)})


def mixtral() -> Recipe:
    """Mixture of experts: 8 experts, 2 per token, with GQA; 8 layers (a quarter of Mixtral's 32, to stay quick)."""
    t = _transformers()
    config = t.MixtralConfig(vocab_size=VOCAB, num_hidden_layers=8, num_key_value_heads=2, num_local_experts=8,
                             num_experts_per_tok=2, use_cache=False, **SMALL)
    return Recipe(t.MixtralForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False})


ENTRIES = [
    ZooEntry("bert", "hf-encoder", bert, "attention mask, dynamic sequence"),
    ZooEntry("llama", "hf-decoder", llama, "GQA + RoPE, unbounded sequence"),
    ZooEntry("t5", "hf-encoder-decoder", t5, "modules called several times"),
    ZooEntry("hf_vit", "hf-vision", hf_vit),
    ZooEntry("whisper", "hf-speech", whisper),
    ZooEntry("clip", "hf-multimodal", clip),
    ZooEntry("mixtral", "hf-moe", mixtral, "mixture of experts"),
]
