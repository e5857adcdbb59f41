"""The order files are handed to the test processes (tests/file_order.py): longest first, a file's tests in their
own order, a file never timed counted as a median one; and what a run measured is merged into the record."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import file_order


def _items(*nodeids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def test_the_longest_files_go_first_and_each_keeps_its_tests_in_order() -> None:
    items = _items("tests/a.py::one", "tests/b.py::one", "tests/a.py::two", "tests/d.py::one", "tests/new.py::one",
                   "tests/c.py::one", "tests/b.py::two")
    file_order.longest_files_first(items, {"tests/a.py": 5.0, "tests/b.py": 300.0, "tests/c.py": 50.0,
                                           "tests/d.py": 40.0})
    assert [i.nodeid for i in items] == ["tests/b.py::one", "tests/b.py::two", "tests/c.py::one",
                                         "tests/new.py::one",  # not timed yet: the median, 45 s
                                         "tests/d.py::one", "tests/a.py::one", "tests/a.py::two"]


def test_the_committed_durations_name_files_that_exist() -> None:
    known = file_order.known_durations()
    root = Path(__file__).resolve().parent.parent
    assert len(known) > 50, "tests/file_durations.json lists a full run's files"
    missing = [name for name in known if not (root / name).is_file()]
    assert not missing, f"tests/file_durations.json names files that are gone (refresh it, tests/README.md): {missing}"


def test_a_run_records_its_files_over_what_was_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "durations.json"
    record.write_text(json.dumps({"tests/a.py": 7.0, "tests/b.py": 9.0}))
    monkeypatch.setattr(file_order, "_measured", file_order.defaultdict(float))
    for nodeid, seconds in (("tests/b.py::one", 1.5), ("tests/b.py::one", 0.25), ("tests/c.py::x", 2.0)):
        file_order.record(SimpleNamespace(nodeid=nodeid, duration=seconds))  # type: ignore[arg-type]
    file_order.write_recorded(record)
    assert json.loads(record.read_text()) == {"tests/a.py": 7.0, "tests/b.py": 1.8, "tests/c.py": 2.0}
    assert list(json.loads(record.read_text())) == ["tests/a.py", "tests/c.py", "tests/b.py"]  # longest first
