"""`pt2-viewer trace DIR|LOG [--json]`: the JSON issue 40 gives, exit 0; 1 for what it cannot read or a damaged log
(what came before is printed); 2 for bad arguments."""
from __future__ import annotations

import json
import re

import pytest

from pt2_viewer.app.cli import main
from tests.trace_programs import compile_trace, marked_line, ranks_trace


def test_json_lists_compiles_graph_breaks_and_recompiles(capsys):
    trace = compile_trace()
    assert main(["trace", str(trace), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"compiles", "graph_breaks", "recompiles"}
    compile_ = out["compiles"][0]
    assert set(compile_) == {"id", "rank", "frame", "status", "seconds", "graphs", "cache_hit"}
    assert set(compile_["frame"]) == {"function", "file", "line"} and compile_["rank"] is None
    assert re.fullmatch(r"\[\d+/\d+(_\d+)?\]", compile_["id"])
    script = trace.parent / "compile_script.py"
    breaks = {(b["file"], b["line"]): b for b in out["graph_breaks"]}
    item = breaks[(str(script), marked_line(script, "item"))]
    assert set(item) == {"compile_ids", "file", "line", "reason", "hints", "code", "fix"}
    assert "capture_scalar_outputs" in item["fix"] and item["compile_ids"]
    assert all(set(r) == {"compile_id", "rank", "reasons"} and r["reasons"] for r in out["recompiles"])


def test_ranks_and_text(capsys):
    assert main(["trace", str(ranks_trace())]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].endswith(": 3 compiles, 0 graph breaks, 1 recompile, ranks 0, 1")
    assert "ranks 0, 1" in text and "rank 1 [0/1]: `x.size(0)` was 4 when compiled for [0/0], now 5" in text
    assert "Ranks differ:\n  [0/1] on rank 1 only; not on rank 0\n" in text


def test_a_damaged_log_prints_what_came_before_and_exits_1(tmp_path, capsys):
    log = next(compile_trace().glob("*.log"))
    cut = tmp_path / log.name
    cut.write_bytes(log.read_bytes()[:-5000])
    assert main(["trace", str(cut), "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["compiles"]
    assert len(captured.err.strip().splitlines()) == 1
    assert "damaged" in captured.err or "cut short" in captured.err


def test_what_it_cannot_read_is_one_line_and_exit_1(tmp_path, capsys):
    (tmp_path / "x.log").write_text("not a trace\n", encoding="utf-8")
    assert main(["trace", str(tmp_path / "x.log")]) == 1
    assert main(["trace", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("pt2-viewer: ") for line in err)


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as raised:
        main(["trace"])
    assert raised.value.code == 2
