"""Issue 40's "Done when", scenario by scenario, per rank, against tlparse's own reading of the same logs.

Each scenario is a trace real torch wrote (tests/trace_programs.py, tests/trace_graph_programs.py): the zoo's CNN
(with its backward) and transformer; a CNN trained one step and a transformer under Inductor, a data-dependent
branch, a `print`, an `.item()`, shape and dtype recompiles; a second run on warm caches; two ranks under
`torchrun --nproc-per-node 2` with gloo, one recompiling, and two that break at one `print`, each rank also
at its own branch or dtype change. tlparse (the test extra) reads each log once per session (the ranks'
folder with `--all-ranks-html`, one report per rank); what `pt2-viewer trace --json` and the window's per-rank
lists (core/trace/outline.py) say must match it: every compile id per rank, the same restarts and failures, the
same graphs (a training compile's backward post-grad graph and code too), the same recompiles with each failed
guard in words, the same cache hits, and every graph break at the user's own `# line:` marked line."""
from __future__ import annotations

import html
import json
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from pt2_viewer.core.model.program import NodeOp
from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.graph_program import graph_artifacts, program_from_artifact
from pt2_viewer.core.trace.model import Trace
from pt2_viewer.core.trace.reader import GRAPHS, read_trace
from pt2_viewer.core.trace.summary import rank_differences, summary_text, trace_json
from tests.core.trace.test_tlparse import _ROW, TLPARSE, _artifact
from tests.trace_graph_programs import zoo_trace
from tests.trace_programs import compile_trace, ranks_breaks_trace, ranks_trace, warm_trace

SCENARIOS: dict[str, Callable[[], Path]] = {"compile": compile_trace, "warm": warm_trace, "zoo": zoo_trace,
                                            "ranks": ranks_trace, "ranks_breaks": ranks_breaks_trace}
RANKED = ("ranks", "ranks_breaks")
# (scenario, rank): rank None for a single-process trace
ROWS = [("compile", None), ("warm", None), ("zoo", None), ("ranks", 0), ("ranks", 1), ("ranks_breaks", 0),
        ("ranks_breaks", 1)]
_USER_AT = re.compile(r"Graph break in user code at (.+):(\d+)\s*$", re.M)
_DTYPE_NAMES = {"Float": "float32", "Double": "float64"}  # what the scenarios' dtype change goes between


@dataclass
class Listed:
    """What tlparse lists for one rank's log: compile ids, each one's graphs (counted), failures and restarts,
    recompiles (each one's failed guards as torch wrote them), graph breaks (the `user code at` places) and
    cache hits."""

    graphs: dict[str, Counter[str]]
    failures: set[tuple[str, str]]
    recompiles: dict[str, list[str]]
    breaks: dict[str, list[tuple[str, int]]]
    cache_hits: set[str]


def _listed(out: Path) -> Listed:
    directory = json.loads((out / "compile_directory.json").read_text(encoding="utf-8"))
    directory.pop("[-/-]", None)
    listed = Listed({}, set(), {}, {}, set())
    for cid, entry in directory.items():
        names = [_artifact(a["name"]) for a in entry["artifacts"]]
        listed.graphs[cid] = Counter(n for n in names if n in GRAPHS)
        if any(n.endswith("_cache_hit") for n in names):
            listed.cache_hits.add(cid)
        for artifact in entry["artifacts"]:
            payload = (out / artifact["url"]).read_text(encoding="utf-8") if artifact.get("url") else ""
            if _artifact(artifact["name"]) == "recompile_reasons":
                listed.recompiles[cid] = _guards(payload)
            elif _artifact(artifact["name"]) == "dynamo_graph_break_reason":
                at = _USER_AT.search(payload)
                assert at, payload[:200]
                listed.breaks.setdefault(cid, []).append((at.group(1), int(at.group(2))))
    rows = _ROW.findall((out / "failures_and_restarts.html").read_text(encoding="utf-8"))
    listed.failures = {(cid, html.unescape(kind)) for cid, kind in rows}
    return listed


def _guards(payload: str) -> list[str]:
    """tlparse writes one failed guard as its line, several as a JSON list."""
    try:
        value = json.loads(payload)
    except ValueError:
        return [line for line in payload.splitlines() if line.strip()]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _tlparse(path: Path, out: Path, *flags: str) -> None:
    if not Path(TLPARSE).exists():
        pytest.fail("tlparse is not installed: pip install tlparse (the test extra)")
    subprocess.run([TLPARSE, str(path), "-o", str(out), "--no-browser", "--overwrite", *flags], check=True,
                   capture_output=True, timeout=300)


@dataclass
class Scenario:
    trace: Trace
    json: dict[str, list[dict[str, object]]]
    tlparse: dict[int | None, Listed]
    tlparse_report: str  # the multi-rank index.html for a ranked trace, else ""


