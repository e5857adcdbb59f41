"""`pt2-viewer profile PROGRAM TRACE.json [--json]` on the zoo CNN's real eager profile: the JSON's fields exactly,
the table of the hottest nodes, and the exit status (0 attributed, 1 a trace it cannot use, 2 bad arguments)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from tests.profile_programs import profile_of, program_path

pytestmark = pytest.mark.zoo  # the zoo's programs and their profiles (tests/profile_programs.py)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli_main(["profile", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_exactly_the_documented_fields(capsys: pytest.CaptureFixture[str]) -> None:
    program, trace = str(program_path("resnet18")), str(profile_of("resnet18") / "trace.json")
    code, out, err = _run(capsys, program, trace, "--json")
    assert code == 0 and err == ""
    result = json.loads(out)
    assert list(result) == ["program", "trace", "device", "calls", "nodes", "unattributed_us"]
    assert (result["program"], result["trace"], result["device"], result["calls"]) == (program, trace, "cpu", 1)
    assert result["unattributed_us"] == 0
    assert result["nodes"][0]["node"] == "conv2d"
    for row in result["nodes"]:
        assert list(row) == ["node", "target", "calls", "us", "mean_us"]
        assert row["calls"] == 1 and row["us"] == pytest.approx(row["mean_us"]) and row["us"] > 0


def test_the_table_lists_the_hottest_nodes_first(capsys: pytest.CaptureFixture[str]) -> None:
    program, trace = str(program_path("resnet18")), str(profile_of("resnet18") / "trace.json")
    code, out, _ = _run(capsys, program, trace)
    assert code == 0
    lines = out.splitlines()
    assert "1 run of" in lines[0] and "69 nodes" in lines[0]
    rows = lines[2:17]
    totals = [float(line.split()[2]) for line in rows]
    assert totals == sorted(totals, reverse=True)
    _, json_out, _ = _run(capsys, program, trace, "--json")
    hottest = max(json.loads(json_out)["nodes"], key=lambda n: n["us"])
    assert rows[0].split()[0] == hottest["node"]
    assert lines[17] == "... 54 more nodes (--json lists every one)"


def test_a_trace_of_another_program_exits_1_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(program_path("resnet18")), str(profile_of("nn_transformer") / "trace.json"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "not a run of" in err


def test_a_missing_trace_exits_1_and_missing_arguments_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(program_path("resnet18")), "/nonexistent/trace.json")
    assert code == 1 and "no such file" in err
    with pytest.raises(SystemExit) as raised:
        cli_main(["profile", str(program_path("resnet18"))])
    assert raised.value.code == 2


def test_trace_with_an_onnx_profile_is_a_wrong_command_line(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    program, trace = str(program_path("resnet18")), str(profile_of("resnet18") / "trace.json")
    code, out, err = _run(capsys, program, trace, "--onnx", str(tmp_path / "model.onnx"), "--trace", str(tmp_path))
    assert code == 2 and out == ""
    assert err == ("pt2-viewer profile: --trace is for a torch.compile run's profile; ONNX Runtime's profile of an "
                   ".onnx is given without it\n")


def test_the_command_imports_neither_torch_nor_qt() -> None:
    """The trace is read without torch: the command runs where only the viewer is installed."""
    program, trace = str(program_path("resnet18")), str(profile_of("resnet18") / "trace.json")
    code = ("import sys; from pt2_viewer.app.cli import main; "
            f"status = main(['profile', {program!r}, {trace!r}, '--json']); "
            "loaded = [m for m in ('torch', 'PySide6') if m in sys.modules]; "
            "print(status, loaded, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr.strip().splitlines()[-1] == "0 []"
