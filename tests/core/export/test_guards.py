"""pt2_viewer.core.export.guards: capturing torch 2.13's TORCH_LOGS="+dynamic" records during real exports, and parsing
them.

The models live in this file, so guards must point at lines of this file.
"""
from __future__ import annotations

import logging
import re

import pytest

from pt2_viewer.core.export.failures import SourceLine
from pt2_viewer.core.export.guards import (
    SYMBOLIC_SHAPES_LOGGER,
    GuardCapture,
    parse_guard,
    parse_symbol,
    resolve_inputs,
)
from pt2_viewer.core.export.job import current_frames
from tests.core.export.test_failures import line_in

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

HERE = __file__


def line_of(marker: str) -> int:
    return line_in(HERE, marker)


class Toy(torch.nn.Module):
    """The tutorial's toy model: guards s2 == s4, s1 == 5 and s3*s4 == s5."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        x0 = x + y  # <broadcast>
        x1 = self.lin(w)  # <linear>
        x2 = x0.flatten()
        x3 = x2 + z  # <flat add>
        return x1, x3


class Checked(torch.nn.Module):
    def forward(self, x, y):
        a = x.item()  # <item>
        torch._check(a >= 2)  # <check>
        torch._check(a <= 60)
        return y[:a]


ARGS = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
AUTO = {"w": (Dim.AUTO, Dim.AUTO), "x": (Dim.AUTO,), "y": (Dim.AUTO, Dim.AUTO), "z": (Dim.AUTO,)}


def capture_export(model, args, strict, **kwargs):
    with GuardCapture(HERE, frames=current_frames) as capture:  # the worker's own frames callback
        torch.export.export(model, args, strict=strict, **kwargs)
    return capture.log


@pytest.mark.parametrize("strict", [True, False])
def test_symbols_name_their_input_dimension_and_guards_their_user_line(strict):
    log = capture_export(Toy(), ARGS, strict, dynamic_shapes=AUTO)
    resolve_inputs(log, ["w", "x", "y", "z"])
    origins = {(s.input, s.axis): s for s in log.symbols}
    assert set(origins) == {("w", 0), ("w", 1), ("x", 0), ("y", 0), ("y", 1), ("z", 0)}
    assert origins[("w", 0)].hint == "6" and origins[("z", 0)].hint == "32"
    assert origins[("w", 0)].range == "[2, ∞]"
    if strict:  # strict export numbers its inputs; resolve_inputs named them
        assert origins[("x", 0)].source.startswith("L['flat_args'][1]")
    else:
        assert origins[("x", 0)].source == "L['x'].size()[0]"

    readable = [g.readable for g in log.guards]
    assert readable[:2] == ["Eq(x.shape[0], y.shape[1])", "Eq(w.shape[1], 5)"]
    # y.shape[0] * (x.shape[0] or the equal y.shape[1]), in whatever order sympy prints it
    assert re.fullmatch(r"Eq\((y\.shape\[0\]\*[xy]\.shape\[\d\]|[xy]\.shape\[\d\]\*y\.shape\[0\]), z\.shape\[0\]\)",
                        readable[2]), readable[2]
    lines = {g.user_line.line for g in log.guards if g.user_line and g.user_line.file == HERE}
    assert line_of("<broadcast>") in lines and line_of("<flat add>") in lines
    broadcast = next(g for g in log.guards if g.user_line and g.user_line.line == line_of("<broadcast>"))
    assert broadcast.user_line.code == "x0 = x + y  # <broadcast>"
    assert all(g.kind == "eval" for g in log.guards)
    assert any("infer_size" in g.framework for g in log.guards)


def test_runtime_asserts_from_torch_check_and_unbacked_symbols():
    log = capture_export(Checked(), (torch.tensor(10), torch.randn(60)), strict=False)
    unbacked = [s for s in log.symbols if s.unbacked]
    assert [s.name for s in unbacked] == ["u0"]
    assert unbacked[0].user_line.line == line_of("<item>")
    # what u0 stands for is the user's own .item() line, not torch's frame (fake_impls.py ... local_scalar_dense)
    assert unbacked[0].source == "a = x.item()  # <item>"
    assert "local_scalar_dense" in unbacked[0].framework
    assert unbacked[0].range == "[-∞, ∞]"
    asserts = [g for g in log.guards if g.kind == "runtime_assert"]
    assert asserts and all(g.symbols == ["u0"] for g in asserts)
    assert asserts[0].user_line.line == line_of("<check>")


def test_capture_hides_what_the_user_did_not_ask_for_and_restores_the_logger(capfd):
    logger = logging.getLogger(SYMBOLIC_SHAPES_LOGGER)
    level_before = logger.level
    log = capture_export(Toy(), ARGS, strict=False, dynamic_shapes=AUTO)
    assert len(log.symbols) == 6
    assert logger.level == level_before and not any(isinstance(f, GuardCapture) for f in logger.filters)
    assert "create_symbol" not in capfd.readouterr().err


def test_capture_still_shows_torch_logs_the_user_asked_for(capfd):
    torch._logging.set_logs(dynamic=logging.INFO)
    try:
        log = capture_export(Toy(), ARGS, strict=False, dynamic_shapes=AUTO)
    finally:
        torch._logging.set_logs()
    assert len(log.symbols) == 6
    assert "create_symbol" in capfd.readouterr().err


def test_parse_lines_as_torch_2_13_prints_them():
    sym = parse_symbol("create_symbol s15 = 6 for L['pair'][1].size()[0] [2, int_oo] "
                       "(_export/non_strict_utils.py:221 in fakify), for more info run with "
                       "TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL=\"s15\"")
    assert (sym.name, sym.hint, sym.input, sym.axis, sym.range) == ("s15", "6", "pair[1]", 0, "[2, ∞]")
    guard = parse_guard("eval Eq(s27, s0) [guard added] x0 = x + y  # mp/d_probe/probe1.py:17 in forward "
                        "(_subclasses/fake_impls.py:1960 in infer_size), for more info run with "
                        "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED=\"Eq(s27, s0)\"")
    assert (guard.kind, guard.expr, guard.symbols, guard.code) == ("eval", "Eq(s27, s0)", ["s27", "s0"], "x0 = x + y")
    assert guard.user_line == SourceLine("mp/d_probe/probe1.py", 17, "forward", "x0 = x + y")
    assert guard.framework == "_subclasses/fake_impls.py:1960 in infer_size"
    bare = parse_guard("runtime_assert Eq(s2, s4) [guard added] (_subclasses/fake_impls.py:845 in infer_size)")
    assert bare.kind == "runtime_assert" and bare.user_line is None and bare.code == ""
    assert parse_guard("runtime_assert True == True [statically known]") is None
    assert parse_symbol("create_symbol s0 duck sized L['x'].size()[0]") is None