@pytest.fixture(scope="session")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    found = {}
    for name, build in SCENARIOS.items():
        folder, out = build(), tmp_path_factory.mktemp(f"tlparse-{name}")
        trace = read_trace(folder)
        if name in RANKED:
            _tlparse(folder, out, "--all-ranks-html")
            per_rank: dict[int | None, Listed] = {int(d.name.removeprefix("rank_")): _listed(d)
                                                  for d in out.glob("rank_*")}
            report = (out / "index.html").read_text(encoding="utf-8")
        else:
            [log] = trace.logs
            _tlparse(log, out)
            per_rank, report = {None: _listed(out)}, ""
        found[name] = Scenario(trace, trace_json(trace), per_rank, report)  # type: ignore[arg-type]
    return found


def _ours(scenario: Scenario, rank: int | None) -> list[dict[str, object]]:
    return [c for c in scenario.json["compiles"] if c["rank"] == rank]


@pytest.mark.parametrize(("name", "rank"), ROWS)
def test_every_compile_id_tlparse_lists_per_rank_with_its_restarts_failures_and_graphs(scenarios, name, rank):
    scenario = scenarios[name]
    theirs = scenario.tlparse[rank]
    ours = {c["id"]: c for c in _ours(scenario, rank)}
    assert set(ours) == set(theirs.graphs)
    # tlparse lists a restart under the attempt that followed it ([4/0_1]); the attempt that restarted says so
    restarted = [c.id for c in scenario.trace.compiles if c.rank == rank and c.status == "restarted"]
    assert {cid for cid, kind in theirs.failures if kind == "RestartAnalysis"} == \
        {str(replace(cid, attempt=(cid.attempt or 0) + 1)) for cid in restarted}
    assert {cid for cid, kind in theirs.failures if kind != "RestartAnalysis"} == \
        {cid for cid, c in ours.items() if c["status"] == "failed"}
    for compile_ in (c for c in scenario.trace.compiles if c.rank == rank):
        cid = str(compile_.id)
        counted = Counter(a.name for a in compile_.artifacts if a.name in GRAPHS)
        assert counted == theirs.graphs[cid], cid  # a training compile: two post-grad graphs and two codes
        assert ours[cid]["graphs"] == [GRAPHS[kind] for kind in GRAPHS if kind in counted]


@pytest.mark.parametrize(("name", "rank"), ROWS)
def test_every_graph_tlparse_lists_opens_on_its_rank(scenarios, name, rank):
    scenario = scenarios[name]
    for compile_ in (c for c in scenario.trace.compiles if c.rank == rank):
        listed = scenario.tlparse[rank].graphs[str(compile_.id)]
        opened = Counter()
        for kind, index in graph_artifacts(compile_):
            graph = program_from_artifact(scenario.trace, str(compile_.id), kind, index, rank).graph
            assert len(graph.nodes) > 1 and graph.nodes[-1].op is NodeOp.OUTPUT, (compile_.id, kind, index)
            opened[kind] += 1
        assert opened == listed - Counter(inductor_output_code=listed["inductor_output_code"]), compile_.id


def test_a_backward_pass_lists_its_graphs_as_tlparse_does(scenarios):
    for name in ("compile", "warm", "zoo"):
        trained = [cid for cid, graphs in scenarios[name].tlparse[None].graphs.items() if graphs["aot_backward_graph"]]
        assert trained == ["[0/0]"], name  # the CNN's training step, the first compile of each
        assert "aot_backward" in next(c for c in _ours(scenarios[name], None) if c["id"] == "[0/0]")["graphs"]
    inductor = scenarios["compile"].tlparse[None].graphs["[0/0]"]
    assert inductor["inductor_post_grad_graph"] == inductor["inductor_output_code"] == 2  # forward and backward


@pytest.mark.parametrize(("name", "rank"), ROWS)
def test_the_same_recompiles_each_failed_guard_in_words(scenarios, name, rank):
    scenario = scenarios[name]
    theirs = scenario.tlparse[rank].recompiles
    ours = {str(r.compile_id): r for r in outline.recompiles_of(scenario.trace, rank)}
    assert set(ours) == set(theirs)
    assert {r["compile_id"] for r in scenario.json["recompiles"] if r["rank"] == rank} == set(theirs)
    for cid, guards in theirs.items():
        assert len(ours[cid].reasons) == len(guards), cid
        for said, guard in zip(ours[cid].reasons, guards, strict=True):
            assert _in_words(guard) == said, (cid, guard, said)


def _in_words(guard: str) -> str:
    """What the reason must say for the guards these scenarios fail, from tlparse's text of it."""
    owner, _, failure = guard.partition(": ")
    if size := re.fullmatch(r"tensor '(\w+)' size mismatch at index (\d+)\. expected (\d+), actual (\d+)", failure):
        name, index, before, now = size.groups()
        return f"`{name}.size({index})` was {before} when compiled for [{owner}], now {now}"
    dtype = re.fullmatch(r"tensor '(\w+)' dtype mismatch\. expected (\w+), actual (\w+)", failure)
    assert dtype, f"a guard these scenarios do not fail: {guard}"
    name, before, now = dtype.groups()
    return f"`{name}.dtype` was {_DTYPE_NAMES[before]} when compiled for [{owner}], now {_DTYPE_NAMES[now]}"


