"""The graph draws for every real architecture and every archive torch can load, and says so at once when it cannot:
modules called several times (ResNet's `relu`, T5's dropout), nn.MultiheadAttention's never-called `out_proj`,
duplicate node names and a 3,000-deep module stack (crafted from a real archive's JSON), a 32-layer encoder's first
view, and a layout that fails (a real layout process that cannot start)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.app.document.widget import DocumentWidget
from pt2_viewer.app.graph.layout_client import LayoutClient
from pt2_viewer.app.graph.view import READABLE_SCALE
from pt2_viewer.core.graph.document import DocumentModel
from pt2_viewer.core.graph.ids import group_of
from pt2_viewer.core.graph.scene import MAX_OPEN_DEPTH, SceneLayout, SceneModel
from pt2_viewer.core.layout import LayoutEdge, LayoutError, LayoutNode, LayoutRequest, LayoutService
from pt2_viewer.core.layout.driver import lay_out_all
from pt2_viewer.core.layout.engine import layout
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT, with_model_json

DEPTH = 3000
TIMEOUT = 120_000


def lay_out(scene: SceneModel) -> int:
    """Lay out everything the scene needs with Graphviz in this process; the number of rounds it took."""
    return lay_out_all(scene, layout)


def open_doc(path: Path) -> DocumentModel:
    archive = read_archive(path)
    return DocumentModel(archive, archive.programs[0])


def inside(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> bool:
    (x, y, w, h), (fx, fy, fw, fh) = inner, outer
    return fx <= x and fy <= y and x + w <= fx + fw + 0.5 and y + h <= fy + fh + 0.5


def frames(composed: SceneLayout) -> dict[str, tuple[float, float, float, float]]:
    return {g.path: (g.x, g.y, g.w, g.h) for g in composed.groups}


def duplicate_name(doc: dict) -> None:
    nodes = doc["graph_module"]["graph"]["nodes"]
    nodes[4]["name"] = nodes[3]["name"]


def deep_stack(doc: dict) -> None:
    """Node 3 made inside DEPTH nested modules below its own."""
    node = doc["graph_module"]["graph"]["nodes"][3]
    stack = node["metadata"]["nn_module_stack"]
    path = stack.rsplit(";", 1)[-1].split(",")[1]
    extra = [f"L__deep_{i},{path}{'.d' * i},torch.nn.Module" for i in range(1, DEPTH + 1)]
    node["metadata"]["nn_module_stack"] = ";".join([stack, *extra])


# ---- the scene model, with real Graphviz ----


def test_a_module_called_several_times_gets_one_group_per_call(pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_doc(pt2_path("repeated_calls"))
    scene = doc.level.scene
    scene.expand_all()
    lay_out(scene)  # used to raise "node id 'group:block.relu' appears twice"
    groups = doc.level.index.modules.walk()
    assert len({g.path for g in groups}) == len(groups), "group ids are unique"
    relus = [g for g in groups if g.module == "block.relu"]
    assert [g.path for g in relus] == ["block.relu"] + [f"block.relu@{k}" for k in range(1, 6)]
    assert [g.parent.path for g in relus if g.parent] == ["block"] * 3 + ["block@1"] * 3
    assert [g.title for g in relus[:2]] == ["relu: ReLU", "relu: ReLU (call 2)"]
    assert all(len(g.nodes) == 1 for g in relus), "each call holds its own relu"
    composed = scene.compose()
    assert sorted(n.node for n in composed.nodes) == sorted(n.name for n in doc.program.graph.nodes)
    boxes = frames(composed)
    for n in composed.nodes:
        if n.group:
            assert inside((n.x, n.y, n.w, n.h), boxes[n.group])
    # Each call of the one-op module is drawn as its op's box, titled with the module (no frame around one box),
    # and the calls follow the data flow: each relu lies below the one before it in the same block call.
    leaves = {n.module: n for n in composed.nodes if n.module}
    assert all(g.path not in boxes and leaves[g.path].title == g.title for g in relus)
    tops = [leaves[g.path].y for g in relus]
    assert tops[0] < tops[1] < tops[2] and tops[3] < tops[4] < tops[5]


def test_attention_weights_sit_with_the_ops_that_use_them(pt2_path) -> None:  # type: ignore[no-untyped-def]
    doc = open_doc(pt2_path("attention_blocks"))
    scene = doc.level.scene
    scene.expand_all()
    lay_out(scene)
    index = doc.level.index
    groups = {g.path: g for g in index.modules.walk()}
    assert not [n for n in index.modules.nodes if n.startswith("p_")], "no parameter is left at the model's root"
    composed = scene.compose()
    boxes = frames(composed)
    rects = {n.node: (n.x, n.y, n.w, n.h) for n in composed.nodes}
    for i in (0, 1):
        attn = f"blocks.{i}.attn"
        weights = {f"p_blocks_{i}_attn_out_proj_weight", f"p_blocks_{i}_attn_out_proj_bias"}
        assert weights <= set(groups[attn].nodes)
        for w in weights:
            assert inside(rects[w], boxes[attn])
            assert all(inside(rects[u], boxes[attn]) for u in index.users[w]), "its edges stay in the layer"
    # The two blocks form one column, not a staircase.
    (x0, _, w0, _), (x1, _, w1, _) = boxes["blocks.0"], boxes["blocks.1"]
    assert abs((x0 + w0 / 2) - (x1 + w1 / 2)) < 0.25 * min(w0, w1)


def test_duplicate_node_names_are_drawn_once_with_a_note(pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = with_model_json(pt2_path("attention_blocks"), tmp_path / "dup.pt2", duplicate_name)
    doc = open_doc(path)
    scene = doc.level.scene
    scene.expand_all()
    lay_out(scene)  # used to raise "node id ... appears twice"
    names = [n.node for n in scene.compose().nodes]
    assert len(names) == len(set(names)) == len({n.name for n in doc.program.graph.nodes})
    dup = doc.level.index.duplicate_names
    assert len(dup) == 1 and f"'{dup[0]}'" in scene.notes[0] and "re-export" in scene.notes[0]


def test_a_3000_deep_module_stack_lays_out_without_recursion(pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = with_model_json(pt2_path("attention_blocks"), tmp_path / "deep.pt2", deep_stack)
    doc = open_doc(path)  # used to raise RecursionError
    index, scene = doc.level.index, doc.level.scene
    groups = index.modules.walk()
    deepest = max(groups, key=lambda g: g.depth)
    assert deepest.depth > DEPTH and len(deepest.nodes) == 1
    assert index.modules.count() == len(doc.program.graph.nodes)
    deep = deepest.nodes[0]
    lay_out(scene)
    shown = scene.visible_item(deep)  # opens collapsed below MAX_OPEN_DEPTH: a box, not 3,000 nested frames
    shown_group = group_of(shown)
    assert shown_group is not None and scene.groups[shown_group].depth <= MAX_OPEN_DEPTH
    assert shown_group in frames(scene.compose())
    scene.expand_all()
    assert lay_out(scene) <= 4, "a chain of one-item groups is laid out without a Graphviz round per level"
    composed = scene.compose()
    # every group but the root has a frame, except the modules of one op, drawn as that op's box
    assert len(composed.groups) == len(groups) - 1 - len(scene.leaves)
    node = next(n for n in composed.nodes if n.node == deep)
    boxes = frames(composed)
    assert all(inside((node.x, node.y, node.w, node.h), boxes[g.path])
               for g in scene.group_chain[deep][1:] if g.path not in scene.leaves)


@pytest.mark.parametrize("craft", [duplicate_name, deep_stack])
def test_render_draws_crafted_archives(pt2_path, tmp_path: Path, craft) -> None:  # type: ignore[no-untyped-def]
    path = with_model_json(pt2_path("attention_blocks"), tmp_path / "crafted.pt2", craft)
    out = tmp_path / "graph.png"
    proc = subprocess.run([sys.executable, "-m", "pt2_viewer", "render", str(path), "-o", str(out)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and out.stat().st_size > 1000


def test_screenshot_of_a_model_with_repeated_calls(pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "shot.png"
    command = [sys.executable, "-m", "pt2_viewer", str(pt2_path("repeated_calls")), "--screenshot", str(out)]
    proc = subprocess.run(command,
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=150,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and out.stat().st_size > 1000


# ---- the window ----


def test_first_view_of_a_deep_encoder_shows_its_start_readably(qtbot, window, pt2_path) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as blocker:
        window.open_path(str(pt2_path("deep_encoder")))
    doc = blocker.args[0]
    view, scene, index = doc.view, doc.model.level.scene, doc.model.level.index
    assert len(doc.model.program.graph.nodes) > 1000 and scene.expanded != set(scene.groups), "opens collapsed"
    assert view.transform().m11() >= READABLE_SCALE, "labels readable, not specks"
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.contains(view.nodes["src"].sceneBoundingRect()), "the input is on screen"
    first = {scene.visible_item(u) for u in index.users["src"]}
    items = [view.nodes.get(i) or view.groups.get(group_of(i) or "") for i in first]
    assert any(it is not None and shown.intersects(it.sceneBoundingRect()) for it in items), "and what it feeds"


def test_a_layout_that_fails_says_so_in_the_document_at_once(qtbot, pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.main import take_screenshot
    from pt2_viewer.app.main_window import MainWindow

    missing = tmp_path / "no-such-python"
    layouts = LayoutClient(LayoutService(tmp_path / "cache", python=str(missing)))
    w = MainWindow(interactive=False, layouts=layouts)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    out = tmp_path / "shot.png"
    error = take_screenshot(w, str(pt2_path("repeated_calls")), str(out), timeout_ms=TIMEOUT)
    layouts.close()
    assert error is not None and "could not start the layout process" in error and str(missing) in error
    assert "\n" not in error and "not ready within" not in error
    doc = w.current_document()
    assert doc.failure == error and doc.notice.text() == error and doc.notice.isVisibleTo(doc)
    assert not out.exists()


def test_a_script_whose_graph_cannot_be_laid_out_ends_the_screenshot_at_once(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pt2_viewer.app.main import take_screenshot
    from pt2_viewer.app.main_window import MainWindow

    layouts = LayoutClient(LayoutService(tmp_path / "cache", python=str(tmp_path / "no-such-python")))
    w = MainWindow(interactive=False, trust_scripts=True, layouts=layouts)
    qtbot.addWidget(w)
    w.show()
    script = REPO_ROOT / "resources" / "examples" / "convention.py"
    error = take_screenshot(w, str(script), str(tmp_path / "shot.png"), timeout_ms=TIMEOUT)
    layouts.close()
    assert error is not None and "could not start the layout process" in error and "not ready within" not in error
    docs = w.findChildren(DocumentWidget)
    assert len(docs) == 1 and docs[0].failure == error, "the script ran; the document of its program says why"


def test_a_layout_callback_that_raises_is_told_of_its_error(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    client = LayoutClient(LayoutService(tmp_path / "cache"))
    outcomes: list[object] = []

    def callback(outcome: object) -> None:
        outcomes.append(outcome)
        if not isinstance(outcome, LayoutError):
            raise ValueError("the view could not use the layout")

    client.submit([LayoutRequest([LayoutNode("a", 80, 30), LayoutNode("b", 80, 30)], [LayoutEdge("a", "b")])],
                  callback)
    qtbot.waitUntil(lambda: len(outcomes) == 2, timeout=TIMEOUT)
    client.close()
    assert isinstance(outcomes[0], list) and isinstance(outcomes[1], LayoutError)
    assert "ValueError: the view could not use the layout" in str(outcomes[1])
