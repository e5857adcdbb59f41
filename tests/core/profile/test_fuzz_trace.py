"""Fuzzing the trace importer with damaged real traces: reading and attributing must succeed or raise
`ProfileError` (one line), nothing else.

Hypothesis mutates the zoo CNN's real eager profile (tests/profile_programs.py) at two levels: raw bytes (flips,
cuts, insertions) and the JSON (any field of any event replaced by a value of another type, or removed). Runs are
deterministic (`derandomize=True`, no example database) and bounded."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.trace_file import read_trace
from tests.profile_programs import profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's CNN and its profile

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=120,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                   st.text(max_size=8), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4),
                                                                                            st.integers(), max_size=2))


@pytest.fixture(scope="module")
def program() -> Program:
    return registry.read(program_path("resnet18")).program()


@pytest.fixture(scope="module")
def trace_bytes() -> bytes:
    return (profile_of("resnet18") / "trace.json").read_bytes()


def _survives(program: Program, path: Path) -> None:
    try:
        attribute(program, read_trace(path))
    except ProfileError as e:
        assert "\n" not in str(e) and str(e)


@FUZZ
@given(data=st.data())
def test_damaged_bytes_are_read_or_refused_in_one_line(program: Program, trace_bytes: bytes, tmp_path: Path,
                                                      data: st.DataObject) -> None:
    damaged = bytearray(trace_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        kind = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if kind == "flip":
            damaged[at] ^= data.draw(st.integers(1, 255))
        elif kind == "cut":
            del damaged[at:]
            break
        else:
            damaged[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    path = tmp_path / "damaged.json"
    path.write_bytes(bytes(damaged))
    _survives(program, path)


@FUZZ
@given(data=st.data())
def test_any_field_of_any_event_replaced_or_removed_is_read_or_refused(program: Program, trace_bytes: bytes,
                                                                      tmp_path: Path, data: st.DataObject) -> None:
    trace: dict[str, Any] = json.loads(trace_bytes)
    events = trace["traceEvents"]
    for _ in range(data.draw(st.integers(1, 3))):
        event = events[data.draw(st.integers(0, len(events) - 1))]
        target = event["args"] if data.draw(st.booleans()) and isinstance(event.get("args"), dict) else event
        if not target:
            continue
        key = data.draw(st.sampled_from(sorted(target)))
        if data.draw(st.booleans()):
            del target[key]
        else:
            target[key] = data.draw(VALUES)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    _survives(program, path)
