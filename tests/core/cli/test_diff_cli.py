"""`pt2-viewer diff A.pt2 B.pt2 [--program P] [--json] [--markdown] [--fail-on KINDS]` on real pairs: the JSON
format, the exit status of `--fail-on` on each pair, and one line for bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.app.cli import main as cli_main
from tests.diff_programs import diff_program_path

KINDS = ("ops", "dtypes", "shapes", "dynamic", "signature")
# pair -> the kinds of change it holds (besides `any`)
PAIRS = {
    ("resnet", "resnet_block_changed"): {"ops"},
    ("resnet", "resnet_bf16"): {"dtypes"},
    ("resnet_static", "resnet"): {"dynamic"},
    ("gpt2", "gpt2_core"): {"ops"},
    ("resnet", "resnet"): set(),
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli_main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("pair", list(PAIRS), ids=lambda p: f"{p[0]}-{p[1]}")
def test_fail_on_exits_1_for_the_kinds_a_pair_holds_and_0_for_the_others(pair: tuple[str, str],
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (str(diff_program_path(n)) for n in pair)
    held = PAIRS[pair]
    for kind in KINDS:
        code, _, _ = _run(capsys, a, b, "--fail-on", kind)
        assert code == (1 if kind in held else 0), kind
    assert _run(capsys, a, b, "--fail-on", "any")[0] == (1 if held else 0)
    assert _run(capsys, a, b, "--fail-on", ",".join(k for k in KINDS if k not in held))[0] == 0
    assert _run(capsys, a, b)[0] == 0  # no --fail-on: never fails


def test_json_has_the_issue_s_format(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(diff_program_path("resnet")), str(diff_program_path("resnet_block_changed"))
    code, out, _ = _run(capsys, a, b, "--json")
    doc = json.loads(out)
    assert code == 0
    assert {"a", "b", "summary", "modules", "nodes", "signature", "range_constraints"} <= set(doc)
    assert (doc["a"], doc["b"]) == (a, b)
    assert doc["summary"] == {"added": 0, "removed": 0, "changed": 2}
    assert {"path": "layer2.1", "added": 0, "removed": 0, "changed": 2} in doc["modules"]
    assert all(set(n) == {"a", "b", "kind", "what", "module"} for n in doc["nodes"])
    assert [(n["kind"], n["what"], n["module"]) for n in doc["nodes"]] == [("changed", ["op"], "layer2.1.relu")] * 2
    assert doc["signature"] == [] and doc["range_constraints"] == []


def test_json_names_added_and_removed_nodes_with_a_null_side(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_run(capsys, str(diff_program_path("gpt2")), str(diff_program_path("gpt2_core")), "--json")[1])
    added = [n for n in doc["nodes"] if n["kind"] == "added"]
    removed = [n for n in doc["nodes"] if n["kind"] == "removed"]
    assert added and all(n["a"] is None and n["b"] for n in added)
    assert removed and all(n["b"] is None and n["a"] for n in removed)
    assert {k for n in doc["nodes"] for k in n["what"]} <= {"op", "dtype", "shape", "args", "module"}
    assert doc["summary"]["added"] == len(added)


def test_static_against_dynamic_lists_the_new_range(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_run(capsys, str(diff_program_path("resnet_static")), str(diff_program_path("resnet")),
                          "--json")[1])
    assert [(r["kind"], r["a"], r["b_range"]) for r in doc["range_constraints"]] == [("added", None, [0, None])]
    assert doc["kinds"] == ["dynamic", "any"]


def test_plain_text_prints_the_summary_and_module_roll_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(diff_program_path("gpt2")), str(diff_program_path("gpt2_core")))
    lines = out.splitlines()
    assert code == 0 and "added" in lines[0] and "removed" in lines[0] and "changed" in lines[0]
    attn = next(line for line in lines if line.strip().startswith("transformer.h.0.attn:"))
    assert attn.split(":", 1)[1].strip().startswith("+")  # "+28 ops, 9 op changes, ..."


def test_markdown_is_a_table_for_a_pull_request(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(diff_program_path("resnet")), str(diff_program_path("resnet_block_changed")),
                        "--markdown")
    assert code == 0
    assert "| module | added | removed | changed | what |" in out
    assert "| `layer2.1.relu` | 0 | 0 | 2 | 2 op changes |" in out.replace("&nbsp;", "")


def test_bad_input_exits_2_with_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = str(diff_program_path("resnet"))
    not_zip = tmp_path / "notes.pt2"
    not_zip.write_text("not an archive")
    missing = tmp_path / "missing.pt2"
    for args, names in (([good, str(missing)], str(missing)), ([str(not_zip), good], str(not_zip)),
                        ([good, good, "--program", "nope"], good)):
        code, out, err = _run(capsys, *args)
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1 and names in err and "Traceback" not in err
    code, _, err = _run(capsys, good, good, "--fail-on", "ops,colours")
    assert code == 2 and "colours" in err and len(err.strip().splitlines()) == 1


def test_the_command_runs_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; from pt2_viewer.app.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "diff", str(diff_program_path("resnet")),
                           str(diff_program_path("resnet_bf16")), "--fail-on", "dtypes"],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "dtype" in done.stdout


def test_help_says_the_exit_status_and_why_it_differs_from_the_other_commands(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli_main(["diff", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "1 it holds a change of a kind --fail-on names" in text
    assert "2 bad input: a missing or damaged file" in text and "Unlike the other commands" in text
