"""The guards of one export call: where each shape symbol came from and which user line added each guard.

A view of the call's `pt2_viewer.core.export.guards.GuardLog` (captured by the worker while export ran). Symbols list
the input dimension they stand for and their example value; guards list the readable expression (`Eq(x.shape[0],
y.shape[1])`) and the script line that caused it. Clicking a line asks for the source (`source_requested(file, line)`);
clicking a symbol asks to show it in the exported program's Symbols panel (`symbol_requested(name)`).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTreeWidgetItem, QVBoxLayout, QWidget

from pt2_viewer.app.panels import fixed_font, link_color, make_table
from pt2_viewer.core.export.failures import SourceLine
from pt2_viewer.core.export.guards import GuardLog
from pt2_viewer.core.export.plain_words import symbol_names, user_words
from pt2_viewer.core.util.words import plural

SYMBOL_COLUMNS = ["symbol", "stands for", "example", "range", "user line"]
GUARD_COLUMNS = ["guard", "kind", "user line", "added by"]
DATA_ROLE = Qt.ItemDataRole.UserRole


def line_text(line: SourceLine | None) -> str:
    if line is None:
        return ""
    return f"line {line.line}" + (f" in {line.function}" if line.function else "") + (
        f": {line.code}" if line.code else "")


class GuardsPanel(QWidget):
    source_requested = Signal(str, int)
    symbol_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log = GuardLog()
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.symbols = make_table(SYMBOL_COLUMNS, stretch_column=4)
        self.guards = make_table(GUARD_COLUMNS, stretch_column=2)
        self.symbols.itemClicked.connect(self._symbol_clicked)
        self.symbols.itemActivated.connect(self._symbol_clicked)
        self.guards.itemClicked.connect(self._guard_clicked)
        self.guards.itemActivated.connect(self._guard_clicked)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.symbols)
        split.addWidget(self.guards)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(split, 1)
        self.set_log(GuardLog(), "")

    def set_log(self, log: GuardLog, title: str) -> None:
        self.log = log
        self.symbols.clear()
        self.guards.clear()
        mono = fixed_font()
        for sym in log.symbols:
            stands_for = f"{sym.input}.shape[{sym.axis}]" if sym.input is not None and sym.axis is not None \
                else sym.source
            item = QTreeWidgetItem([sym.name, stands_for, sym.hint or "", sym.range,
                                    line_text(sym.user_line) or ("unbacked" if sym.unbacked else "input dimension")])
            item.setData(0, DATA_ROLE, sym)
            for col in (0, 1, 3):
                item.setFont(col, mono)
            item.setForeground(0, link_color())
            item.setToolTip(0, f"Show {sym.name} in the exported program's Symbols panel")
            if sym.framework:  # torch's own frame that made an unbacked symbol: for whoever debugs torch
                item.setToolTip(1, f"torch made it in {sym.framework}")
            self.symbols.addTopLevelItem(item)
        names = symbol_names(log.symbols)
        for guard in log.guards:  # x.shape[0] == y.shape[1], as the user writes it; torch's spelling in the tooltip
            item = QTreeWidgetItem([user_words(guard.readable or guard.expr, names), guard.kind,
                                    line_text(guard.user_line),
                                    guard.framework])
            item.setData(0, DATA_ROLE, guard)
            item.setFont(0, mono)
            item.setToolTip(0, f"as torch writes it: {guard.expr}")
            if guard.user_line is not None:
                item.setForeground(2, link_color())
                item.setToolTip(2, f"Open {guard.user_line.file} at line {guard.user_line.line}")
            self.guards.addTopLevelItem(item)
        if not log.symbols and not log.guards:
            self.header.setText(f"{title}: no shape symbols and no guards (all shapes static)." if title
                                else "Select an export call to see its symbols and guards.")
        else:
            self.header.setText(f"{title}: {plural(len(log.symbols), 'symbol')}, {plural(len(log.guards), 'guard')}. "
                                "Click a line to open it; click a symbol to find it in the exported program.")

    def _symbol_clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        sym = item.data(0, DATA_ROLE)
        if column == 4 and sym.user_line is not None:
            self.source_requested.emit(sym.user_line.file, sym.user_line.line)
        else:
            self.symbol_requested.emit(sym.name)

    def _guard_clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        guard = item.data(0, DATA_ROLE)
        if guard.user_line is not None:
            self.source_requested.emit(guard.user_line.file, guard.user_line.line)
