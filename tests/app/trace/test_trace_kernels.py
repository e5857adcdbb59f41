"""Inductor's code in the trace view with its kernels linked to the nodes they compute, on a trace real torch wrote
with provenance on, as `pt2-viewer trace SCRIPT.py` runs a script (tests/trace_provenance_programs.py: a tiny MLP
compiled for inference, a small CNN trained one step). A kernel clicked in the code lists the nodes torch's
provenance gives it (core/trace/provenance.py's own answer), each with its op; opening them selects them in the graph
view; a node's Show Kernel comes back to the kernel; a compiled graph's Details say the torch that compiled it.
Offscreen; every wait is on a signal; screenshots go to PT2V_SCREENSHOTS when it is set."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from PySide6.QtGui import QAction

from pt2_viewer.app.main_window import MainWindow
from pt2_viewer.app.qt import top_level_items
from pt2_viewer.app.trace.graph_tab import CompiledGraphTab
from pt2_viewer.app.trace.tab import NO_LINKS, TraceTab
from pt2_viewer.core.graph.properties import program_properties
from pt2_viewer.core.trace.model import Compile
from pt2_viewer.core.trace.provenance import NODE_MAPPINGS, kernel_provenance
from tests.app.trace.test_trace_window import TIMEOUT, open_trace
from tests.trace_provenance_programs import provenance_trace

MLP_KERNEL = "cpp_fused_mul_relu_0"  # TinyMLP's relu(fc1(x)) * 2, fused


def show_code(tab: TraceTab, compile_: Compile, title: str) -> None:
    row = tab.tree.compile_item(compile_)
    assert row is not None
    rows = {row.child(i).text(0): row.child(i) for i in range(row.childCount())}
    tab.tree.setCurrentItem(rows[title])


def line_of(tab: TraceTab, starts: str) -> int:
    """The 1-based line of the code shown that starts (after its indent) with `starts`."""
    lines = tab.code.editor.toPlainText().splitlines()
    return next(i for i, text in enumerate(lines, start=1) if text.lstrip().startswith(starts))


def open_kernel_nodes(qtbot, window: MainWindow, tab: TraceTab, graph: str) -> CompiledGraphTab:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.document_ready, timeout=TIMEOUT) as shown:
        tab.kernels.buttons[graph].click()
    doc = shown.args[0]
    assert isinstance(doc, CompiledGraphTab) and window.current_tab() is doc
    return doc


def test_a_kernel_clicked_in_inductor_code_lists_its_nodes_and_opens_them_selected(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, provenance_trace())
    mlp = tab.trace.compiles[0]
    show_code(tab, mlp, "Inductor output code")
    assert "3 kernel calls linked to their nodes" in tab.code.title.text()
    assert tab.kernels.isVisibleTo(tab)
    # the table is provenance.py's own answer, call by call, in the order the wrapper runs them
    answer = kernel_provenance(tab.trace)[0]
    assert answer.compile_id == mlp.id
    rows = [(r.text(0), r.text(1), r.text(3), r.text(4)) for r in top_level_items(tab.kernels.table)]
    assert rows == [(k.kernel, str(k.handle), ", ".join(k.post_grad), ", ".join(k.pre_grad)) for k in answer.kernels]
    assert [r[0] for r in rows] == ["extern_kernels.addmm", MLP_KERNEL, "extern_kernels.addmm"]

    tab.code.go_to_line(line_of(tab, f"{MLP_KERNEL}("))  # the cursor on the fused kernel's call
    kernel = tab.kernels.kernel
    assert kernel is not None and kernel.kernel == MLP_KERNEL and kernel.handles == (2,)
    assert set(kernel.post_grad) == {"mul", "relu"} and set(kernel.pre_grad) == {"mul", "relu"}
    said = tab.kernels.picked.text()
    assert "mul (aten.mul.Tensor)" in said and "relu (aten.relu.default)" in said, said
    assert tab.kernels.table.currentItem().text(1) == "2"  # its row, picked with it
    if folder := os.environ.get("PT2V_SCREENSHOTS"):
        label = tab.kernels.picked
        qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()), timeout=TIMEOUT)  # relaid
        window.grab().save(str(Path(folder) / "trace_kernels.png"))
    tab.code.go_to_line(line_of(tab, f"{MLP_KERNEL} = async_compile") + 5)  # inside its C++ source: the same kernel
    assert tab.kernels.kernel is not None and tab.kernels.kernel.post_grad == kernel.post_grad

    doc = open_kernel_nodes(qtbot, window, tab, "post_grad")
    assert doc.objectName() == "[0/0] Inductor post-grad graph"
    assert sorted(doc.model.marked) == ["mul", "relu"] and doc.model.selection in {"mul", "relu"}
    if folder := os.environ.get("PT2V_SCREENSHOTS"):
        qtbot.waitUntil(lambda: doc.view.painted > 0, timeout=TIMEOUT)
        window.grab().save(str(Path(folder) / "trace_kernel_nodes.png"))
    targets = {n.name: n.target for n in doc.model.program.graph.nodes}
    assert (targets["mul"], targets["relu"]) == ("torch.ops.aten.mul.Tensor", "torch.ops.aten.relu.default")

    window.tabs.setCurrentWidget(tab)  # the first addmm: Dynamo's linear, opened in Dynamo's graph
    tab.kernels.table.setCurrentItem(tab.kernels.table.topLevelItem(0))
    assert tab.code.editor.textCursor().blockNumber() + 1 == line_of(tab, "extern_kernels.addmm(")
    dynamo = open_kernel_nodes(qtbot, window, tab, "dynamo")
    assert dynamo.model.marked == ["linear"] and dynamo.model.selection == "linear"
    assert {n.name: n.target for n in dynamo.model.program.graph.nodes}["linear"] == "torch._C._nn.linear"
    rows = {r.label: r.text for s in program_properties(dynamo.model.archive, dynamo.model.program).sections
            for r in s.rows}
    assert rows["torch"] == tab.trace.compiles[0].metrics["pytorch_version"] and "schema" not in rows


def test_show_kernel_from_a_compiled_graphs_node_goes_to_its_kernel(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, provenance_trace())
    show_code(tab, tab.trace.compiles[0], "Inductor output code")
    tab.code.go_to_line(line_of(tab, f"{MLP_KERNEL}("))
    doc = open_kernel_nodes(qtbot, window, tab, "post_grad")
    assert "addmm" in doc.kernel_nodes and "relu" in doc.kernel_nodes
    menu = doc.item_menu("addmm_1")
    show = next(a for a in menu.actions() if isinstance(a, QAction) and a.text() == "Show Kernel")
    show.trigger()
    assert window.current_tab() is tab
    assert tab.kernels.kernel is not None and tab.kernels.kernel.kernel == "extern_kernels.addmm"
    assert tab.kernels.kernel.post_grad == ("addmm_1",)
    lines = tab.code.editor.toPlainText().splitlines()
    assert lines[tab.code.editor.textCursor().blockNumber()].lstrip().startswith("extern_kernels.addmm(")
    placeholder = next(n.name for n in doc.model.program.graph.nodes if n.op.value == "placeholder")
    assert not any(a.text() == "Show Kernel" for a in doc.item_menu(placeholder).actions())


def test_a_training_steps_forward_code_is_linked_and_its_backward_says_it_has_none(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    tab = open_trace(qtbot, window, provenance_trace())
    cnn = tab.trace.compiles[1]
    show_code(tab, cnn, "Inductor output code (forward)")
    kernels = [r.text(0) for r in top_level_items(tab.kernels.table)]
    assert "extern_kernels.convolution" in kernels and "extern_kernels.addmm" in kernels
    tab.code.go_to_line(line_of(tab, "buf2 = extern_kernels.convolution("))
    assert tab.kernels.kernel is not None and tab.kernels.kernel.post_grad == ("convolution",)
    assert tab.kernels.kernel.pre_grad_ops == {"conv2d": "torch.conv2d"}
    show_code(tab, cnn, "Inductor output code (backward)")  # torch maps none of a backward's kernels
    assert NO_LINKS in tab.code.title.text() and not tab.kernels.isVisibleTo(tab)


def with_damaged_mapping(trace: Path, folder: Path, payload: bytes) -> Path:
    """A copy of `trace` whose first node-mappings artifact (the MLP's) holds `payload`, its MD5 right: only the
    mapping is wrong."""
    folder.mkdir()
    for log in trace.glob("*.log"):
        lines, out, done = log.read_bytes().split(b"\n"), [], False
        i = 0
        while i < len(lines):
            prefix, _, record = lines[i].partition(b"] ")
            if not done and NODE_MAPPINGS.encode() in record and b"has_payload" in record:
                fields = json.loads(record)
                fields["has_payload"] = hashlib.md5(payload).hexdigest()
                out += [prefix + b"] " + json.dumps(fields).encode(), b"\t" + payload]
                i += 1
                while i < len(lines) and lines[i].startswith(b"\t"):
                    i += 1
                done = True
                continue
            out.append(lines[i])
            i += 1
        (folder / log.name).write_bytes(b"\n".join(out))
    return folder


def test_a_damaged_mapping_is_one_line_over_the_code_still_shown(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    damaged = with_damaged_mapping(provenance_trace(), tmp_path / "trace", b'{"cppCodeToPost": {')
    tab = open_trace(qtbot, window, damaged)
    show_code(tab, tab.trace.compiles[0], "Inductor output code")
    title = tab.code.title.text()
    assert f"the {NODE_MAPPINGS} artifact is not valid JSON" in title and "\n" not in title, title
    assert "def call(self, args):" in tab.code.editor.toPlainText() and not tab.kernels.isVisibleTo(tab)
    show_code(tab, tab.trace.compiles[1], "Inductor output code (forward)")  # the CNN's mapping is whole: linked
    assert tab.kernels.isVisibleTo(tab) and tab.kernels.table.topLevelItemCount() == 4
