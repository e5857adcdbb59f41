"""core/graph/readable.py against torch's own `print_readable`, on a real program exported and saved by this torch.

This module also owns the program the panel tests look at (`panels_program` fixture): a Linear + BatchNorm feeding a
`torch.cond`, a `nonzero` (unbacked symbol u0 with runtime asserts), a dynamic batch Dim (s77) and a `topk` (one
archive node, two outputs). It is exported once and cached on disk with torch's `print_readable` text beside it,
keyed by torch's version and this file's hash, so later runs need not import torch at all.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from pt2_viewer.core.graph.readable import readable_code
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.pt2.reader import read_archive
from tests.fixture_root import FIXTURE_ROOT

REPO_ROOT = Path(__file__).resolve().parents[3]
MODEL_LINES = {"lin_bn": "y = self.bn(self.lin(x))", "cond": "z = torch.cond(y.sum() > 0, true_fn, false_fn, (y,))",
               "nonzero": "nz = torch.nonzero(z > 0)", "topk": "values, idx = torch.topk(z, 2)"}


@dataclass(frozen=True)
class PanelsProgram:
    path: Path  # the saved .pt2
    torch_readable: str  # torch's print_readable() of the exported program

    def program(self) -> Program:
        return read_archive(self.path).programs[0]


def export_panels_program(directory: Path) -> None:
    """Export the panels' test model into `directory` as panels.pt2 and panels.readable.txt (torch needed)."""
    import torch
    from torch.export import Dim

    class Panels(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)
            self.bn = torch.nn.BatchNorm1d(3)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            y = self.bn(self.lin(x))

            def true_fn(v: torch.Tensor) -> torch.Tensor:
                return v.sin() * 2

            def false_fn(v: torch.Tensor) -> torch.Tensor:
                return v.cos() + 1

            z = torch.cond(y.sum() > 0, true_fn, false_fn, (y,))
            nz = torch.nonzero(z > 0)
            values, idx = torch.topk(z, 2)
            return values, idx, nz

    ep = torch.export.export(Panels().eval(), (torch.randn(5, 4),),
                             dynamic_shapes={"x": {0: Dim("batch", min=2, max=64)}})
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as tmp:
        # The archive's root folder is named after the file, so save under the final name, then move it.
        torch.export.save(ep, Path(tmp) / "panels.pt2")
        # torch's text for the program as the file holds it (a saved cond's operands are a list, not a tuple)
        loaded = torch.export.load(Path(tmp) / "panels.pt2")
        (Path(tmp) / "panels.readable.txt").write_text(loaded.graph_module.print_readable(print_output=False))
        os.replace(Path(tmp) / "panels.readable.txt", directory / "panels.readable.txt")
        os.replace(Path(tmp) / "panels.pt2", directory / "panels.pt2")


@pytest.fixture(scope="session")
def panels_program() -> PanelsProgram:
    import importlib.metadata

    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    directory = FIXTURE_ROOT / "test-programs" / importlib.metadata.version("torch") / f"panels-{digest}"
    if not (directory / "panels.pt2").exists():
        export_panels_program(directory)
    return PanelsProgram(directory / "panels.pt2", (directory / "panels.readable.txt").read_text())


# --------------------------------------------------------------------------------------------------------------------

