"""The window's three trust questions (app/platform/trust_dialog.py), each asked on its own and remembered on its own:
"Import these modules?" once per module and worker Python; "Load code from this program?" per file content; "Run the
compiled code in this package?" per package content. The message box is answered by the test (no dialog is shown)."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from pt2_viewer.app.platform import trust_dialog
from pt2_viewer.core.platform.trust import TrustStore


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every question asked, (title, text); each is answered Yes."""
    asked: list[tuple[str, str]] = []

    def warning(_parent, title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append((title, text))
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "warning", warning)
    return asked


def test_a_module_is_asked_for_once_per_worker_python(tmp_path: Path, answers: list[tuple[str, str]]) -> None:
    store = TrustStore(tmp_path / "trusted.json")
    program = tmp_path / "model.pt2"
    program.write_bytes(b"x")
    items = ["import the module 'this' (for Inputs, from the standard library)"]
    assert not trust_dialog.confirm_imports(None, program, "/py/a", ["this"], items, store, interactive=False)
    assert answers == []  # without dialogs nothing is asked, and nothing allowed
    assert trust_dialog.confirm_imports(None, program, "/py/a", ["this"], items, store, interactive=True)
    assert len(answers) == 1 and answers[0][0] == trust_dialog.IMPORT_TITLE and "/py/a" in answers[0][1]
    assert items[0] in answers[0][1]
    assert trust_dialog.confirm_imports(None, program, "/py/a", ["this"], items, store, interactive=True)
    assert len(answers) == 1, "asked again for a module already allowed in this Python"
    assert trust_dialog.confirm_imports(None, program, "/py/a", ["this.sub"], items, store, interactive=False)
    assert trust_dialog.confirm_imports(None, program, "/py/b", ["this"], items, store, interactive=True)
    assert len(answers) == 2, "another worker Python is asked on its own"
    assert store.allowed_modules("/py/a") == ["this"] and not store.is_trusted(program)  # the file is not trusted


def test_native_code_and_the_whole_file_are_asked_for_on_their_own(tmp_path: Path,
                                                                    answers: list[tuple[str, str]]) -> None:
    store = TrustStore(tmp_path / "trusted.json")
    package = tmp_path / "model.aoti.pt2"
    package.write_bytes(b"compiled")
    assert trust_dialog.confirm_native(None, package, store, interactive=True)
    assert answers[-1][0] == trust_dialog.NATIVE_TITLE == "Run the compiled code in this package?"
    assert trust_dialog.confirm_native(None, package, store, interactive=False)  # remembered
    assert not store.is_trusted(package) and not store.allowed_modules("/py/a")  # nothing else was granted
    package.write_bytes(b"other compiled code")
    assert not trust_dialog.confirm_native(None, package, store, interactive=False)  # changed: asked again
    assert trust_dialog.confirm_program(None, package, store, ["unpickle the weight 'w'"], interactive=True)
    assert answers[-1][0] == trust_dialog.PROGRAM_TITLE and store.is_trusted(package)


def test_a_no_is_asked_again_and_no_question_says_it_is_remembered(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each question said "Your answer is remembered", then asked again after No (issue 43 §5): only a yes is kept,
    and every question says so."""
    asked: list[str] = []

    def no(_parent, _title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "warning", no)
    store = TrustStore(tmp_path / "trusted.json")
    script = tmp_path / "model.py"
    script.write_text("print('hi')\n")
    package = tmp_path / "model.aoti.pt2"
    package.write_bytes(b"compiled")
    for _ in range(2):
        assert not trust_dialog.confirm_run(None, script, store, interactive=True)
        assert not trust_dialog.confirm_program(None, package, store, ["unpickle 'w'"], interactive=True)
        assert not trust_dialog.confirm_native(None, package, store, interactive=True)
        assert not trust_dialog.confirm_imports(None, package, "/py/a", ["this"], ["import 'this'"], store,
                                                interactive=True)
    assert len(asked) == 8, "a No is not remembered: each question is asked again"
    for text in asked:
        assert "Your answer is remembered" not in text
        assert "A Yes is remembered" in text and "after No, you are asked again" in text
