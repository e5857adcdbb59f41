"""The diff of two programs: `diff_programs(a, b)` matches, classifies, rolls up, and diffs what lies outside the
graph; `ProgramDiff` holds the answer and says which kinds of change it holds (what `--fail-on` asks).

Torch-free and Qt-free: it reads the reader's `Program`s (core/model/program.py), so the command line, the report
and the window share it. The kinds a build can fail on:
- `ops`: a node added or removed, or calling another op;
- `dtypes`: an output's (or a signature entry's) dtype;
- `shapes`: a shape that differs other than static against symbolic;
- `dynamic`: a dim static on one side and symbolic on the other, a node that only a symbolic dim makes, a symbol's
  range, a symbol or a guard on one side only;
- `signature`: an input or output added, removed, renamed, or of another kind or target;
- `any`: any of these, or arguments, constants or module paths.
A node change lowering was expected to make (B a `.pte`: core/diff/lowering.py) is of the kind `lowered`, counted
apart in the summary, and no kind to fail on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pt2_viewer.core.compare.mapping import Link, NodeMapping
from pt2_viewer.core.diff.facts import ProgramFacts
from pt2_viewer.core.diff.lowering import is_lowering, mark_lowered
from pt2_viewer.core.diff.matcher import Matching, match
from pt2_viewer.core.diff.nodes import ADDED, CHANGED, LOWERED, REMOVED, NodeChange, classify
from pt2_viewer.core.diff.rollup import ModuleRollup, roll_up
from pt2_viewer.core.diff.signature import RangeChange, SignatureChange, guard_changes, range_changes, signature_changes
from pt2_viewer.core.diff.symbols import SymbolMap
from pt2_viewer.core.model.program import Program

FAIL_KINDS = ("ops", "dtypes", "shapes", "dynamic", "signature", "any")


@dataclass
class ProgramDiff:
    a: Program
    b: Program
    matching: Matching
    nodes: list[NodeChange]
    modules: list[ModuleRollup]
    signature: list[SignatureChange]
    ranges: list[RangeChange]
    guards_removed: list[str] = field(default_factory=list)
    guards_added: list[str] = field(default_factory=list)
    symbols: dict[str, str] = field(default_factory=dict)  # A's symbol -> B's
    lowering: bool = False  # B is a `.pte`: the summary counts what lowering was expected to do (`lowered`)

    def count(self, kind: str) -> int:
        return sum(1 for c in self.nodes if c.kind == kind)

    @property
    def summary(self) -> dict[str, int]:
        counts = {"added": self.count(ADDED), "removed": self.count(REMOVED), "changed": self.count(CHANGED)}
        return counts | ({"lowered": self.count(LOWERED)} if self.lowering else {})

    def kinds(self) -> set[str]:
        """Which of FAIL_KINDS this diff holds."""
        out: set[str] = set()
        for c in self.nodes:
            if c.kind == LOWERED:
                continue  # what lowering was expected to do: no kind to fail on
            if c.kind != CHANGED:
                if c.placeholder:
                    continue  # an input: the signature diff judges it
                out.add("dynamic" if c.dynamic else "ops")
                continue
            if "op" in c.what:
                out.add("ops")
            if "dtype" in c.what:
                out.add("dtypes")
            if "shape" in c.what:
                out.add("dynamic" if c.dynamic else "shapes")
        for s in self.signature:
            if s.structural:
                out.add("signature")
            out.update({"dtype": "dtypes", "shape": "shapes", "dynamic": "dynamic"}[w] for w in s.what
                       if w in ("dtype", "shape", "dynamic"))
        if self.ranges or self.guards_added or self.guards_removed:
            out.add("dynamic")
        if out or any(c.kind != LOWERED for c in self.nodes) or self.signature:
            out.add("any")
        return out

    def fails(self, wanted: set[str]) -> bool:
        return bool(self.kinds() & wanted)

    def node_mapping(self) -> NodeMapping:
        """The matching as the compare view's node mapping (core/compare/mapping.py): each pair with how it was made
        ("aligned", "neighbours", "signature", "provenance"), and each new node with the A nodes it came from."""
        links = [Link(a, b, self.matching.method.get(a, "")) for a, b in self.matching.a_to_b.items()]
        links += [Link(a, b, "provenance") for b, sources in self.matching.origin.items() for a in sources]
        return NodeMapping(before_nodes=[n.name for n in self.a.graph.nodes],
                           after_nodes=[n.name for n in self.b.graph.nodes], links=links,
                           before_label=self.a.name, after_label=self.b.name)

    def changes_in(self, module: str) -> list[NodeChange]:
        """The node changes in a module and the modules under it."""
        prefix = module + "."
        return [c for c in self.nodes if not module or c.module == module or c.module.startswith(prefix)]


def diff_programs(a: Program, b: Program, mapping: NodeMapping | None = None) -> ProgramDiff:
    """Diff program `a` (before) against `b` (after); `mapping` is a decomposition's provenance, when there is one."""
    fa, fb = ProgramFacts(a), ProgramFacts(b)
    matching = match(fa, fb, mapping)
    symbols = SymbolMap(a, b)
    nodes = classify(fa, fb, matching, symbols)
    mark_lowered(nodes, fa, fb, matching, mapping)
    modules = {g.module or "" for f in (fa, fb) for g in f.index.modules.walk()}
    removed, added = guard_changes(a, b, symbols)
    return ProgramDiff(a, b, matching, nodes, roll_up(nodes, modules), signature_changes(fa, fb, symbols),
                       range_changes(a, b, symbols), guards_removed=removed, guards_added=added,
                       symbols=dict(symbols.a_to_b), lowering=is_lowering(fb))
