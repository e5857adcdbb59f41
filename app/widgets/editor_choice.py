"""Preferences: which editor a source link opens (core/platform/editor.py), remembered in QSettings.

`chosen_editor()` is what `open_source` asks: the saved choice, or on first use the detected one, saved so that
Preferences shows it. `EditorSection` is the Preferences dialog's row that changes it.
"""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QWidget

from pt2_viewer.app.settings import app_settings
from pt2_viewer.core.platform.editor import CHOICES, detect

EDITOR_KEY = "source/editor"


def chosen_editor(store: QSettings | None = None) -> str:
    store = store or app_settings()
    choice = str(store.value(EDITOR_KEY, "") or "")
    if choice not in CHOICES:
        choice = detect()
        store.setValue(EDITOR_KEY, choice)
    return choice


class EditorSection(QGroupBox):
    def __init__(self, store: QSettings, parent: QWidget | None = None) -> None:
        super().__init__("Source links", parent)
        self.store = store
        self.choice = QComboBox()
        for key, text in CHOICES.items():
            self.choice.addItem(text, key)
        self.choice.setCurrentIndex(max(0, self.choice.findData(chosen_editor(store))))
        self.choice.setToolTip("Where a stack frame's link opens the file at its line")
        form = QFormLayout(self)
        form.addRow("Open in", self.choice)

    def save(self) -> None:
        self.store.setValue(EDITOR_KEY, self.choice.currentData())
