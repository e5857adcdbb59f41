"""Issue 30: T5's first view read backwards (`lm_head` beside the inputs, with edges into the encoder and the
decoder: the tied embedding torch keeps in use is `lm_head.weight`, and it was drawn inside `lm_head`), the tied
`shared.weight` was an orphan box, and GPT-2 said "weight (unused)" for a tied embedding that is used through the
head. On real exported programs (tests/issue30_programs.py), without Qt."""
from __future__ import annotations

import pytest

from pt2_viewer.core.graph.folding import weight_targets
from pt2_viewer.core.graph.index import GraphIndex
from pt2_viewer.core.graph.scene import SceneModel
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.pt2.reader import read_archive
from tests.issue30_programs import tied_weights_programs
from tests.programs import ExportFailed
from tests.zoo.cache import program_by_id, zoo_path


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
    # one tensor, one row of the encoder's embedding, with every name it has there
    assert folding.rows["embedding"] == ["p_encoder_embed_tokens_weight"]
    assert folding.labels["p_encoder_embed_tokens_weight"] == "weight = shared.weight (tied to lm_head.weight)"
    assert folding.drawn_as == {"p_shared_weight": "p_encoder_embed_tokens_weight"}
    scene.expand_all()
    assert scene.visible_item("p_shared_weight") == "p_encoder_embed_tokens_weight"  # Find and reveal reach the row
    # the tensor in use feeds the encoder, the decoder and the head: it belongs to none of them
    assert "p_lm_head_weight" in scene.root.nodes and "p_lm_head_weight" not in scene.groups["lm_head"].nodes
    assert "p_encoder_block_weight" in scene.groups["encoder.block"].nodes  # an untied weight stays in its module


def test_gpt2_s_tied_embedding_is_not_unused() -> None:
    folding = scene_of("gpt2").folding
    (name,) = folding.tied
    assert folding.tied[name] in ("lm_head.weight", "transformer.wte.weight")
    assert not folding.unused and "(unused)" not in folding.labels[name]
    assert folding.labels[name].endswith(f"(tied to {folding.tied[name]})")
    assert not folding.drawn_as  # its one tied name is alone in its box: nothing to merge


def test_the_zoo_s_t5_draws_one_row_per_tensor() -> None:
    """The zoo's Hugging Face T5: its encoder's `embed_tokens` box had two rows for one tensor, `shared.weight (tied
    to lm_head…)` and `weight (tied to lm_head.weight)`."""
    try:
        archive = read_archive(zoo_path(program_by_id("t5")))
    except ExportFailed as e:
        pytest.fail(f"torch exported t5 before; now: {e.reason}")
    program = archive.programs[0]
    scene = SceneModel(program.graph, GraphIndex(program.graph, targets=weight_targets(program)))
    scene.expand_all()
    lay_out_all(scene, layout)
    rows: dict[str, list[str]] = {}
    for box in scene.compose().nodes:
        if box.kind == "weight_row":
            rows.setdefault(box.host, []).append(box.title)
    tied_rows = [titles for titles in rows.values() if any("(tied to" in t for t in titles)]
    assert tied_rows and all(len(titles) == len(set(titles)) for titles in rows.values())
    assert any(t.startswith("weight = shared.weight (tied to ") for titles in tied_rows for t in titles)
    assert all(sum("(tied to" in t for t in titles) == 1 for titles in tied_rows)  # one tensor, one row


def test_details_of_a_tied_weight_name_the_tensor_in_use() -> None:
    from pt2_viewer.core.graph.details import NodeLink, node_details

    program = read_archive(tied_weights_programs()).program("t5")
    details = node_details(program, program.graph, "p_shared_weight")
    rows = {r.label: r for s in details.sections if s.title == "Input" for r in s.rows}
    assert rows["tied to"].text == "p_lm_head_weight" and rows["tied to"].link == NodeLink("p_lm_head_weight")
    assert rows["tied to"].note == "lm_head.weight, the same tensor"
