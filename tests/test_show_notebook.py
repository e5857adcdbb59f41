"""`pt2_viewer.show(ep)` in a real Jupyter kernel (nbclient runs a notebook): the cell's output is the report page,
inline, and the returned object is still the saved `.pt2`'s path; `show(ep_a, against=ep_b)` shows their diff."""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    """
import torch, pt2_viewer
class Block(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = act
    def forward(self, x):
        return self.act(self.fc(x))
x = torch.randn(2, 4)
ep_a = torch.export.export(Block(torch.nn.ReLU()), (x,))
ep_b = torch.export.export(Block(torch.nn.GELU()), (x,))
""",
    "shown = pt2_viewer.show(ep_a, name='block')\nshown",
    "print(type(shown).__mro__[1].__name__, shown.name, shown.exists(), shown.suffix)",
    "pt2_viewer.show(ep_a, name='pair', against=ep_b)",
    "import sys; print(sys.executable)",
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict]]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder = tmp_path_factory.mktemp("notebook")
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute()
    return [cell["outputs"] for cell in nb.cells]


def _page(cell_outputs: list[dict]) -> str:
    frame = next(o["data"]["text/html"] for o in cell_outputs if "text/html" in o.get("data", {}))
    match = re.search(r'srcdoc="(.*?)"', frame, re.S)
    assert match, frame[:300]
    assert "sandbox='allow-scripts'" in frame
    return html.unescape(match.group(1))


def test_show_displays_the_report_inline(outputs: list[list[dict]]) -> None:
    page = _page(outputs[1])
    assert page.startswith("<!DOCTYPE html>") and "block.pt2 - PT2 Viewer report" in page
    assert '"name":"model"' in page and "aten.relu" in page  # the program's graph data, folding script and all
    assert "function toggle(gi)" in page


def test_show_still_gives_the_saved_path(outputs: list[list[dict]]) -> None:
    text = "".join(o.get("text", "") for o in outputs[2])
    assert text.split() == [type(Path()).__name__, "block.pt2", "True", ".pt2"]


def test_show_against_another_program_shows_the_diff(outputs: list[list[dict]]) -> None:
    page = _page(outputs[3])
    assert "pair.pt2 → pair.against.pt2" in page
    assert "0 added, 0 removed, 1 changed" in page and "aten.relu.default -&gt; aten.gelu.default" in page


def test_the_kernel_is_a_real_ipykernel_of_this_python(outputs: list[list[dict]]) -> None:
    text = "".join(o.get("text", "") for o in outputs[4]).strip()
    assert Path(text).resolve() == Path(sys.executable).resolve()
