"""What Program > Compare Pipeline… asks for, in one dialog that says what each file is for.

Before, two bare file dialogs followed each other (the core ATen `.pt2`, then the `.pte`) with no word in the window
about which stage each one was (issue 43 §5). This dialog names the program and the three stages, has one row per
file with a line saying where such a file comes from, and a Browse… for each titled with its stage and opening in
the program's folder; files with the names the viewer's own commands give them beside the program are filled in
(`NAME.core.pt2` from `decompose --to core`, `NAME.xnnpack.pte` / `NAME.portable.pte` from `lower`). The ETRecord
is the one beside the `.pte` (`NAME.etrecord`), said in the window; another can be chosen, or none (the `.pte`'s
nodes are then matched by structure). The last stage may be an `.onnx` instead (`NAME.lowered.onnx` from Lower to
ONNX…), linked by its own metadata; the core ATen stage is then optional: source | ONNX.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pt2_viewer.app.jobs.job_widgets import file_row
from pt2_viewer.app.widgets.file_dialogs import open_file
from pt2_viewer.core.pte.magic import etrecord_beside

CORE_TITLE = "Compare Pipeline, stage 2 of 3: the core ATen decomposition (.pt2)"
PTE_TITLE = "Compare Pipeline, stage 3 of 3: the .pte lowered from the program"
ETRECORD_TITLE = "Compare Pipeline: the .pte's ETRecord (maps its instructions to the program's nodes)"
LOWER_TARGETS = ("xnnpack", "portable")  # `lower --to`'s names, which it puts in the file's name


@dataclass(frozen=True)
class PipelineFiles:
    """The two later stages of a program and the ETRecord that links the last to the first (None: by structure, or
    an `.onnx` last, linked by its metadata; its core ATen stage may be "")."""

    core: str
    pte: str
    etrecord: str | None


def is_onnx(path: str) -> bool:
    return Path(path).suffix.lower() == ".onnx"


def beside(program: str | None) -> tuple[str, str]:
    """The core ATen `.pt2` and the `.pte` (else the `.onnx`) the viewer's own commands would have written beside
    `program`, where they exist ("" where not)."""
    if not program:
        return "", ""
    source = Path(program)
    core = source.with_name(f"{source.stem}.core.pt2")
    ptes = [*(source.with_name(f"{source.stem}.{to}.pte") for to in LOWER_TARGETS),
            source.with_name(f"{source.stem}.lowered.onnx")]
    return (str(core) if core.is_file() else "", next((str(p) for p in ptes if p.is_file()), ""))


class PipelineFilesDialog(QDialog):
    """The files of Compare Pipeline…, for `program` (the first stage, the program shown)."""

    def __init__(self, program: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program = program
        self.setWindowTitle("Compare Pipeline")
        name = Path(program).name if program else "the program"
        intro = QLabel(f"Shows <b>{name}</b> beside what it became, stage by stage: <b>1</b> the program, <b>2</b> "
                       "its core ATen decomposition, <b>3</b> the .pte lowered from it (or its .onnx, the core ATen "
                       "stage then optional). Each pair is diffed, and a node selected in one stage is selected in "
                       "the others.")
        intro.setWordWrap(True)
        core, pte = beside(program)
        self.core = QLineEdit(core, placeholderText="a .pt2 of this program decomposed to core ATen")
        self.pte = QLineEdit(pte, placeholderText="a .pte lowered from this program, or its .onnx")
        self.etrecord = QLineEdit(placeholderText="none: the .pte's nodes are matched by structure")
        self.etrecord_note = QLabel()
        self.etrecord_note.setWordWrap(True)
        form = QFormLayout()
        rows = (("2  Core ATen (.pt2)", self.core, CORE_TITLE, "PyTorch export archives (*.pt2)",
                 "Program > Decompose… to core ATen saves one; pt2-viewer decompose FILE --to core writes "
                 "NAME.core.pt2."),
                ("3  ExecuTorch (.pte)", self.pte, PTE_TITLE, "ExecuTorch programs (*.pte);;ONNX models (*.onnx)",
                 "Program > Lower to ExecuTorch… saves one with its ETRecord; pt2-viewer lower FILE writes "
                 "NAME.xnnpack.pte with its ETRecord beside it. Or an .onnx: Lower to ONNX… saves one, "
                 "pt2-viewer lower FILE --to onnx writes NAME.lowered.onnx."),
                ("ETRecord", self.etrecord, ETRECORD_TITLE, "ETRecords (*.etrecord);;All files (*)", ""))
        self.browse: dict[str, QPushButton] = {}
        for label, edit, title, kinds, note in rows:
            button = QPushButton("Browse…")
            button.setToolTip(title)
            button.clicked.connect(lambda _c=False, e=edit, t=title, k=kinds: self._choose(e, t, k))
            self.browse[label] = button
            form.addRow(label, file_row(edit, button))
            if note:
                hint = QLabel(f"<small>{note}</small>")
                hint.setWordWrap(True)
                form.addRow("", hint)
        form.addRow("", self.etrecord_note)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.compare_button = self.buttons.addButton("Compare", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        v = QVBoxLayout(self)
        v.addWidget(intro)
        v.addLayout(form)
        v.addWidget(self.buttons)
        self._etrecord_found = ""
        self.pte.textChanged.connect(lambda _t: self._pte_changed())
        for edit in (self.core, self.pte):
            edit.textChanged.connect(lambda _t: self._update())
        self._pte_changed()
        self.setMinimumWidth(680)
        self.adjustSize()  # wrapped lines counted at that width (a top level sizes for height-for-width here)

    def _choose(self, edit: QLineEdit, title: str, kinds: str) -> None:
        start = edit.text().strip() or self.pte.text().strip() or self.program  # the file's folder, else the program's
        path = open_file(self, title, start, kinds)
        if path:
            edit.setText(path)

    def _pte_changed(self) -> None:
        """The ETRecord beside the `.pte` is the one used, unless the user chose another."""
        last = self.pte.text().strip()
        found = etrecord_beside(last) if last and not is_onnx(last) else None
        if self.etrecord.text() in ("", self._etrecord_found):
            self.etrecord.setText(found or "")
        self._etrecord_found = found or ""
        self._update()

    def _update(self) -> None:
        chosen = self.etrecord.text().strip()
        last = self.pte.text().strip()
        if is_onnx(last):
            note = "The .onnx links its nodes to the program's through its own metadata (no ETRecord)."
        elif chosen and chosen == self._etrecord_found:
            note = "The ETRecord beside the .pte maps its instructions to the program's nodes."
        elif chosen:
            note = "This ETRecord maps the .pte's instructions to the program's nodes."
        elif self.pte.text().strip():
            note = "No ETRecord beside the .pte (NAME.etrecord): its nodes are matched by structure. Browse… for one."
        else:
            note = ""
        self.etrecord_note.setText(f"<small>{note}</small>")
        core = self.core.text().strip()
        self.compare_button.setEnabled(Path(last).is_file() and (Path(core).is_file() or (is_onnx(last) and not core)))

    def files(self) -> PipelineFiles:
        last = self.pte.text().strip()
        return PipelineFiles(self.core.text().strip(), last,
                             None if is_onnx(last) else self.etrecord.text().strip() or None)


def ask_pipeline_files(parent: QWidget | None, program: str | None) -> PipelineFiles | None:
    """The files for Compare Pipeline… of `program`, or None when the user cancels."""
    dialog = PipelineFilesDialog(program, parent)
    try:
        return dialog.files() if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


__all__ = ["PipelineFiles", "PipelineFilesDialog", "ask_pipeline_files", "beside", "is_onnx"]
