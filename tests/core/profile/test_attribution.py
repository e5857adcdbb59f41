"""Eager CPU profiles of the zoo's CNN and transformer, recorded by this machine's torch (tests/profile_programs.py),
attributed to the programs' nodes: node by node in graph order, the per-op totals equal to the profiler's own
top-level op times within 5%, and a trace of the other program refused in one line."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import NodeOp, Program
from pt2_viewer.core.profile.attribute import attribute
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import Attribution
from pt2_viewer.core.profile.trace_file import read_trace
from tests.profile_programs import PROGRAMS, profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's programs and their profiles (tests/profile_programs.py)


def _program(program_id: str) -> Program:
    return registry.read(program_path(program_id)).program()


def _attributed(program_id: str, trace_of: str | None = None) -> Attribution:
    return attribute(_program(program_id), read_trace(profile_of(trace_of or program_id) / "trace.json"))


def _torch_ops(program_id: str) -> dict[str, dict[str, dict[str, float]]]:
    return json.loads(Path(profile_of(program_id) / "ops.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("program_id", PROGRAMS)
def test_every_operator_call_gets_its_own_event_in_graph_order(program_id: str) -> None:
    program = _program(program_id)
    result = _attributed(program_id)
    calls = [n for n in program.graph.nodes if n.op is NodeOp.CALL_FUNCTION and n.target.startswith("torch.ops.")]
    assert [n.node for n in result.nodes] == [n.name for n in calls]
    assert result.calls == 1 and result.device == "cpu"
    for node in result.nodes:
        assert node.calls == 1 and len(node.events) == 1, node.node
        (event,) = node.events
        namespace, op = node.target.split(".")[2:4]
        assert event.name == f"{namespace}::{op}", node.node
        assert node.us == pytest.approx(event.dur) and node.mean_us == pytest.approx(event.dur)
    assert result.unattributed_us == 0  # the profile holds one call of the program and nothing else
    # each node has its own event: the ops' times in order are the events' times in order
    starts = [n.events[0].ts for n in result.nodes]
    assert starts == sorted(starts)


@pytest.mark.parametrize("program_id", PROGRAMS)
def test_per_op_totals_equal_the_profilers_own_top_level_times(program_id: str) -> None:
    result = _attributed(program_id)
    ours: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for node in result.nodes:
        ours[node.events[0].name][0] += node.calls
        ours[node.events[0].name][1] += node.us
    torch_ops = _torch_ops(program_id)
    top_level = torch_ops["top_level"]
    assert set(ours) == set(top_level)
    for name, (count, us) in ours.items():
        assert count == top_level[name]["count"], name
        assert us == pytest.approx(top_level[name]["us"], rel=0.05), name
        everywhere = torch_ops["key_averages"][name]
        if everywhere["count"] == count:  # an op that never runs inside another: key_averages' total is its own
            assert us == pytest.approx(everywhere["us"], rel=0.05), name


@pytest.mark.parametrize(("program_id", "other"), [PROGRAMS, PROGRAMS[::-1]])
def test_a_trace_of_the_other_program_is_refused_in_one_line(program_id: str, other: str) -> None:
    with pytest.raises(ProfileError) as raised:
        _attributed(program_id, trace_of=other)
    message = str(raised.value)
    assert "\n" not in message
    assert "not a run of" in message and "ep.module()" in message
