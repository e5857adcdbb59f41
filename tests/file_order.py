"""The order test files are handed to pytest-xdist's processes: the longest first, so a run does not end with one
process finishing a heavy file alone while the others wait (a full run's last 5% took 200 s that way).

`make test` runs `--dist loadfile`: each file goes whole to one process, in the order given, each process taking the
next file when it is free. Handing out the longest files first is the classic longest-processing-time rule, within
4/3 of the best split. pytest-xdist's own reordering (by number of tests per file) is turned off in the Makefile
(`--no-loadscope-reorder`): a file of 40 quick tests is not a long one.

How long each file takes comes from `tests/file_durations.json`, committed, so a clean clone orders well from its
first run. Every run records what it measured in `.cache/test-file-durations.json` (`record`, `write_recorded`); after
a full run, copying that file over `tests/file_durations.json` refreshes the order. A file not listed yet counts as
a median one. No test's outcome depends on this order: it only decides which process runs a file, and when.
"""
from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from tests.fixture_root import FIXTURE_ROOT

KNOWN = Path(__file__).resolve().parent / "file_durations.json"
RECORDED = FIXTURE_ROOT / "test-file-durations.json"

_measured: defaultdict[str, float] = defaultdict(float)  # test file -> seconds of setup, call and teardown


def known_durations(path: Path = KNOWN) -> dict[str, float]:
    """{test file relative to the repository: seconds}; empty when the file is missing or not a JSON object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def longest_files_first(items: list[pytest.Item], durations: dict[str, float] | None = None) -> None:
    """Sorts `items` in place so that files run longest first; the tests of a file keep their order."""
    durations = known_durations() if durations is None else durations
    default = statistics.median(durations.values()) if durations else 0.0
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(_file_of(item.nodeid), len(first_seen))
    items.sort(key=lambda item: (-durations.get(_file_of(item.nodeid), default), first_seen[_file_of(item.nodeid)]))


def record(report: pytest.TestReport) -> None:
    """Adds a test phase's time to its file (called where reports arrive: with pytest-xdist, the controller)."""
    _measured[_file_of(report.nodeid)] += report.duration


def write_recorded(path: Path = RECORDED) -> None:
    """Writes what this run measured over what earlier runs recorded (a partial run updates only its files)."""
    if not _measured:
        return
    merged = known_durations(path) | {name: round(seconds, 1) for name, seconds in _measured.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(sorted(merged.items(), key=lambda kv: -kv[1])), indent=1) + "\n")
    tmp.replace(path)


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]
