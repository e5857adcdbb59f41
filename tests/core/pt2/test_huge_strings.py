"""A hostile archive whose op target is 50 MB (tests/hostile_archives.py `huge_target`, issue 30 §5): labels, the
search index and messages keep a capped copy, the whole target stays readable once (`Node.whole_target`), and
`info` and `render` use memory near the file's size instead of gigabytes."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.model.program import MAX_TARGET_CHARS, NodeOp
from pt2_viewer.core.pt2.reader import read_archive
from tests import hostile_archives as hostile
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)

# Runs a command as its only child and prints that child's peak resident memory (kB on Linux).
PEAK_RSS = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, len(done.stdout))")


@pytest.fixture(scope="module")
def huge(pt2_path: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    folder = tmp_path_factory.mktemp("huge")
    return hostile.huge_target(pt2_path("dynamic_shapes"), folder / "huge_target.pt2",
                               hostile.Payload.make(folder))


def test_the_node_keeps_a_capped_target_and_the_whole_one_once(huge: Path) -> None:
    graph = read_archive(huge).program().graph
    (node,) = [n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION and "pt2v_huge" in n.target]
    assert len(node.target) < MAX_TARGET_CHARS + 40 and "characters)" in node.target
    assert len(node.whole_target) > hostile.HUGE_TARGET_CHARS and node.whole_target.endswith(".default")
    assert len(node.op_name) < MAX_TARGET_CHARS + 40 and node.namespace == "pt2v_huge"
    normal = next(n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION and n.target.startswith("torch.ops.aten."))
    assert normal.full_target is None and normal.whole_target == normal.target


def peak(command: list[str]) -> tuple[int, int, int]:
    """(exit status, peak resident kB, characters on stdout) of `python -m pt2_viewer COMMAND`."""
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "pt2_viewer", *command],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    rc, kb, chars = done.stdout.split()
    return int(rc), int(kb), int(chars)


@pytest.mark.parametrize("command", ["info", "render"])
def test_memory_stays_near_the_files_size(command: str, huge: Path, pt2_path: Callable[[str], Path],  # noqa: F811
                                          tmp_path: Path) -> None:
    def args(path: Path) -> list[str]:
        return [command, str(path)] + (["-o", str(tmp_path / f"{path.stem}.svg")] if command == "render" else [])

    rc, base_kb, _ = peak(args(pt2_path("dynamic_shapes")))
    assert rc == 0
    rc, huge_kb, chars = peak(args(huge))
    assert rc == 0
    file_kb = huge.stat().st_size // 1024
    assert huge_kb - base_kb < 3 * file_kb, (base_kb, huge_kb, file_kb)  # was 2 GB more for render
    assert chars < 100_000  # the summary names the op in a few hundred characters, not 50 MB
    if command == "render":
        assert (tmp_path / "huge_target.svg").stat().st_size < 1_000_000



def test_details_shows_the_capped_target_and_copies_the_whole_one_on_demand(huge: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QGuiApplication

    from pt2_viewer.app.panels.details import DetailsPanel
    from pt2_viewer.core.graph.details import CopyLink, node_details
    from pt2_viewer.core.graph.index import GraphIndex
    from pt2_viewer.core.graph.program_context import ProgramContext

    archive = read_archive(huge)
    program = archive.program()
    graph, index = program.graph, GraphIndex(program.graph)
    (node,) = [n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION and "pt2v_huge" in n.target]
    rows = [r for s in node_details(program, graph, node.name, index).sections for r in s.rows]
    (target,) = [r for r in rows if r.label == "target"]
    assert len(target.text) < MAX_TARGET_CHARS + 40 and isinstance(target.link, CopyLink)
    assert target.link.text == node.whole_target

    panel = DetailsPanel()
    qtbot.addWidget(panel)
    panel.set_context(ProgramContext(program, graph, index, archive))
    panel.show_node(node.name)
    (item,) = [i for top in ("Operator",) for i in panel.row_items(top) if i.text(0) == "target"]
    assert len(item.text(1)) < MAX_TARGET_CHARS + 40
    panel.tree.itemClicked.emit(item, 1)
    assert QGuiApplication.clipboard().text() == node.whole_target
    assert item.text(2).startswith("copied")
