"""A torch.compile trace in the format registry: a TORCH_TRACE folder by its logs, a log by its first record
(whatever its name); reading one as a program says what it is and which command reads it."""
from __future__ import annotations

import shutil

import pytest

from pt2_viewer.core.formats import registry
from pt2_viewer.core.pt2.errors import ArchiveError
from tests.trace_programs import compile_trace, ranks_trace


def test_a_trace_folder_and_its_logs_are_recognised(tmp_path):
    for folder in (compile_trace(), ranks_trace()):
        assert registry.recognise(folder) is registry.TRACE_FOLDER
        for log in folder.glob("*.log"):
            assert registry.recognise(log) is registry.TRACE_LOG
    renamed = tmp_path / "trace.txt"  # by its first record, not its name
    shutil.copyfile(next(compile_trace().glob("*.log")), renamed)
    assert registry.recognise(renamed) is registry.TRACE_LOG
    plain = tmp_path / "build.log"
    plain.write_text("compiling...\n", encoding="utf-8")
    assert registry.recognise(plain) is registry.FALLBACK
    assert registry.recognise(tmp_path) is registry.FALLBACK  # a folder without trace logs


def test_reading_a_trace_as_a_program_names_the_command():
    with pytest.raises(ArchiveError) as raised:
        registry.read(compile_trace())
    assert "torch.compile trace" in str(raised.value) and "pt2-viewer trace" in str(raised.value)
