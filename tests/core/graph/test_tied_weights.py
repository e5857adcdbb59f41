"""Issue 30: T5's first view read backwards (`lm_head` beside the inputs, with edges into the encoder and the
decoder: the tied embedding torch keeps in use is `lm_head.weight`, and it was drawn inside `lm_head`), the tied
`shared.weight` was an orphan box, and GPT-2 said "weight (unused)" for a tied embedding that is used through the
head. On real exported programs (tests/issue30_programs.py), without Qt."""
from __future__ import annotations

from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.pt2.reader import read_archive
from tests.issue30_programs import tied_weights_programs


def scene_of(program_name: str) -> SceneModel:
    program = read_archive(tied_weights_programs()).program(program_name)
    return SceneModel(program.graph, GraphIndex(program.graph, targets=weight_targets(program)))


def test_t5_s_tied_weights_are_rows_and_the_used_one_sits_above_its_users() -> None:
    scene = scene_of("t5")
    folding = scene.folding
    tied = {"p_shared_weight", "p_encoder_embed_tokens_weight", "p_decoder_embed_tokens_weight"}
    assert {n: folding.tied[n] for n in tied} == dict.fromkeys(tied, "lm_head.weight")
    assert not folding.unused  # tied is used, through its twin
    assert folding.host["p_encoder_embed_tokens_weight"] == "embedding"  # its own module's op
    assert folding.host["p_decoder_embed_tokens_weight"] == "embedding_1"
    assert folding.host["p_shared_weight"] == "embedding"  # no op of its own: the first op its twin feeds
    assert folding.labels["p_shared_weight"] == "shared.weight (tied to lm_head.weight)"
    # the tensor in use feeds the encoder, the decoder and the head: it belongs to none of them
    assert "p_lm_head_weight" in scene.root.nodes and "p_lm_head_weight" not in scene.groups["lm_head"].nodes
    assert "p_encoder_block_weight" in scene.groups["encoder.block"].nodes  # an untied weight stays in its module


def test_gpt2_s_tied_embedding_is_not_unused() -> None:
    folding = scene_of("gpt2").folding
    (name,) = folding.tied
    assert folding.tied[name] in ("lm_head.weight", "transformer.wte.weight")
    assert not folding.unused and "(unused)" not in folding.labels[name]
    assert folding.labels[name].endswith(f"(tied to {folding.tied[name]})")


def test_details_of_a_tied_weight_name_the_tensor_in_use() -> None:
    from pt2_viewer.core.graph.details import NodeLink, node_details

    program = read_archive(tied_weights_programs()).program("t5")
    details = node_details(program, program.graph, "p_shared_weight")
    rows = {r.label: r for s in details.sections if s.title == "Input" for r in s.rows}
    assert rows["tied to"].text == "p_lm_head_weight" and rows["tied to"].link == NodeLink("p_lm_head_weight")
    assert rows["tied to"].note == "lm_head.weight, the same tensor"
