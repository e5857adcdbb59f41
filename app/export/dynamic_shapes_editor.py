"""Edit an export call's `dynamic_shapes` one input dimension at a time.

Each row is a `pt2_viewer.core.export.script_session.DimRow`: static, `Dim.AUTO`, `Dim.DYNAMIC` (both with an optional
range) or a named `Dim` with min and max (rows with the same name share one Dim and its range). The widget only edits
rows; `pt2_viewer.core.export.script_session.rows_to_spec` turns them into the JSON spec a rerun request carries.

The report knows an input's number of dimensions only from the spec the script passed or from the symbols export
created; for other inputs a spin box lets the user say how many dimensions to edit.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.qt import cell_widget
from pt2_viewer.core.export.script_session import (
    AUTO,
    DIM_KINDS,
    DYNAMIC,
    NAMED,
    STATIC,
    DimRow,
    rows_to_spec,
    spec_to_rows,
)

KIND_TEXT = {STATIC: "static", AUTO: "Dim.AUTO", DYNAMIC: "Dim.DYNAMIC", NAMED: "named Dim"}
NO_BOUND = -1
MAX_BOUND = 2_147_483_647
MAX_RANK = 8
COLUMNS = ["dimension", "kind", "name", "min", "max"]
COLUMN_WIDTHS = [96, 110, 60, 64, 64]


class DynamicShapesEditor(QWidget):
    """Rows of input dimensions; `spec()` gives the JSON dynamic_shapes spec. Emits `changed` on every edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DimRow] = []
        self.inputs: list[str] = []
        self.ranks: dict[str, int] = {}
        self.shapes: dict[str, list[int]] = {}  # the example inputs' shapes, shown beside each dimension
        self._spec: dict[str, Any] | None = None
        self._filling = False
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        for i, width in enumerate(COLUMN_WIDTHS):  # cell widgets give ResizeToContents nothing to measure
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(i, width)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.rank_form = QFormLayout()
        self.rank_boxes: dict[str, QSpinBox] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addLayout(self.rank_form)

    # -- filling -----------------------------------------------------------------------------------------------
    def set_spec(self, spec: dict[str, Any] | None, inputs: list[str], ranks: dict[str, int],
                 shapes: dict[str, list[int]] | None = None) -> None:
        """Show `spec` (None: the script's spec cannot be expressed) for the inputs, with the ranks known and the
        example inputs' `shapes` (each row says its example size)."""
        self._spec = spec
        self.shapes = dict(shapes or {})
        self.inputs = list(inputs)
        self.ranks = {name: ranks[name] for name in inputs if name in ranks}
        self.rows = spec_to_rows(spec, self.ranks) if spec is not None else []
        self.setEnabled(spec is not None)
        if spec is None:
            self.note.setText("The script's dynamic_shapes uses nested inputs, which this editor cannot show. "
                              "Re-export keeps the script's own dynamic_shapes.")
        elif not inputs:
            self.note.setText("The model takes no inputs to make dynamic.")
        else:
            self.note.setText("Choose for each input dimension: static, Dim.AUTO (export works out what it can "
                              "be), Dim.DYNAMIC (must stay dynamic) or a named Dim with a range.")
        self._fill_rank_boxes()
        self._fill_table()

    def _fill_rank_boxes(self) -> None:
        while self.rank_form.rowCount():
            self.rank_form.removeRow(0)
        self.rank_boxes = {}
        for name in self.inputs:
            if name in self.ranks:
                continue
            box = QSpinBox(minimum=0, maximum=MAX_RANK)
            box.setToolTip(f"The report does not say how many dimensions '{name}' has; set it to edit them")
            box.valueChanged.connect(lambda n, name=name: self.set_rank(name, n))
            self.rank_boxes[name] = box
            self.rank_form.addRow(f"dimensions of {name}:", box)

    def set_rank(self, name: str, rank: int) -> None:
        """Edit `rank` dimensions of an input whose rank the report did not give (new ones are static)."""
        kept = [r for r in self.rows if r.input == name and r.axis < rank]
        have = {r.axis for r in kept}
        extra = [DimRow(name, axis) for axis in range(rank) if axis not in have]
        order = {n: i for i, n in enumerate(self.inputs)}
        others = [r for r in self.rows if r.input != name]
        self.rows = sorted(others + kept + extra, key=lambda r: (order.get(r.input, 0), r.axis))
        self._fill_table()
        self.changed.emit()

    def _fill_table(self) -> None:
        self._filling = True
        self.table.setRowCount(len(self.rows))
        widest = COLUMN_WIDTHS[0]
        for i, row in enumerate(self.rows):
            example = self.shapes.get(row.input, [])
            size = f" ({example[row.axis]})" if row.axis < len(example) else ""
            label = QLabel(row.label + (f" = {row.size}" if row.size is not None else "") + _derived_text(row) + size)
            if size:
                label.setToolTip(f"The example input's {row.label} is {example[row.axis]}.")
            self.table.setCellWidget(i, 0, label)
            widest = max(widest, label.sizeHint().width() + 12)
            kind = QComboBox()
            for k in DIM_KINDS:
                kind.addItem(KIND_TEXT[k], k)
            kind.setCurrentIndex(DIM_KINDS.index(row.kind))
            kind.currentIndexChanged.connect(lambda _i, i=i, box=kind: self._edit(i, kind=box.currentData()))
            self.table.setCellWidget(i, 1, kind)
            name = QLineEdit(row.name)
            name.setPlaceholderText("Dim name")
            name.textEdited.connect(lambda text, i=i: self._edit(i, name=text.strip()))
            self.table.setCellWidget(i, 2, name)
            for col, attr in ((3, "min"), (4, "max")):
                box = QSpinBox(minimum=NO_BOUND, maximum=MAX_BOUND)
                box.setSpecialValueText("—")
                value = getattr(row, attr)
                box.setValue(NO_BOUND if value is None else value)
                box.valueChanged.connect(lambda v, i=i, attr=attr: self._edit(i, **{attr: None if v < 0 else v}))
                self.table.setCellWidget(i, col, box)
            self._enable_row(i)
        self.table.setColumnWidth(0, widest)  # the label with its example size, whole
        self._filling = False

    def _enable_row(self, i: int) -> None:
        row = self.rows[i]
        self.table.cellWidget(i, 2).setEnabled(row.kind == NAMED)
        for col in (3, 4):
            self.table.cellWidget(i, col).setEnabled(row.kind != STATIC)

    # -- editing -----------------------------------------------------------------------------------------------
    def _edit(self, i: int, **changes: Any) -> None:
        if self._filling:
            return
        row = self.rows[i]
        for key, value in changes.items():
            setattr(row, key, value)
        if "kind" in changes:
            row.size = None
            if row.kind == NAMED and not row.name:
                row.name = f"d_{row.input}_{row.axis}".replace(".", "_").replace("[", "_").replace("]", "")
                self._set_text(i, 2, row.name)
        if row.kind == NAMED and ("min" in changes or "max" in changes):
            self._share_range(row)
        self._enable_row(i)
        self.changed.emit()

    def _share_range(self, source: DimRow) -> None:
        """Rows with the same named Dim show the range just set on one of them."""
        self._filling = True
        for j, other in enumerate(self.rows):
            if other is not source and other.kind == NAMED and other.name == source.name:
                other.min, other.max = source.min, source.max
                for col, value in ((3, other.min), (4, other.max)):
                    cell_widget(self.table, j, col, QSpinBox).setValue(NO_BOUND if value is None else value)
        self._filling = False

    def _set_text(self, i: int, col: int, text: str) -> None:
        self._filling = True
        cell_widget(self.table, i, col, QLineEdit).setText(text)
        self._filling = False

    def set_kind(self, input_name: str, axis: int, kind: str, name: str = "", lo: int | None = None,
                 hi: int | None = None) -> None:
        """Set one row as a user would (through its widgets)."""
        i = next(j for j, r in enumerate(self.rows) if r.input == input_name and r.axis == axis)
        cell_widget(self.table, i, 1, QComboBox).setCurrentIndex(DIM_KINDS.index(kind))
        if kind == NAMED and name:
            box = cell_widget(self.table, i, 2, QLineEdit)
            box.setText(name)
            box.textEdited.emit(name)
        for col, value in ((3, lo), (4, hi)):
            if value is not None:
                cell_widget(self.table, i, col, QSpinBox).setValue(value)

    def spec(self) -> dict[str, Any] | None:
        """The edited JSON spec; None when the script's spec could not be shown (keep the script's own).
        Raises ValueError for a named Dim without a valid name."""
        if self._spec is None:
            return None
        return rows_to_spec(self.rows)


def _derived_text(row: DimRow) -> str:
    if row.kind != NAMED or (row.mul == 1 and not row.add):
        return ""
    return f" = {row.mul}*{row.name}{f' + {row.add}' if row.add else ''}"