def test_the_recompiles_are_a_shape_change_a_dtype_change_and_one_rank_only(scenarios):
    compiled = scenarios["compile"].tlparse[None].recompiles
    guards = [g for gs in compiled.values() for g in gs]
    assert any("size mismatch" in g for g in guards) and any("dtype mismatch" in g for g in guards), guards
    assert set(scenarios["ranks"].tlparse[1].recompiles) == {"[0/1]"} and not scenarios["ranks"].tlparse[0].recompiles


@pytest.mark.parametrize(("name", "rank"), ROWS)
def test_cache_hits_are_marked_where_tlparse_lists_them(scenarios, name, rank):
    scenario = scenarios[name]
    assert {c["id"] for c in _ours(scenario, rank) if c["cache_hit"]} == scenario.tlparse[rank].cache_hits
    hits = bool(scenario.tlparse[rank].cache_hits)
    assert hits == (name == "warm")  # the warm run replays the cold run's graphs; every other trace is cold
    assert ("from the cache" in outline.headline(scenario.trace, rank)) == hits


@pytest.mark.parametrize(("name", "rank"), ROWS)
def test_every_graph_break_once_at_the_users_own_line(scenarios, name, rank):
    scenario = scenarios[name]
    theirs = scenario.tlparse[rank].breaks
    ours = outline.breaks_of(scenario.trace, rank)
    assert {cid for b in ours for cid in b.compile_ids} == set(theirs)
    assert len({(b.file, b.line) for b in ours}) == len(ours)  # once each
    assert {(b.file, b.line) for b in ours} == {place for places in theirs.values() for place in places}
    for entry in ours:
        source = Path(entry.file)
        assert source.parent == scenario.trace.path.parent and source.suffix == ".py", entry.file  # the script's
        assert "# line: " in source.read_text(encoding="utf-8").splitlines()[entry.line - 1], entry
        assert all(entry.compile_ids.count(cid) == 1 for cid in entry.compile_ids), entry.compile_ids
    if name == "compile":
        marked = [Path(b.file).read_text(encoding="utf-8").splitlines()[b.line - 1].split("# line: ")[1] for b in ours]
        assert sorted(marked) == ["branch", "item", "print"]


def test_ranks_differ_where_tlparse_warns_they_diverge(scenarios):
    ranks = scenarios["ranks"]
    assert sorted(ranks.tlparse) == [0, 1] == ranks.trace.ranks
    assert "Diverging Compilation IDs detected across ranks" in ranks.tlparse_report
    only_1 = set(ranks.tlparse[1].graphs) - set(ranks.tlparse[0].graphs)
    assert only_1 == {"[0/1]"} and not set(ranks.tlparse[0].graphs) - set(ranks.tlparse[1].graphs)
    assert rank_differences(ranks.trace) == ["[0/1] on rank 1 only; not on rank 0"]


def test_ranks_that_break_at_one_line_list_it_once_with_each_ranks_compiles(scenarios):
    ranks = scenarios["ranks_breaks"]
    assert set(ranks.tlparse[0].breaks) == {"[0/0]", "[3/0]"} and set(ranks.tlparse[1].breaks) == {"[1/0]"}
    assert set(ranks.tlparse[1].recompiles) == {"[0/1]"} and not ranks.tlparse[0].recompiles  # the dtype: rank 1
    [printing] = [b for b in ranks.trace.graph_breaks if b.ranks == [0, 1]]
    assert printing.hits == [(0, "[0/0]"), (1, "[1/0]")]
    assert [b.compile_ids for b in outline.breaks_of(ranks.trace, 1)] == [["[1/0]"]]  # rank 1's own compile
    rank_1_first = next(c for c in ranks.trace.compiles if c.rank == 1 and str(c.id) == "[0/0]")  # its `shapes`
    assert "Graph break" not in outline.detail(ranks.trace, rank_1_first)
    assert "Graph break at ranks_breaks_script.py:" in outline.detail(
        ranks.trace, next(c for c in ranks.trace.compiles if c.rank == 0 and str(c.id) == "[0/0]"))
    [said] = [b for b in ranks.json["graph_breaks"] if b["line"] == printing.line]
    assert said["compile_ids"] == ["[0/0]", "[1/0]"]
    assert "(rank 0 [0/0], rank 1 [1/0])" in summary_text(ranks.trace)
    assert "Diverging Compilation IDs detected across ranks" in ranks.tlparse_report
    assert "[0/1] on rank 1 only; not on rank 0" in rank_differences(ranks.trace)
