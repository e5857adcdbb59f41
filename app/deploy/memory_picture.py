"""The memory plan as a picture: each planned tensor a bar over the instructions it lives between (x) at its offset
in its buffer (y), so reuse of the same bytes by tensors that never overlap in time shows at a glance."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from pt2_viewer.core.model.executorch import MemoryPlan, PlannedTensor

_COLOURS = [QColor(c) for c in ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")]


class MemoryPicture(QWidget):
    """Click a bar: `tensor_clicked(value name)`."""

    tensor_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: MemoryPlan | None = None
        self.selected = ""
        self._bars: list[tuple[QRectF, PlannedTensor]] = []
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setToolTip("Planned tensors: instructions across, offset in the buffer down. Click one to select it.")

    def set_plan(self, plan: MemoryPlan | None) -> None:
        self.plan = plan
        self.update()

    def select(self, value: str) -> None:
        self.selected = value
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        self._bars = []
        plan = self.plan
        if plan is None or not plan.buffers or not plan.tensors:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No planned tensors")
            return
        margin = 4.0
        w, h = self.width() - 2 * margin, self.height() - 2 * margin
        total = float(sum(max(b, 1) for b in plan.buffers))
        steps = max(plan.instructions + 2, 1)  # inputs live from before instruction 0, outputs past the last
        tops, y = {}, margin
        for i, size in enumerate(plan.buffers):
            tops[i + 1] = (y, h * max(size, 1) / total)
            y += tops[i + 1][1]
        for t in plan.tensors:
            if t.buffer not in tops:
                continue
            top, height = tops[t.buffer]
            scale = height / max(plan.buffers[t.buffer - 1], 1)
            x0 = margin + w * (t.first + 1) / steps
            x1 = margin + w * (t.last + 2) / steps
            rect = QRectF(x0, top + t.offset * scale, max(x1 - x0, 1.5), max(t.nbytes * scale, 1.0))
            colour = QColor("#d81b60") if t.value == self.selected else _COLOURS[hash(t.value) % len(_COLOURS)]
            p.fillRect(rect, colour)
            self._bars.append((rect, t))
        p.setPen(self.palette().text().color())
        for top, _height in tops.values():
            p.drawLine(int(margin), int(top), int(margin + w), int(top))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt's name)
        pos = event.position()
        for rect, t in reversed(self._bars):
            if rect.contains(pos):
                self.select(t.value)
                self.tensor_clicked.emit(t.value)
                return
