"""pt2_viewer.core.export.failures: classifying real torch 2.13 export failures, in strict and non-strict mode, and
export's fixes.

The models below fail in this file, so this file is the "script" whose lines a failure must point at.
"""
from __future__ import annotations

import pytest

from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    DATA_DEPENDENT_GUARD,
    GRAPH_BREAK,
    OTHER,
    SPECIALIZED_VALUE,
    ChainLink,
    SpecChange,
    apply_changes,
    classify,
    failure_from_json,
    parse_constraint_fixes,
    parse_fix_line,
)

torch = pytest.importorskip("torch")

HERE = __file__


def line_in(path: str, marker: str) -> int:
    """The number of the line in `path` that holds `marker` (in a comment), for asserting reported lines."""
    with open(path, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "line_of(" not in line)


def line_of(marker: str) -> int:
    return line_in(HERE, marker)


class DataBranch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # <data branch>
            return torch.sin(x)
        return torch.cos(x)


class ItemBranch(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        if a // 2 >= 5:  # <item branch>
            return y + 2
        return y * 5


class IntCast(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()
        b = torch.cat([y for _ in range(a)], dim=0)  # <int cast>
        return b + int(a)


class UsesId(torch.nn.Module):
    def forward(self, x):
        x = x + 1
        return x + id(x)  # <builtin id>


class Broadcast(torch.nn.Module):
    def forward(self, x, y):
        w = x + y
        return w + torch.ones(4)


class Linear5(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(5, 3)

    def forward(self, w):
        return self.lin(w)


class WrongArity(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def failure_of(model, args, **kwargs):
    with pytest.raises(Exception) as info:
        torch.export.export(model, args, **kwargs)
    from pt2_viewer.core.export.failures import classify_exception

    return classify_exception(info.value, HERE)


@pytest.mark.parametrize("strict", [True, False])
def test_data_dependent_guard_in_both_modes_points_at_the_branch(strict):
    failure = failure_of(ItemBranch(), (torch.tensor(32), torch.randn(4)), strict=strict)
    assert failure.kind == DATA_DEPENDENT_GUARD
    assert failure.message.startswith("Could not guard on data-dependent expression")
    assert failure.user_line is not None and failure.user_line.file == HERE
    assert failure.user_line.line == line_of("<item branch>")
    assert "torch._check" in failure.hint and "torch.cond" in failure.hint
    # strict wraps it in UserError, non-strict raises GuardOnDataDependentSymNode: the kind is the same
    assert failure.chain[0].endswith("UserError" if strict else "GuardOnDataDependentSymNode")
    assert "Traceback" in failure.traceback


@pytest.mark.parametrize("strict", [True, False])
def test_specialized_value_in_both_modes(strict):
    failure = failure_of(IntCast(), (torch.tensor(3), torch.randn(5)), strict=strict)
    assert failure.kind == SPECIALIZED_VALUE
    assert "Could not extract specialized integer" in failure.message
    assert failure.user_line.line == line_of("<int cast>")
    assert "torch._check" in failure.hint


def test_graph_break_in_strict_mode_names_the_line_and_suggests_non_strict():
    failure = failure_of(DataBranch(), (torch.randn(3),), strict=True)
    assert failure.kind == GRAPH_BREAK
    assert failure.message.splitlines()[0] == "Data-dependent branching"
    assert failure.user_line.line == line_of("<data branch>")
    assert failure.user_line.code.startswith("if x.sum() > 0:")
    assert "strict=False" in failure.hint
    assert any("torch.cond" in h for h in failure.torch_hints)


def test_unsupported_builtin_is_a_graph_break_in_strict_and_exports_non_strict():
    failure = failure_of(UsesId(), (torch.randn(3),), strict=True)
    assert failure.kind == GRAPH_BREAK
    assert failure.user_line.line == line_of("<builtin id>")
    torch.export.export(UsesId(), (torch.randn(3),), strict=False)  # the hint's advice works


def test_same_branch_in_non_strict_mode_is_a_data_dependent_guard():
    failure = failure_of(DataBranch(), (torch.randn(3),), strict=False)
    assert failure.kind == DATA_DEPENDENT_GUARD
    assert failure.user_line.line == line_of("<data branch>")


def test_constraint_violation_fixes_are_parsed_applied_and_then_export_succeeds():
    from pt2_viewer.core.export.dynamic_spec import to_torch

    args = (torch.randn(6, 4), torch.randn(6, 4))
    spec = {"dims": {"dx": {}, "dy": {}, "d1": {}},
            "inputs": {"x": [{"dim": "dx"}, {"dim": "d1"}], "y": [{"dim": "dy"}, {"dim": "d1"}]}}
    failure = failure_of(Broadcast(), args, dynamic_shapes=to_torch(spec, Broadcast(), args))
    assert failure.kind == CONSTRAINT_VIOLATION
    assert failure.message.startswith("Constraints violated")
    assert failure.suggested_fixes_text == ["d1 = 4", "dy = dx"]
    assert SpecChange("make_static", dim="d1", value=4, text="d1 = 4") in failure.fixes
    assert SpecChange("relate", dim="dy", root="dx", text="dy = dx") in failure.fixes
    fixed = apply_changes(spec, failure.fixes)
    assert fixed["inputs"] == {"x": [{"dim": "dx"}, 4], "y": [{"dim": "dx"}, 4]}
    ep = torch.export.export(Broadcast(), args, dynamic_shapes=to_torch(fixed, Broadcast(), args))
    assert len(ep.range_constraints) == 1  # one symbol left: dx


def test_dynamic_dim_that_specializes_becomes_a_make_static_change_for_that_input_dim():
    from pt2_viewer.core.export.dynamic_spec import to_torch

    args = (torch.randn(6, 5),)
    spec = {"inputs": {"w": ["auto", "dynamic"]}}
    failure = failure_of(Linear5(), args, dynamic_shapes=to_torch(spec, Linear5(), args))
    assert failure.kind == CONSTRAINT_VIOLATION
    assert failure.fixes == [SpecChange("make_static", input="w", axis=1, value=5, text=failure.fixes[0].text)]
    fixed = apply_changes(spec, failure.fixes)
    assert fixed["inputs"]["w"] == ["auto", "static"]
    torch.export.export(Linear5(), args, dynamic_shapes=to_torch(fixed, Linear5(), args))


def test_anything_else_is_other_with_the_exception_type_in_the_message():
    failure = failure_of(WrongArity(), (torch.randn(2),))
    assert failure.kind == OTHER
    assert failure.message.startswith("TypeError:")
    assert failure.user_line is not None and failure.user_line.file == HERE  # the export call in failure_of


def test_failure_round_trips_through_json():
    failure = failure_of(ItemBranch(), (torch.tensor(32), torch.randn(4)), strict=False)
    again = failure_from_json(failure.to_json())
    assert again == failure


# --- parsing export's suggested fixes (formats from torch/fx/experimental/symbolic_shapes.py) --------------------

@pytest.mark.parametrize("line, change", [
    ("dx = Dim('dx', min=4, max=256)", SpecChange("set_range", dim="dx", min=4, max=256)),
    ("dh = Dim('dh', max=512)", SpecChange("set_range", dim="dh", max=512)),
    ("dx = Dim('dx', min=3)", SpecChange("set_range", dim="dx", min=3)),
    ("d1 = 4", SpecChange("make_static", dim="d1", value=4)),
    ("dy = dx", SpecChange("relate", dim="dy", root="dx")),
    ("dy = dx + 1", SpecChange("relate", dim="dy", root="dx", add=1)),
    ("dx = 2*_dx", SpecChange("relate", dim="dx", root="_dx", mul=2)),
    ("dz = 4*dx - 2", SpecChange("relate", dim="dz", root="dx", mul=4, add=-2)),
])
def test_parse_fix_line(line, change):
    change.text = line
    assert parse_fix_line(line) == change


def test_fix_block_stops_at_the_paragraph_after_it():
    text = ("Constraints violated (dx)!\nSuggested fixes:\n  _dx = Dim('_dx', max=128)\n  dx = 2*_dx\n\n"
            "The error above occurred when calling torch.export.export.")
    changes, lines = parse_constraint_fixes(text)
    assert lines == ["_dx = Dim('_dx', max=128)", "dx = 2*_dx"]
    spec = {"dims": {"dx": {"min": 4}}, "inputs": {"x": [{"dim": "dx", "add": 1}, "static"]}}
    assert apply_changes(spec, changes) == {"dims": {"_dx": {"max": 128}},
                                            "inputs": {"x": [{"dim": "_dx", "mul": 2, "add": 1}, "static"]}}


def test_apply_changes_leaves_the_given_spec_alone_and_rejects_nonsense():
    spec = {"dims": {"d": {}}, "inputs": {"x": [{"dim": "d"}]}}
    apply_changes(spec, [SpecChange("make_static", dim="d", value=3)])
    assert spec == {"dims": {"d": {}}, "inputs": {"x": [{"dim": "d"}]}}
    with pytest.raises(ValueError, match="cannot apply 'explode'"):
        apply_changes(spec, [SpecChange("explode", dim="d")])


def test_classify_needs_an_exception_and_prefers_the_script_over_library_frames():
    with pytest.raises(ValueError):
        classify([])
    failure = classify([ChainLink("builtins.RuntimeError", "boom")], script_path="/nowhere/s.py")
    assert failure.kind == OTHER and failure.message == "RuntimeError: boom" and failure.user_line is None
