"""The words the app shows: counts with the right plural, one spelling for symbol ranges wherever they come from
(the archive, torch's range_constraints, its logs), and a fix box with no empty heading."""
from __future__ import annotations

from pt2_viewer.core.export.script_session import fix_lines, program_facts
from pt2_viewer.core.model.expr import range_text, torch_range_text
from pt2_viewer.core.util.words import plural


def test_counts_read_as_words() -> None:
    assert [plural(n, "group") for n in (0, 1, 2)] == ["0 groups", "1 group", "2 groups"]
    assert plural(1, "match") == "1 match" and plural(3, "match") == "3 matches"
    assert plural(12000, "node") == "12,000 nodes"


def test_one_spelling_for_ranges() -> None:
    assert range_text(2, None) == torch_range_text("VR[2, int_oo]") == torch_range_text("[2, int_oo]") == "[2, ∞]"
    assert torch_range_text("[-int_oo, int_oo]") == range_text(None, None) == "[-∞, ∞]"
    assert torch_range_text("VR[0, 64]") == "[0, 64]"
    assert torch_range_text("ValueRanges(lower=0, upper=oo, is_bool=False)") == "[0, ∞]"
    assert torch_range_text("not a range") == "not a range"


def test_program_facts_and_fix_lines() -> None:
    facts = program_facts({"nodes": 1, "ops": 2, "user_inputs": ["x"], "range_constraints": {"s77": "VR[2, int_oo]"}})
    assert facts == ["1 node, 2 op calls", "inputs: x", "symbol ranges: s77 in [2, ∞]"]
    assert fix_lines([], None, None) == []  # nothing suggested: no "export suggests:" heading
    assert fix_lines(["dy = dx"], None, None) == ["export suggests:", "  dy = dx"]
    fixed = {"dims": {}, "inputs": {"x": ["static"]}}
    assert fix_lines([], None, fixed)[0] == "dynamic_shapes becomes:"


def test_a_missing_custom_op_is_advised_once() -> None:
    from pt2_viewer.core.jobs.schemas.run import RunResult
    from pt2_viewer.core.run.readout import failure_of

    failure = failure_of(RunResult.from_json({"ok": False, "error": {
        "kind": "missing_op", "message": "The program uses custom operators that are not registered: pt2v::f.default.",
        "hint": "Name the Python file that defines them with 'Import first' (--import FILE on the command line), or "
                "install the package that provides the 'pt2v' op namespace."}}))
    assert failure is not None
    assert failure.text().count("Import first") == 1 and "--import" not in failure.text()
