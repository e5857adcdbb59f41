"""Node kinds (core/model/node_kinds.py): an op under torch's native or private spelling is in its family, so a
decomposed program colours and labels its norms as the training IR does."""
from __future__ import annotations

from pt2_viewer.core.model.node_kinds import _op_kind, input_kinds, node_kind
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (fixture)


def test_native_and_private_spellings_keep_their_family() -> None:
    assert _op_kind("aten", "layer_norm") == _op_kind("aten", "native_layer_norm") == "norm"
    assert _op_kind("aten", "native_group_norm") == "norm"
    assert _op_kind("aten", "_softmax") == "activation" and _op_kind("aten", "native_dropout") == "activation"
    assert _op_kind("aten", "_to_copy") == "view" and _op_kind("aten", "add") == "elementwise"


def test_a_decomposed_batch_norm_is_a_norm(pt2_path) -> None:  # type: ignore[no-untyped-def]
    program = read_archive(pt2_path("batchnorm_train_decomposed")).program()
    kinds = input_kinds(program)
    bn = [n for n in program.graph.nodes if n.op_name == "_native_batch_norm_legit_functional"]
    assert bn and all(node_kind(n, kinds) == "norm" for n in bn)
