"""Tensor metadata shared by shape (core/pt2/reader.py `_shared_meta`, core/model/program.py `_parse_meta`): every
tensor of equal metadata holds one dict and one parsed `TensorMeta`, and each answers what its own metadata parsed
afresh answers. Real archives exported by torch (tests/programs.py)."""
from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.model import program as program_module
from pt2_viewer.core.model.program import StoredTensor, Value
from pt2_viewer.core.model.tensor_meta import tensor_meta
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import pt2_path  # noqa: F401  (a fixture)


@pytest.mark.parametrize("name", ["attention_blocks", "dynamic_shapes", "cond_map"])
def test_equal_metadata_is_one_object_and_reads_as_its_own(name: str, pt2_path: Callable[[str], Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the parse memo starts empty: one filled by earlier tests in this process can reach its bound and be emptied
    # halfway through this program, and then a shape is parsed twice
    monkeypatch.setattr(program_module, "_PARSED_METAS", {})
    program = read_archive(pt2_path(name)).program()
    holders: list[Value | StoredTensor] = [v for _, g in program.all_graphs() for v in g.values.values()]
    holders += program.weights + program.constants
    metas = [h for h in holders if h.meta_json is not None]
    assert metas
    by_content: dict[str, int] = {}
    for h in metas:
        ident = by_content.setdefault(repr(h.meta_json), id(h.meta_json))
        assert id(h.meta_json) == ident  # equal metadata: the same dict
        fresh = tensor_meta(copy.deepcopy(h.meta_json))
        assert h.meta == fresh and h.meta is not None
        assert h.meta.short == fresh.short and h.meta.shape_text == fresh.shape_text
    assert len(by_content) < len(metas)  # these programs repeat shapes: sharing is what saves the parses
    shared = [h.meta for h in metas if repr(h.meta_json) == repr(metas[0].meta_json)]
    assert all(m is shared[0] for m in shared)  # parsed once


def test_a_new_dict_of_other_content_is_parsed_for_itself() -> None:
    """The parse memo is keyed by the dict object it holds: another dict, even after the first is gone, is parsed."""
    def meta(*sizes: int) -> dict[str, object]:
        return {"dtype": 7, "sizes": [{"as_int": s} for s in sizes], "strides": [], "device": {"type": "cpu"}}

    first = Value("a", "tensor", meta_json=meta(2, 3))
    assert first.type_text == "f32[2, 3]"
    del first
    for n in range(50):
        assert Value("b", "tensor", meta_json=meta(n, 1)).type_text == f"f32[{n}, 1]"
    assert Value("c", "tensor", meta_json={"dtype": 7}).meta is None  # malformed: unknown, as before
