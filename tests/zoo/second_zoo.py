"""The "second zoo" of issue 20: HuggingFace architectures nobody here wrote a program for, as a new user brings
them. Each names its output type in `transformers.modeling_outputs` (the import policy, core/jobs/import_policy.py,
must import it with no flag) and each is a family the first zoo (tests/zoo/hf.py) lacks:

- BART: encoder-decoder with learned positions, a language-model head (`Seq2SeqLMOutput`);
- DistilBERT: a 6-layer distilled encoder with a classification head (`SequenceClassifierOutput`);
- Gemma: decoder with multi-query attention (one key/value head), a wide head dimension, GeGLU and its
  scaled embeddings, RMSNorm with `1 + weight` (`CausalLMOutputWithPast`);
- Qwen2: decoder with grouped-query attention and biased q/k/v projections (`CausalLMOutputWithPast`).

Tiny widths from their `Config` classes, random weights, nothing downloaded. Kept out of tests/zoo/hf.py and
tests/zoo/families.py so that adding them re-exports none of the other programs (the cache hashes each builder's
module).
"""
from __future__ import annotations

from typing import Any

import torch

from tests.zoo.entry import Recipe, ZooEntry
from tests.zoo.torchvision_shim import install as install_torchvision_shim

VOCAB = 1000


def _transformers() -> Any:
    install_torchvision_shim()  # transformers' model modules import torchvision when it is installed
    import transformers

    return transformers


def _ids(batch: int, seq: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq))


def bart() -> Recipe:
    """BART for conditional generation: 2 + 2 layers, an encoder attention mask and decoder inputs."""
    t = _transformers()
    config = t.BartConfig(vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2,
                          encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                          decoder_ffn_dim=128, max_position_embeddings=64, use_cache=False)
    model = t.BartForConditionalGeneration(config).eval()
    return Recipe(model, (), {"input_ids": _ids(1, 16), "attention_mask": torch.ones(1, 16, dtype=torch.long),
                              "decoder_input_ids": _ids(1, 8), "use_cache": False})


def distilbert() -> Recipe:
    """DistilBERT for sequence classification (3 labels): distilbert-base's depth (6 layers), an attention mask."""
    t = _transformers()
    config = t.DistilBertConfig(vocab_size=VOCAB, dim=64, hidden_dim=128, n_layers=6, n_heads=4,
                                max_position_embeddings=64, num_labels=3)
    model = t.DistilBertForSequenceClassification(config).eval()
    return Recipe(model, (), {"input_ids": _ids(2, 16), "attention_mask": torch.ones(2, 16, dtype=torch.long)})


def gemma() -> Recipe:
    """Gemma for causal LM: 2 layers, 4 query heads sharing one key/value head of width 32."""
    t = _transformers()
    config = t.GemmaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=1, head_dim=32, max_position_embeddings=128,
                           use_cache=False)
    return Recipe(t.GemmaForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False})


def qwen2() -> Recipe:
    """Qwen2 for causal LM: 2 layers, 4 query heads over 2 key/value heads, q/k/v projections with biases."""
    t = _transformers()
    config = t.Qwen2Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                           use_cache=False)
    return Recipe(t.Qwen2ForCausalLM(config).eval(), (_ids(1, 16),), {"use_cache": False})


ENTRIES = [
    ZooEntry("bart", "hf-encoder-decoder", bart, "Seq2SeqLMOutput, learned positions"),
    ZooEntry("distilbert", "hf-encoder", distilbert, "SequenceClassifierOutput"),
    ZooEntry("gemma", "hf-decoder", gemma, "multi-query attention, GeGLU"),
    ZooEntry("qwen2", "hf-decoder", qwen2, "GQA, biased q/k/v"),
]
