"""`pt2-viewer profile MODEL.onnx ONNX_RUNTIME_PROFILE.json [--json]`: ONNX Runtime's own profile of the real export of
the BatchNorm CNN (tests/onnx_programs.py), recorded by ONNX Runtime with profiling on (tests/onnx_profiles.py),
read by the one trace importer and attributed to the model's nodes by name: each node's calls and time equal the
profile's own `_kernel_time` events (read with json alone) within 1%; the names ONNX Runtime's optimizer gives what
it fuses are followed back; another model's profile and hostile files are one line; `--onnx` puts the profile on the
`.pt2` the model was exported from."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pt2_viewer.app.cli import main as cli_main
from pt2_viewer.core.formats import registry
from pt2_viewer.core.profile import trace_file
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.load import profile_attribution
from tests.core.profile.test_fuzz_trace import VALUES
from tests.onnx_programs import CNN, RESNET, TRANSFORMER, source_program

pytest.importorskip("onnxruntime", reason="the profiles are ONNX Runtime's own (pip install pt2-viewer[onnx])")

from tests.onnx_profiles import exported, kernel_times, ort_profile  # noqa: E402 (needs numpy, which onnxruntime brings)

RUNS = 3


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ort_profiles")
    return {"plain": ort_profile(exported(CNN), folder, "ORT_DISABLE_ALL", RUNS),
            "optimized": ort_profile(exported(CNN), folder, "ORT_ENABLE_ALL", RUNS),
            "transformer": ort_profile(exported(TRANSFORMER), folder, "ORT_DISABLE_ALL", 1)}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli_main(["profile", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_each_node_has_the_profiles_own_kernel_time(profiles: dict[str, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    model, profile = exported(CNN), profiles["plain"]
    code, out, err = _run(capsys, str(model), str(profile), "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert list(result) == ["program", "trace", "device", "calls", "nodes", "unattributed_us"]
    assert (result["program"], result["trace"], result["device"], result["calls"]) == (str(model), str(profile),
                                                                                       "cpu", RUNS)
    truth = kernel_times(profile)
    program = registry.read(model).program()
    file_name = {n.name: n.metadata["ONNX node"] for n in program.graph.nodes if "ONNX node" in n.metadata}
    assert {file_name[row["node"]] for row in result["nodes"]} == set(truth)  # every node, each once
    for row in result["nodes"]:
        calls, us = truth[file_name[row["node"]]]
        assert row["calls"] == calls == RUNS
        assert row["us"] == pytest.approx(us, rel=0.01) and row["mean_us"] == pytest.approx(us / calls, rel=0.01)
    assert result["nodes"][0] == {**result["nodes"][0], "node": "node_Conv_17", "target": "onnx.Conv"}
    assert result["unattributed_us"] == 0


def test_fence_events_are_not_time(profiles: dict[str, Path], tmp_path: Path) -> None:
    """ONNX Runtime before 1.17 wrote `NAME_fence_before` and `NAME_fence_after` around each `NAME_kernel_time` (this
    one writes none): the same profile with them added attributes the same times."""
    events = json.loads(profiles["plain"].read_text(encoding="utf-8"))
    fenced = []
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"].removesuffix("_kernel_time")
            fenced += [{**e, "name": f"{name}_fence_before", "dur": 40}, e, {**e, "name": f"{name}_fence_after"}]
        else:
            fenced.append(e)
    path = tmp_path / "fenced.json"
    path.write_text(json.dumps(fenced), encoding="utf-8")
    archive = registry.read(exported(CNN))
    plain = profile_attribution(archive.program(), str(profiles["plain"]), archive=archive)
    with_fences = profile_attribution(archive.program(), str(path), archive=archive)
    assert [(n.node, n.calls, n.us) for n in with_fences.nodes] == [(n.node, n.calls, n.us) for n in plain.nodes]
    assert with_fences.unattributed_us == plain.unattributed_us == 0


def test_the_optimizers_fused_nodes_are_followed_back_and_its_own_are_unattributed(
        profiles: dict[str, Path]) -> None:
    """ONNX Runtime's default optimization runs each Conv with its Relu as one NCHWc Conv named for the Relu's
    output (`relu_nchwc`), and adds layout nodes of its own (`ReorderOutput`)."""
    profile = profiles["optimized"]
    truth = kernel_times(profile)
    assert "relu_nchwc" in truth and "node_Conv_17" not in truth
    archive = registry.read(exported(CNN))
    result = profile_attribution(archive.program(), str(profile), archive=archive)
    nodes = {n.node: n for n in result.nodes}
    fused = truth["relu_nchwc"][1]
    assert nodes["node_Conv_17"].us == pytest.approx(fused / 2) and nodes["node_relu"].us == pytest.approx(fused / 2)
    assert nodes["node_Conv_17"].calls == nodes["node_relu"].calls == RUNS
    assert [e.shared_by for e in nodes["node_relu"].events] == [2] * RUNS
    made = sum(us for name, (_, us) in truth.items() if name.startswith("ReorderOutput"))
    assert made > 0 and result.unattributed_us == pytest.approx(made)
    assert sum(n.us for n in result.nodes) + result.unattributed_us == pytest.approx(
        sum(us for _, us in truth.values()), rel=0.01)
    assert any("relu_nchwc" in note for note in result.notes)
    assert any("ReorderOutput" in note and "ORT_DISABLE_ALL" in note for note in result.notes)


def test_a_torchscript_resnets_fused_blocks_share_their_time(tmp_path: Path) -> None:
    """A `dynamo=False` ResNet (names `/layer1/layer1.0/conv1/Conv`, the export most ONNX Runtime users profile) under
    ONNX Runtime's default optimization: each block's first Conv runs with its Relu (`.../relu/Relu_output_0_nchwc`),
    its second with the residual Add and the Relu after it (`.../conv2/Conv_output_0_nchwc`; the Add and the Relu have
    no event): each event is shared by the nodes it ran, and every node of the model is timed."""
    profile = ort_profile(exported(RESNET), tmp_path, "ORT_ENABLE_ALL", 2)
    truth = kernel_times(profile)
    archive = registry.read(exported(RESNET))
    result = profile_attribution(archive.program(), str(profile), archive=archive)
    by_file = {n.metadata["ONNX node"]: n.name for n in archive.program().graph.nodes if "ONNX node" in n.metadata}
    nodes = {n.node: n for n in result.nodes}

    def us(name: str) -> float:
        return nodes[by_file[name]].us

    block = "/layer1/layer1.0"
    first = truth[f"{block}/relu/Relu_output_0_nchwc"][1]
    assert us(f"{block}/conv1/Conv") == us(f"{block}/relu/Relu") == pytest.approx(first / 2)
    second = truth[f"{block}/conv2/Conv_output_0_nchwc"][1]
    assert f"{block}/Add" not in truth and f"{block}/relu_1/Relu" not in truth
    for name in (f"{block}/conv2/Conv", f"{block}/Add", f"{block}/relu_1/Relu"):
        assert us(name) == pytest.approx(second / 3)
    assert all(n.calls == 2 for n in result.nodes)  # every node of the model, each run
    assert sum(n.us for n in result.nodes) + result.unattributed_us == pytest.approx(
        sum(us for _, us in truth.values()), rel=0.01)


def test_another_models_profile_is_refused_in_one_line(profiles: dict[str, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(exported(CNN)), str(profiles["transformer"]))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "not a profile of" in err and "node names are no node of the model" in err
    code, _, err = _run(capsys, str(exported(TRANSFORMER)), str(profiles["plain"]))
    assert code == 1 and "not a profile of" in err


def test_a_torch_profiler_trace_on_an_onnx_and_an_onnx_runtime_profile_on_a_pt2_say_what_to_give(
        profiles: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    torch_trace = tmp_path / "trace.json"
    torch_trace.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::conv2d",
                                                        "ts": 1, "dur": 5, "pid": 1, "tid": 1}]}), encoding="utf-8")
    code, _, err = _run(capsys, str(exported(CNN)), str(torch_trace))
    assert code == 1 and err.count("\n") == 1 and "enable_profiling = True" in err
    code, _, err = _run(capsys, str(source_program(CNN)), str(profiles["plain"]))
    assert code == 1 and err.count("\n") == 1 and "a profile ONNX Runtime wrote" in err and "--onnx" in err


def test_onnx_puts_the_profile_on_the_source_program_through_the_links(
        profiles: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    model, source, profile = exported(CNN), source_program(CNN), profiles["plain"]
    code, out, _ = _run(capsys, str(source), str(profile), "--onnx", str(model), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["program"] == str(source) and result["calls"] == RUNS
    on_source = {row["node"]: row for row in result["nodes"]}
    on_onnx = {row["node"]: row for row in json.loads(_run(capsys, str(model), str(profile), "--json")[1])["nodes"]}
    assert on_source["linear"]["us"] == on_onnx["node_linear"]["us"]  # Gemm <- linear
    assert on_source["relu_1"]["us"] == on_onnx["node_relu_1"]["us"]
    # the Conv the exporter fused its BatchNorm into links to the BatchNorm, as the ONNX tab draws it
    assert on_source["batch_norm"]["us"] == on_onnx["node_Conv_17"]["us"]
    assert sum(r["us"] for r in on_source.values()) == pytest.approx(sum(r["us"] for r in on_onnx.values()))
    code, _, err = _run(capsys, str(source), str(profiles["transformer"]), "--onnx", str(exported(TRANSFORMER)))
    assert code == 1 and err.count("\n") == 1 and "not exported from this program" in err


def _bare(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "deep_nesting": lambda d: _bare(d, "deep.json", "[" * 100_000 + "]" * 100_000),
    "name_not_a_string": lambda d: _bare(d, "types.json", '[{"cat": "Node", "ph": "X", "name": 7}]'),
    "dur_a_string": lambda d: _bare(d, "dur.json", '[{"cat": "Node", "ph": "X", "name": "a_kernel_time", '
                                                   '"dur": "long"}]'),
    "events_not_objects": lambda d: _bare(d, "strings.json", '["rm -rf /", 1, null]'),
    "no_node_events": lambda d: _bare(d, "session.json", '[{"cat": "Session", "ph": "X", "name": "model_run"}]'),
    "huge_unknown_names": lambda d: _bare(d, "names.json", json.dumps(
        [{"cat": "Node", "ph": "X", "name": "x" * 5_000_000 + f"{i}_kernel_time", "dur": 1,
          "args": {"op_name": ["Conv"], "provider": {"a": 1}}} for i in range(3)])),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_profile_is_one_short_line(case: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = HOSTILE[case](tmp_path)
    code, out, err = _run(capsys, str(exported(CNN)), str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("pt2-viewer: ") and "Traceback" not in err
    assert len(err) < 2000  # a 5 MB node name is not echoed whole


def test_a_profile_over_the_limit_is_refused_unread(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(trace_file, "MAX_TRACE_BYTES", 1 << 20)
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate((1 << 20) + 1)
    code, _, err = _run(capsys, str(exported(CNN)), str(path))
    assert code == 1 and "over the" in err and err.count("\n") == 1


@settings(derandomize=True, database=None, deadline=None, max_examples=80,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_field_of_a_real_profile_replaced_or_removed_is_read_or_refused_in_one_line(
        profiles: dict[str, Path], tmp_path: Path, data: st.DataObject) -> None:
    events: list[dict[str, Any]] = json.loads(profiles["optimized"].read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        event = events[data.draw(st.integers(0, len(events) - 1))]
        target = event["args"] if data.draw(st.booleans()) and isinstance(event.get("args"), dict) else event
        if not target:  # a Session event's empty args
            continue
        key = data.draw(st.sampled_from(sorted(target)))
        if data.draw(st.booleans()):
            del target[key]
        else:
            target[key] = data.draw(VALUES)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    archive = registry.read(exported(CNN))
    try:
        profile_attribution(archive.program(), str(path), archive=archive)
    except ProfileError as e:
        assert "\n" not in str(e) and str(e)
