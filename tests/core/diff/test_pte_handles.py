"""A program against its `.pte` through the ETRecord's debug handles (core/diff/handles.py), on the zoo's CNN lowered
by the lower job: the torch-free reading of the ETRecord gives the lower job's own `source_to_pte` (ExecuTorch's
Inspector), the matcher pairs by it, the core ATen decomposition reaches the `.pte` through `from_node`, and
`pt2-viewer diff A.pt2 B.pte --etrecord B.etrecord` keeps its JSON while matching through the handles."""
from __future__ import annotations

import json

import pytest

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.diff.handles import DEBUG_HANDLE, etrecord_source_to_pte, pte_provenance
from pt2_viewer.core.diff.matcher import PROVENANCE
from pt2_viewer.core.diff.program_diff import diff_programs
from pt2_viewer.core.formats.registry import read
from tests.chain_programs import Chain, cnn_chain


@pytest.fixture(scope="module")
def chain() -> Chain:
    return cnn_chain()


def test_the_etrecord_read_without_torch_gives_the_lower_jobs_map(chain: Chain) -> None:
    pte = read(chain.lowered.pte).program()
    mine = etrecord_source_to_pte(chain.lowered.etrecord, pte)
    theirs = chain.lowered.result["source_to_pte"]
    assert mine and mine == {k: v for k, v in theirs.items() if v}


def test_the_source_pairs_with_the_pte_by_debug_handle(chain: Chain) -> None:
    source = read(chain.source).program()
    pte = read(chain.lowered.pte).program()
    to_pte = chain.lowered.result["source_to_pte"]
    mapping = pte_provenance(source, pte, to_pte)
    assert mapping.links and {k.method for k in mapping.links} == {DEBUG_HANDLE}
    diff = diff_programs(source, pte, mapping)
    structural = diff_programs(source, pte)
    by_handle = [a for a, how in diff.matching.method.items() if how == PROVENANCE]
    assert len(by_handle) == len([s for s, nodes in to_pte.items() if nodes])  # every lowered op has its pair
    assert len(diff.matching.a_to_b) > 10 * len(structural.matching.a_to_b)  # names and modules alone pair few
    for a in by_handle:
        assert diff.matching.a_to_b[a] in to_pte[a]
    conv = diff.matching.a_to_b["conv2d"]
    assert pte.graph.node_by_name[conv].target == "torch.ops.aten.convolution.out"


def test_the_core_aten_decomposition_reaches_the_pte_through_from_node(chain: Chain) -> None:
    core = read(chain.core).program()
    pte = read(chain.lowered.pte).program()
    mapping = pte_provenance(core, pte, chain.lowered.result["source_to_pte"])
    diff = diff_programs(core, pte, mapping)
    paired = {a: b for a, b in diff.matching.a_to_b.items() if diff.matching.method[a] == PROVENANCE}
    assert paired.get("convolution") == "convolution_0"  # core's `convolution` came from the source's `conv2d`
    assert len(paired) >= 100
    # linear became permute + addmm, lowered to permute_copy + addmm: each pairs with its own op's variant
    targets = {n.name: n.target for n in pte.graph.nodes}
    assert targets[paired["permute"]].endswith("permute_copy.out") and targets[paired["addmm"]].endswith("addmm.out")
    # the .pte's constants pair with the parameters the paired ops read (names and kinds of their own)
    weight = diff.matching.a_to_b["p_classifier_0_weight"]
    assert weight.startswith("const_") and weight in {p for n in pte.graph.nodes if n.name == paired["permute"]
                                                      for p in n.input_refs()}


def test_the_diff_command_matches_through_the_etrecord(chain: Chain, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, rec = str(chain.source), str(chain.lowered.pte), str(chain.lowered.etrecord)
    assert cli_main(["diff", a, b, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert cli_main(["diff", a, b, "--json", "--etrecord", rec]) == 0
    linked = json.loads(capsys.readouterr().out)
    assert set(linked) == set(plain)  # the documented format, nothing renamed or added
    pairs = {(n["a"], n["b"]) for n in linked["nodes"] if n["a"] and n["b"]}
    assert ("conv2d", "convolution_0") in pairs
    assert linked["summary"]["removed"] < plain["summary"]["removed"]
    assert cli_main(["diff", a, b, "--etrecord", a]) == 2  # not an ETRecord: one line naming the file
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and a in err
