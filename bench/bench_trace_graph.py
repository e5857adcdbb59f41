"""How fast a ~10,000-node graph of a torch.compile trace opens, against a `.pt2` of that size, in the same run
(issue 40: "a 10k-node compiled graph opens as fast as a `.pt2` of that size").

Why: a compiled graph is read from the Python text torch logged (core/trace/graph_program.py: `ast`, annotations,
module grouping from weight names and source lines), a `.pt2` from its JSON; the graph view indexes both the same
way. This bench times, best of `--repeat`, in this process:

  1. the trace: `read_trace` of the folder + `program_from_artifact` of Dynamo's graph;
  2. the `.pt2`: `read_archive` (the normal reader, a first open: no parsed-program cache);

each followed by what the graph view builds before its first layout: the index (users, hubs, the module tree) and
the scene model (folding, chunks, counts). Then the window's whole path, what the user waits for after a
double-click or File > Open: the graph's archive as app/trace/opening.py builds it (core/trace/outline.py
`graph_archive`) against `read_archive`, each followed by the first view's document model
(core/graph/document.py `DocumentModel`, weights as rows, its first level's scene), as app/graph/loader.py's
`first_view_model` builds it (less the layout cache). It prints both, their node counts and the ratios trace /
`.pt2` (target: about 1x or less), in seconds and in this process's CPU seconds (steadier on a shared machine).
It asserts nothing about time: machines differ.

The graph is made on the spot: a generated stack of `--layers` Linear+ReLU layers compiled with
`torch.compile(backend='eager')` under `TORCH_TRACE` (tests/trace_graph_programs.py `big_graph_trace`, ~5 nodes
per layer), cached per torch version; the `.pt2` is tests/big_programs.py's ~10,000-node program (bench/big_model.py,
135 layers), cached per user. Building either takes minutes the first time.

Run: `.venv/bin/python bench/bench_trace_graph.py [--layers 2000] [--repeat 3]`
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pt2_viewer.core.graph.document import DocumentModel  # noqa: E402
from pt2_viewer.core.graph.folding import weight_targets  # noqa: E402
from pt2_viewer.core.graph.index import GraphIndex  # noqa: E402
from pt2_viewer.core.graph.scene import SceneModel  # noqa: E402
from pt2_viewer.core.model.program import Archive, Program  # noqa: E402
from pt2_viewer.core.pt2.reader import read_archive  # noqa: E402
from pt2_viewer.core.trace import outline  # noqa: E402
from pt2_viewer.core.trace.graph_program import program_from_artifact  # noqa: E402
from pt2_viewer.core.trace.model import Trace  # noqa: E402
from pt2_viewer.core.trace.reader import read_trace  # noqa: E402


def indexed(program: Program) -> Program:
    """What the graph view builds from a program before its first layout (core/graph/document.py's level)."""
    index = GraphIndex(program.graph, targets=weight_targets(program))
    _ = index.users, index.hubs
    SceneModel(program.graph, index)
    return program


def open_trace_graph(trace: Trace) -> Program:
    """A graph of a trace already read (the trace view shows its compiles; a click opens the graph)."""
    compile_ = next(c for c in trace.compiles if c.artifact("dynamo_output_graph"))
    return indexed(program_from_artifact(trace, str(compile_.id), "dynamo_output_graph"))


def open_pt2(path: Path) -> Program:
    return indexed(read_archive(path).programs[0])


def first_view(archive: Archive) -> Program:
    """The first view's document model of the archive's program (app/graph/loader.py `first_view_model`)."""
    model = DocumentModel(archive, archive.programs[0])
    model.set_weights_as_nodes(False)
    _ = model.level.scene
    return model.program


def window_trace_graph(trace: Trace) -> Program:
    """What app/trace/opening.py builds in its thread when a graph of the trace's tab is double-clicked."""
    compile_ = next(c for c in trace.compiles if c.artifact("dynamo_output_graph"))
    entry = next(g for g in outline.graphs(compile_) if g.kind == "dynamo")
    return first_view(outline.graph_archive(trace, compile_, entry))


def best_of(repeat: int, fn: Callable[[], Program]) -> tuple[float, float, int]:
    """The best time and best CPU time of `repeat` calls and the program's node count; no program outlives its own
    call, so each is timed over the same heap (a program kept alive makes the collector's every pass longer)."""
    times, cpu, nodes = [], [], 0
    for _ in range(repeat):
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        nodes = fn().node_count
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return min(times), min(cpu), nodes


def built(label: str, make: Callable[[], Path]) -> Path:
    started = time.perf_counter()
    path = make()
    if time.perf_counter() - started > 1:
        print(f"built {label} in {time.perf_counter() - started:.0f} s: {path}", flush=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2000, help="layers of the compiled stack (~5 nodes each)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from tests.big_programs import big_program
    from tests.trace_graph_programs import big_graph_trace

    folder = built("the trace", lambda: big_graph_trace(args.layers))
    archive = built("the .pt2", big_program)
    trace = read_trace(folder)
    for warm_up in (lambda: open_trace_graph(trace), lambda: open_pt2(archive), lambda: window_trace_graph(trace),
                    lambda: first_view(read_archive(archive))):
        warm_up()  # imports, first-use caches
    read_s = min(_timed(lambda: read_trace(folder)) for _ in range(args.repeat))
    rows = [("trace: Dynamo graph, open+index", best_of(args.repeat, lambda: open_trace_graph(trace))),
            (".pt2: read_archive, open+index", best_of(args.repeat, lambda: open_pt2(archive))),
            ("window: graph_archive+first view", best_of(args.repeat, lambda: window_trace_graph(trace))),
            ("window: read_archive+first view", best_of(args.repeat, lambda: first_view(read_archive(archive))))]
    print(f"{'':<34}{'nodes':>8}{'seconds':>10}{'CPU s':>8}")
    print(f"{'trace: read_trace (the whole log)':<34}{'':>8}{read_s:>10.3f}")
    for label, (seconds, cpu, nodes) in rows:
        print(f"{label:<34}{nodes:>8}{seconds:>10.3f}{cpu:>8.3f}")
    (trace_s, trace_cpu, traced), (pt2_s, pt2_cpu, exported) = rows[0][1], rows[1][1]
    (window_s, window_cpu, _), (window_pt2_s, window_pt2_cpu, _) = rows[2][1], rows[3][1]
    per_node = (trace_s / traced) / (pt2_s / exported)
    print(f"ratio graph / .pt2: {trace_s / pt2_s:.2f}x (CPU {trace_cpu / pt2_cpu:.2f}x; {per_node:.2f}x per node); "
          f"with the log read too: {(read_s + trace_s) / pt2_s:.2f}x")
    print(f"ratio in the window's path: {window_s / window_pt2_s:.2f}x (CPU {window_cpu / window_pt2_cpu:.2f}x)")


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
