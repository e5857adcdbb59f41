"""A representative part of the model zoo through every command, with `scripts/zoo.py`'s own checks.

ResNet-18 (unbounded batch), the torchvision ViT (`nn.MultiheadAttention`), a HuggingFace Llama (GQA + RoPE, an
unbounded sequence), T5 (encoder-decoder, modules called several times) and a stacked `nn.LSTM`, as training IR and
decomposed, each through `info --json`, the window's first view, `render`, `run --device cpu` and
`decompose --to core`, every answer held against torch's. The whole zoo is `make zoo`; exports are cached under
`.cache/zoo/` (tests/zoo/cache.py) and built before the tests (`make fixtures`), with torch's answers (what its loader
reads, its outputs on the saved inputs, its core-ATen op counts) stored beside them (tests/torch_reference.py), so
each check runs the command and compares, without loading, running or decomposing the program with torch again.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

from scripts.zoo import CHECKS, COMMANDS, screenshot_problem, svg_problem
from tests.first_view import SIZES, first_view_problems, screenshot
from tests.programs import REPO_ROOT

REPRESENTATIVE = ["resnet18", "resnet18.decomposed", "vit", "llama.decomposed", "t5", "nn_lstm",
                  "nn_lstm.decomposed"]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("zoo")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("program_id", REPRESENTATIVE)
def test_command_agrees_with_torch(program_id: str, command: str, work: Path,
                                   zoo_program: Callable[[str], Path]) -> None:
    outcome = CHECKS[command](zoo_program(program_id), work)
    assert outcome.ok, f"{program_id} {command}: {outcome.message}"


FIRST_VIEWS = ["resnet18", "efficientnet_b0", "mobilenet_v3_small", "vit", "bert", "llama", "llama.decomposed"]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("program_id", FIRST_VIEWS)
def test_first_view_is_readable_at_first_sight(program_id: str, size: tuple[int, int], window,  # type: ignore[no-untyped-def]
                                               tmp_path: Path, zoo_program: Callable[[str], Path]) -> None:
    """CNNs, transformers and an LLM open readable, as the view description `--screenshot` writes says: weights
    inside their ops, the inputs on screen, at least 8 items wholly visible with labels of 9 px or more, none
    smaller."""
    described = screenshot(window, zoo_program(program_id), tmp_path / "shot.png", size)
    model = window.current_tab().graphs()[0].model
    assert first_view_problems(described, model) == [], f"{program_id} at {size}"


def _label(img: QImage, x: int, y: int) -> None:
    """A node as the window draws one: a filled box with a dark label line."""
    for px in range(x, x + 160):
        for py in range(y, y + 30):
            img.setPixelColor(px, py, QColor("#1a1a1a") if y + 12 <= py < y + 18 else QColor("#f8c6a8"))


def test_the_screenshot_check_sees_a_blank_graph_area(tmp_path: Path) -> None:
    """The picture check is not a formality: an empty window-sized picture is blank, and so is one whose only labels
    are the minimap's and the inputs' row at the top; nodes one above another in the graph area are not."""
    img = QImage(1400, 900, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    png = tmp_path / "shot.png"
    img.save(str(png))
    assert "blank" in (screenshot_problem(png) or "")
    _label(img, 20, 120)  # in the minimap's corner
    _label(img, 400, 110)  # the inputs' row
    _label(img, 600, 110)
    img.save(str(png))
    assert "blank" in (screenshot_problem(png) or "")
    for y in (300, 420, 540, 660):
        _label(img, 400, y)
    img.save(str(png))
    assert screenshot_problem(png) is None


def test_the_render_check_wants_the_programs_nodes(tmp_path: Path) -> None:
    svg = tmp_path / "g.svg"
    body = "".join(f'<text x="0" y="{i}">label {i}</text>' for i in range(40))
    svg.write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{body}</svg>')
    assert "names none" in (svg_problem(svg, {"conv2d", "relu"}) or "")
    svg.write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{body}<text>conv2d</text></svg>')
    assert svg_problem(svg, {"conv2d", "relu"}) is None


def test_make_zoo_prints_the_table_for_a_pattern() -> None:
    proc = subprocess.run([sys.executable, "scripts/zoo.py", "-k", "exportdb_scalar*", "--commands", "info,render"],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["program", "family", "export", "s", "info", "render"]
    rows = {line.split()[0]: line.split() for line in lines[2:] if line.startswith("exportdb_")}
    assert sorted(rows) == ["exportdb_scalar_output", "exportdb_scalar_output.decomposed"]
    assert all(row[3] == "ok" and row[5] == "ok" for row in rows.values()), proc.stdout
    assert "2 programs, 0 failures" in proc.stdout
