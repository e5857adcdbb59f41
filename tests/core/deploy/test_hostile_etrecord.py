"""ETRecords and ETDumps are untrusted input: an ETRecord loads exported programs and pickles, so it goes through the
archive check and consent as a `.pt2` does (core/deploy/etrecord.py); an ETDump and its debug buffer are data,
bounds-checked before the Inspector slices tensors out of them (core/deploy/etdump.py). Every case ends with a
clean `JobFailure` or a loaded record, never a traceback, and a hostile payload never runs.

The files mutated are the small zoo pipeline model lowered to portable by the lower job (tests/deploy_programs.py)."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.core.jobs.errors import JobFailure
from tests import hostile_archives as hostile
from tests.programs import ExportFailed

pytest.importorskip("executorch", reason="executorch makes and reads the ETRecords (requirements-dev.txt)")


@pytest.fixture(scope="module")
def small() -> Any:
    from tests.deploy_programs import SMALL, lowered

    try:
        return lowered(SMALL, "portable")
    except ExportFailed as e:
        pytest.skip(str(e))


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _zip(members: dict[str, bytes] | list[tuple[str, bytes]], path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in (members.items() if isinstance(members, dict) else members):
            z.writestr(name, data)
    return path


def _load(path: Path, work: Path, trusted: bool = False) -> Any:
    from pt2_viewer.core.deploy.etrecord import load_etrecord

    return load_etrecord(path, work, trusted)


def test_the_real_etrecord_loads_without_trust(small: Any, tmp_path: Path) -> None:
    rec = _load(small.etrecord, tmp_path)
    assert rec.exported_program is not None and rec._debug_handle_map
    assert not list(tmp_path.iterdir())  # the private copy ExecuTorch parsed is gone


def test_a_pickle_runs_only_with_consent(small: Any, tmp_path: Path) -> None:
    payload = hostile.Payload.make(tmp_path / "payload")
    members = _members(small.etrecord)
    state = next(n for n in members if n.endswith("_state_dict"))
    members[state] = hostile.evil_torch_save(lambda o: {"w": o}, payload)
    evil = _zip(members, tmp_path / "evil.etrecord")
    with pytest.raises(JobFailure) as refused:
        _load(evil, tmp_path / "work")
    assert refused.value.failure.kind == "untrusted" and state in refused.value.failure.detail
    assert "--trust" in refused.value.failure.hint
    from pt2_viewer.core.numerics.job import run_job

    result = run_job({"program": str(small.source), "candidate": str(small.pte), "etrecord": str(evil)},
                     tmp_path / "job", lambda _event: None)
    assert result["ok"] is False and result["error"]["kind"] == "untrusted"
    assert not payload.marker.exists()


def test_a_size_expression_torch_never_writes_needs_trust(small: Any, tmp_path: Path) -> None:
    members = _members(small.etrecord)
    doc = json.loads(members["exported_program"])
    doc.setdefault("range_constraints", {})
    doc["graph_module"]["graph"].setdefault("sym_int_values", {})["s0"] = {
        "as_expr": {"expr_str": "__import__('os').system('true')", "hint": None}}
    members["exported_program"] = json.dumps(doc).encode()
    with pytest.raises(JobFailure) as refused:
        _load(_zip(members, tmp_path / "expr.etrecord"), tmp_path / "work")
    assert refused.value.failure.kind == "untrusted" and "symbolic expression" in refused.value.failure.message


@pytest.mark.parametrize("case", ["not_a_zip", "no_identifier", "outside", "twice", "deep_json", "bad_json"])
def test_damaged_etrecords_get_one_clean_message(small: Any, tmp_path: Path, case: str) -> None:
    members = _members(small.etrecord)
    path = tmp_path / f"{case}.etrecord"
    if case == "not_a_zip":
        path.write_bytes(b"ETRECORD_V0 but not a zip")
    elif case == "no_identifier":
        _zip({k: v for k, v in members.items() if k != "ETRECORD_V0"}, path)
    elif case == "outside":
        _zip({**members, "../../escape": b"x"}, path)
    elif case == "twice":
        with pytest.warns(UserWarning):  # zipfile warns of the duplicate name it writes
            _zip([*members.items(), ("debug_handle_map", b"{}")], path)
    elif case == "deep_json":
        _zip({**members, "exported_program": b"[" * 100_000 + b"]" * 100_000}, path)
    else:
        _zip({**members, "debug_handle_map": b"{not json"}, path)
    with pytest.raises(JobFailure) as refused:
        _load(path, tmp_path / "work")
    assert refused.value.failure.kind == "load" and "Traceback" not in refused.value.failure.message
    assert refused.value.failure.message.strip() and refused.value.failure.hint


FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=25,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FUZZ
@given(flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=8))
def test_random_damage_loads_or_fails_cleanly(small: Any, tmp_path_factory: pytest.TempPathFactory,
                                              flips: list[tuple[float, int]]) -> None:
    data = bytearray(small.etrecord.read_bytes())
    for where, xor in flips:
        data[int(where * len(data))] ^= xor
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "damaged.etrecord"
    path.write_bytes(bytes(data))
    try:
        _load(path, folder / "work")
    except JobFailure as e:
        assert e.failure.kind in ("load", "untrusted") and e.failure.message.strip()


def _etdump_run(small: Any, tmp_path: Path) -> Any:
    import torch

    from pt2_viewer.core.deploy.etdump import run_with_etdump

    return run_with_etdump(small.pte, "forward", [torch.randn(2, 8)], tmp_path, 4)


def test_an_etdump_naming_bytes_outside_its_debug_buffer_is_refused(small: Any, tmp_path: Path) -> None:
    from executorch.devtools.inspector._inspector_utils import gen_etdump_object

    from pt2_viewer.core.deploy.etdump import check_debug_data, inspect

    run = _etdump_run(small, tmp_path)
    size = run.debug_buffer.stat().st_size
    etdump = gen_etdump_object(etdump_data=run.etdump.read_bytes())
    check_debug_data(etdump, size)  # the real run is inside its buffer
    tensors = [e.debug_event.debug_entry.tensor for r in etdump.run_data for e in (r.events or [])
               if e.debug_event is not None and e.debug_event.debug_entry.tensor is not None]
    assert tensors
    tensors[0].offset = size + 1024
    with pytest.raises(JobFailure, match="does not fit its debug buffer"):
        check_debug_data(etdump, size)
    tensors[0].offset, tensors[0].sizes = 0, [-1, 4]
    with pytest.raises(JobFailure):
        check_debug_data(etdump, size)
    run.debug_buffer.write_bytes(run.debug_buffer.read_bytes()[:8])  # a truncated debug buffer
    with pytest.raises(JobFailure) as refused:
        inspect(run, None)
    assert refused.value.failure.kind == "run"
    run.etdump.write_bytes(io.BytesIO(b"\x00" * 64).getvalue())  # not an ETDump at all
    with pytest.raises(JobFailure):
        inspect(run, None)