def torch_statements(text: str) -> list[str]:
    """torch's print_readable lines without comments, blank lines, `x = None` clean-ups and class/def headers."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", "class ", "def ")):
            continue
        out.append(re.sub(r";  (\w+ = )+None$", "", s))
    return out


def _our_statements(text: str) -> list[str]:
    """Our lines without class headers and `def forward(` ... `):` (whose inputs we list one per line)."""
    out = []
    in_def = False
    for line in text.splitlines():
        s = line.strip()
        if s == "def forward(":
            in_def = True
        elif in_def:
            in_def = s != "):"
        elif s and not s.startswith(("class ", "def ")):
            out.append(s)
    return out


def test_every_statement_is_what_torch_prints(panels_program: PanelsProgram) -> None:
    ours = readable_code(panels_program.program())
    assert _our_statements(ours.text) == torch_statements(panels_program.torch_readable)


def test_class_and_forward_headers_match_torch(panels_program: PanelsProgram) -> None:
    ours = readable_code(panels_program.program()).text.splitlines()
    theirs = [line for line in panels_program.torch_readable.splitlines() if line.strip().startswith("class ")]
    assert [line for line in ours if line.strip().startswith("class ")] == theirs
    torch_forward = next(line for line in panels_program.torch_readable.splitlines()
                         if "def forward(self, p_lin" in line)
    params = re.findall(r'(\w+: "[^"]*")', torch_forward)
    assert params[-1] == 'x: "f32[s77, 4]"'
    # ours lists one input per line, in torch's order
    assert [line.strip().rstrip(",") for line in ours if line.strip().rstrip(",") in params] == params


def test_lines_map_to_nodes_both_ways(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    code = readable_code(program)
    lines = code.text.splitlines()
    assert lines[code.line_of_node["linear"]].strip().startswith('linear: "f32[s77, 3]" = torch.ops.aten.linear')
    assert lines[code.line_of_node["x"]].strip() == 'x: "f32[s77, 4]",'
    assert lines[code.line_of_node["output"]].strip() == "return (getitem_1, getitem_2, nonzero)"
    # topk is one node: its call and both getitem lines select it
    topk = code.line_of_node["topk"]
    assert lines[topk].strip() == "topk = torch.ops.aten.topk.default(getitem, 2)"
    assert [code.node_of_line[i] for i in (topk, topk + 1, topk + 2)] == ["topk"] * 3
    assert lines[topk + 2].strip() == 'getitem_2: "i64[s77, 2]" = topk[1]'
    # every node of the top graph has a line, and that line maps back to it
    for node in program.graph.nodes:
        assert code.node_of_line[code.line_of_node[node.name]] == node.name
    # a line inside the nested true branch belongs to the get_attr node that stands for it in the top graph
    sin_line = next(i for i, line in enumerate(lines) if "torch.ops.aten.sin.default(batch_norm)" in line)
    assert code.node_of_line[sin_line] == "true_graph_0"
    assert not any(lines[i].startswith("class ") for i in code.node_of_line)


def test_a_subgraph_alone_maps_its_own_nodes(panels_program: PanelsProgram) -> None:
    program = panels_program.program()
    false_graph = program.graph.node_by_name["cond"].subgraphs[1]
    code = readable_code(false_graph)
    lines = code.text.splitlines()
    assert lines[0] == "class false_graph_0(torch.nn.Module):"
    assert lines[1] == '    def forward(self, batch_norm: "f32[s77, 3]"):'
    assert code.node_of_line[1] == "batch_norm"
    assert lines[code.line_of_node["add"]].strip() == 'add: "f32[s77, 3]" = torch.ops.aten.add.Tensor(cos, 1)'
    assert lines[code.line_of_node["output"]].strip() == "return (add,)"


def test_statements_match_torch_on_the_shared_test_programs() -> None:
    """Every hand-made program of tests/programs.py (map, nested cond, split, custom op, buffer mutation ...)."""
    programs = pytest.importorskip("tests.programs")
    import torch
    import transformers.modeling_outputs  # noqa: F401  (registers the HF output types hf_tiny_bert's spec names)

    for name in programs.HANDMADE_NAMES:
        try:
            path = programs.program_path(name)
        except programs.ExportFailed:
            continue  # torch cannot export it: tests/core/pt2/test_parity.py reports that
        archive = read_archive(path)
        if len(archive.programs) != 1:
            continue
        theirs = torch.export.load(path).graph_module.print_readable(print_output=False)
        assert _our_statements(readable_code(archive.programs[0]).text) == torch_statements(theirs), name
