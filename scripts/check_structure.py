"""Two structural checks of `make check` (scripts/check.sh): no import cycle, and no module over 550 lines.

Import cycles: import-linter's layer contracts see only imports between packages, so a cycle between two modules of one
package (or hidden behind a layer's "|") passes them. This lists every cycle among pt2_viewer's modules, inside
packages too, from grimp's import graph (the graph import-linter is built on). Imports under `if TYPE_CHECKING:`
COUNT: an annotation-only edge back is no runtime cycle, but it shows the two modules know each other, which is the
wide interface the cycle rule exists to stop; such edges are marked "(type-checking)". Function-local imports count
too (grimp sees every import statement), so a deferred import cannot hide a cycle. One annotation-only edge is let
through, by name and with its reason (`ANNOTATION_EDGES`); it counts again the moment it runs.

Run from a tree where `pt2_viewer` imports as the installed package does (scripts/check.sh makes one). Exit status 1
when a cycle or an oversized module is found, and each is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp

PACKAGE = "pt2_viewer"
MAX_LINES = 550
SIZED = ("core", "app")  # the folders whose modules the size rule covers
# Imports under TYPE_CHECKING that may close a circle, each with why: not for convenience, only where the base of a
# class hierarchy must name a subclass in its own contract.
ANNOTATION_EDGES = {
    ("pt2_viewer.app.document.tab", "pt2_viewer.app.document.widget"):
        "DocumentTab's contract (current_program, graphs) returns the DocumentWidget, which subclasses it",
}


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module (iterative: the graph has ~800 modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def shortest_cycle(graph: dict[str, list[str]], start: str, members: set[str]) -> list[str]:
    """One shortest way from `start` back to itself through `members` (breadth first), to print a cycle readably."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in graph[node]:
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return [start]


def import_cycles() -> list[str]:
    everything = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False, cache_dir=None)
    runtime = grimp.build_graph(PACKAGE, exclude_type_checking_imports=True, cache_dir=None)
    graph = {m: sorted(everything.find_modules_directly_imported_by(m)) for m in sorted(everything.modules)}
    for source, target in ANNOTATION_EDGES:
        if target in graph.get(source, []) and not runtime.direct_import_exists(importer=source, imported=target):
            graph[source].remove(target)
    findings = []
    for component in strongly_connected(graph):
        cycle = shortest_cycle(graph, component[0], set(component))
        steps = [cycle[0]]
        for source, target in zip(cycle, cycle[1:]):
            marker = "" if runtime.direct_import_exists(importer=source, imported=target) else " (type-checking)"
            steps.append(f"-> {target}{marker}")
        others = sorted(set(component) - set(cycle))
        also = f"\n    also in this circle: {', '.join(others)}" if others else ""
        findings.append(f"import cycle: {' '.join(steps)}{also}")
    return findings


def oversized(root: Path) -> list[str]:
    findings = []
    for folder in SIZED:
        for path in sorted((root / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                findings.append(f"module over {MAX_LINES} lines: {path.relative_to(root)} ({lines})")
    return findings


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    findings = import_cycles() + oversized(root)
    for finding in findings:
        print(finding)
    if not findings:
        print(f"no import cycle; no module of {' or '.join(SIZED)} over {MAX_LINES} lines")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
