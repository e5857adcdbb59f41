"""What `info` and the model say of torch 2.13's symbols and of tensors in other layouts (issue 30 §6), on programs
torch exported: `zuf0` (a float read from data) is unbacked, and a sparse output is shown with its layout."""
from __future__ import annotations

import subprocess
import sys

import pytest

from pt2_viewer.core.model.program import Symbol, symbol_kind
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT
from tests.run_programs import run_program_path


@pytest.mark.parametrize(("name", "kind", "unbacked"), [
    ("s0", "size", False), ("s77", "size", False), ("u3", "unbacked int", True), ("zuf0", "unbacked float", True),
    ("zf1", "float", False), ("f2", "unbacked float", True),
])
def test_symbol_kinds_follow_torchs_prefixes(name: str, kind: str, unbacked: bool) -> None:
    assert symbol_kind(name) == (kind, unbacked)
    assert Symbol(name, None, None).unbacked is unbacked


@pytest.mark.parametrize("name", ["x", "s", "u", "zuf", "size0", "s_0"])
def test_names_torch_does_not_give_are_no_kind(name: str) -> None:
    assert symbol_kind(name) is None and not Symbol(name, None, None).unbacked


def test_an_unbacked_float_read_from_data_is_unbacked() -> None:
    program = read_archive(run_program_path("unbacked_float")).program()
    (symbol,) = program.symbols
    assert symbol.name == "zuf0" and symbol.unbacked and symbol.kind == "unbacked float"


def info(path: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pt2_viewer", "info", path], capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_info_says_zuf0_is_unbacked_and_shows_a_sparse_outputs_layout() -> None:
    symbols = info(str(run_program_path("unbacked_float")))
    assert any(line.split()[:1] == ["zuf0"] and "unbacked float" in line for line in symbols.splitlines()), symbols
    sparse = info(str(run_program_path("sparse_output")))
    (line,) = [line for line in sparse.splitlines() if "USER_OUTPUT" in line]
    assert line.endswith("f32[5, 5] sparse_coo"), line
    (line,) = [line for line in sparse.splitlines() if "USER_INPUT" in line]
    assert line.endswith("f32[5, 5]"), line  # strided: as torch prints it
