"""The first view's promises, read from the view description `--screenshot OUT.png` writes as OUT.json
(app/graph/view_description.py); shared by the window's tests and the zoo's.

Readable at first sight: no parameter, buffer or constant with one user drawn as a node of its own, the program's
inputs on screen, at least MIN_ITEMS items wholly on screen with labels MIN_LABEL_PX high or more, and no label
drawn smaller.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pt2_viewer.app.main import take_screenshot
from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.model.program import NodeOp

MIN_ITEMS = 8
MIN_LABEL_PX = 9.0
SIZES = ((1400, 900), (1280, 800))
KINDS = {"node", "group", "weight_row", "reference"}


def screenshot(window: MainWindow, program: Path, out: Path, size: tuple[int, int]) -> dict[str, Any]:
    """A screenshot of `program` in `window` at `size`, and the view description written beside it."""
    window.resize(*size)
    error = take_screenshot(window, str(program), str(out))
    assert error is None, error
    return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


def first_view_problems(description: dict[str, Any], model: DocumentModel) -> list[str]:
    """What keeps the described first view of `model`'s program from being readable at first sight ([] if none)."""
    items = description["items"]
    problems = []
    bad = sorted({i["kind"] for i in items} - KINDS)
    if bad:
        problems.append(f"unknown kinds {bad}")
    index = model.level.index
    lone = [i["name"] for i in items if i["kind"] == "node" and i["name"] in index.targets
            and len(index.users.get(i["name"], [])) <= 1]
    if lone:
        problems.append(f"single-user weights drawn as nodes: {lone[:5]}")
    graph = model.level.graph
    inputs = {n.name for n in graph.nodes if n.op is NodeOp.PLACEHOLDER and n.name not in index.targets
              and index.users.get(n.name)}
    missing = inputs - {i["name"] for i in items}
    if missing:
        problems.append(f"inputs not on screen: {sorted(missing)}")
    elif inputs and not inputs & {i["name"] for i in items if i["visible"]}:
        problems.append(f"none of the inputs {sorted(inputs)} wholly on screen")
    readable = [i for i in items if i["visible"] and i["label_px"] >= MIN_LABEL_PX]
    if len(readable) < min(MIN_ITEMS, len(graph.nodes)):
        problems.append(f"{len(readable)} items wholly on screen with labels of {MIN_LABEL_PX} px, want {MIN_ITEMS}")
    small = [f"{i['name']} ({i['label_px']} px)" for i in items if 0 < i["label_px"] < MIN_LABEL_PX]
    if small:
        problems.append(f"labels drawn under {MIN_LABEL_PX} px: {small[:5]}")
    return problems
