"""A document's Run and Numerics tabs: built when first shown or asked for (app/document/lazy_tabs.py), and then
connected to the graph's tools.

Their modules (the job driver, the worker client, the run and numerics schemas) are imported here, when a tab is
built, not when a program opens: `tests/app/test_lazy_imports.py` checks that a first view imports none of them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTabWidget, QWidget

from pt2_viewer.app.document.lazy_tabs import LazyTabs
from pt2_viewer.app.document.tools import GraphTools
from pt2_viewer.app.jobs import holds
from pt2_viewer.core.formats.registry import ONNX, PTE, Opens, recognise
from pt2_viewer.core.model.program import Program

if TYPE_CHECKING:
    from pt2_viewer.app.numerics.panel import NumericsPanel
    from pt2_viewer.app.run.panel import RunPanel
    from pt2_viewer.core.run.readout import CudaStatus

RUN, NUMERICS = "Run", "Numerics"
NOT_FOR_ONNX = ("this viewer runs torch programs (.pt2) and ExecuTorch programs (.pte), not ONNX models. Open the "
                ".pt2 it was exported from to run it, or to check this .onnx's numerics (choose it as its Lowered "
                "file there); run the .onnx itself with onnxruntime.")
NOT_FOR_TRACE = ("this graph was read from a torch.compile trace, which holds its text, not a program torch can "
                 "load. Export the model with torch.export to run it or check its numerics here.")
NOT_FOR_PTE = ("it compares a torch program (.pt2) with what it became. Open the source .pt2 and choose this .pte as "
               "its Lowered file there.")


class JobTabs(LazyTabs):
    """The Run and Numerics tabs of one program, as placeholders until first shown; for an ONNX model (the format
    registry says which), disabled tabs that say why, and for a `.pte` a disabled Numerics tab. `reveal(node)` shows
    a node the panels name; `compare(decomposition, node)` is Numerics' "Compare at first divergence"."""

    def __init__(self, tabs: QTabWidget, path: str, program: Program, interactive: bool, tools: GraphTools,
                 reveal: Callable[[str], None], compare: Callable[[object, str], None]) -> None:
        super().__init__(tabs)
        self.path, self.program, self.interactive = path, program, interactive
        self.tools, self.reveal, self.compare = tools, reveal, compare
        fmt = recognise(path)
        if fmt is ONNX or fmt.opens_as is Opens.TRACE:  # the run jobs load a .pt2 or a .pte: these would fail there
            what, why = ("an ONNX model", NOT_FOR_ONNX) if fmt is ONNX else ("a compiled graph", NOT_FOR_TRACE)
            for title in (RUN, NUMERICS):
                self._not_offered(title, f"{title} is off for {what}: {why}")
            return
        holds.hold(path, tabs)  # the program's warm worker lives while its tab does, Run panel built or not
        self.add(RUN, self._build_run)  # a .pte's runs with ExecuTorch's runtime (app/run/panel.py)
        if fmt is PTE:  # Numerics loads its program as a .pt2: a .pte is a candidate, compared from its source
            self._not_offered(NUMERICS, f"{NUMERICS} is off for an ExecuTorch program: {NOT_FOR_PTE}")
        else:
            self.add(NUMERICS, self._build_numerics)

    def _not_offered(self, title: str, why: str) -> None:
        """A disabled tab that says why (its tooltip, and its page where code shows it: Run…'s Ctrl+R)."""
        page = QLabel(why, wordWrap=True, alignment=Qt.AlignmentFlag.AlignTop)
        page.setMargin(12)
        self.panels[title] = page
        index = self.tabs.addTab(page, title)
        self.tabs.setTabEnabled(index, False)
        self.tabs.setTabToolTip(index, why)

    @property
    def run_panel(self) -> RunPanel:
        return cast("RunPanel", self.get(RUN))

    @property
    def numerics_panel(self) -> NumericsPanel:
        return cast("NumericsPanel", self.get(NUMERICS))

    def _build_run(self) -> QWidget:
        from pt2_viewer.app.run.panel import RunPanel

        panel, tools = RunPanel(self.path, self.program, interactive=self.interactive), self.tools
        panel.node_requested.connect(self.reveal)
        panel.heat_changed.connect(tools.show_run_time)
        panel.nodes_requested.connect(lambda nodes, at: tools.go_through(nodes, "hottest nodes", at))
        return panel

    def _build_numerics(self) -> QWidget:
        from pt2_viewer.app.numerics.panel import NumericsPanel
        from pt2_viewer.app.run.panel import CudaProbe
        from pt2_viewer.core.numerics.readout import OVERLAY_NAME

        panel, tools = NumericsPanel(self.path, self.program, interactive=self.interactive), self.tools
        panel.node_requested.connect(self.reveal)
        panel.overlay_changed.connect(
            lambda o: tools.add_overlay(o) if o is not None else tools.remove_overlay(OVERLAY_NAME))
        panel.nodes_requested.connect(lambda nodes, at: tools.go_through(nodes, "nodes by error", at))
        panel.compare_requested.connect(self.compare)
        panel.cuda_asked.connect(self._ask_cuda)  # first shown: CUDA for the Numerics tab, as Run asks it
        CudaProbe.shared().known.connect(self._cuda_known)
        return panel

    def _ask_cuda(self) -> None:
        from pt2_viewer.app.run.panel import CudaProbe

        status = CudaProbe.shared().ask()
        if status is not None:
            self._cuda_known(status)

    def _cuda_known(self, status: CudaStatus) -> None:
        self.numerics_panel.set_cuda(status.available, status.reason)
