"""The parts of two programs outside the graph: the signature, the symbols' ranges and the guards.

Inputs and outputs pair by what they are (a parameter, buffer or constant, or a mutation, by its target; a user input
or output by its position). An entry added, removed, renamed, or of another kind or target is a signature change; a
type that differs is a dtype, shape or dynamism change, as for nodes. Symbols pair through `SymbolMap`
(core/diff/symbols.py): a symbol on one side only, or a range that moved, is a change of dynamism, as is a guard on
one side only (compared in B's symbols).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.diff.facts import Output, ProgramFacts
from pt2_viewer.core.diff.nodes import ADDED, CHANGED, REMOVED
from pt2_viewer.core.diff.symbols import SymbolMap, compare_shapes
from pt2_viewer.core.model.program import InputKind, OutputKind, Program


@dataclass
class Entry:
    name: str
    kind: str  # the signature kind: "USER_INPUT", "PARAMETER", "USER_OUTPUT", ...
    target: str | None
    output: Output

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "target": self.target, "type": self.output.text}


@dataclass
class SignatureChange:
    section: str  # "inputs" or "outputs"
    kind: str  # ADDED, REMOVED or CHANGED
    a: Entry | None
    b: Entry | None
    what: list[str] = field(default_factory=list)  # of "name", "kind", "target", "dtype", "shape", "dynamic"

    @property
    def structural(self) -> bool:
        """Added, removed, renamed, or of another kind or target: what `--fail-on signature` is about."""
        return self.kind != CHANGED or bool({"name", "kind", "target"} & set(self.what))

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "kind": self.kind, "what": self.what,
                "a": self.a.to_json() if self.a else None, "b": self.b.to_json() if self.b else None}


@dataclass
class RangeChange:
    a: str | None  # A's symbol
    b: str | None  # B's symbol
    kind: str
    a_range: tuple[int | None, int | None] | None
    b_range: tuple[int | None, int | None] | None

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "kind": self.kind,
                "a_range": list(self.a_range) if self.a_range else None,
                "b_range": list(self.b_range) if self.b_range else None}


def _inputs(program: Program, facts: ProgramFacts) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for spec in program.signature.inputs:
        node = facts.by_name.get(spec.name)
        output = node.outputs[0] if node and node.outputs else Output("unknown")
        key = facts.by_name[spec.name].input_key if node and node.input_key else spec.name
        out[key or spec.name] = Entry(spec.name, spec.kind.value, spec.target, output)
    return out


def _outputs(program: Program) -> dict[str, Entry]:
    """Outputs by what they are: a mutation by the buffer or input it writes, a user output by its position."""
    out: dict[str, Entry] = {}
    user = 0
    for spec in program.signature.outputs:
        v = program.graph.values.get(spec.name)
        meta = v.meta if v is not None else None
        output = Output(v.kind if v else "unknown", meta.dtype if meta else None, meta.sizes if meta else None)
        if spec.kind is OutputKind.USER_OUTPUT or not spec.target:
            key, user = f"{spec.kind.value}:{user}", user + 1
        else:
            key = f"{spec.kind.value}:{spec.target}"
        out[key] = Entry(spec.name, spec.kind.value, spec.target, output)
    return out


def signature_changes(fa: ProgramFacts, fb: ProgramFacts, symbols: SymbolMap) -> list[SignatureChange]:
    a_in, b_in = _inputs(fa.program, fa), _inputs(fb.program, fb)
    pairs: list[tuple[str, Entry | None, Entry | None]] = [("inputs", a_in.get(k), b_in.get(k))
                                                           for k in dict.fromkeys([*a_in, *b_in])]
    a_out, b_out = _outputs(fa.program), _outputs(fb.program)
    pairs += [("outputs", a_out.get(k), b_out.get(k)) for k in dict.fromkeys([*a_out, *b_out])]
    changes = []
    for section, a, b in pairs:
        if a is None or b is None:
            changes.append(SignatureChange(section, ADDED if a is None else REMOVED, a, b))
            continue
        what = [w for w, differs in (("name", a.name != b.name and a.kind == InputKind.USER_INPUT.value),
                                     ("kind", a.kind != b.kind), ("target", a.target != b.target),
                                     ("dtype", a.output.dtype != b.output.dtype)) if differs]
        shape = compare_shapes(symbols, a.output, b.output)
        if shape:
            what.append(shape)
        if what:
            changes.append(SignatureChange(section, CHANGED, a, b, what))
    return changes


def range_changes(a: Program, b: Program, symbols: SymbolMap) -> list[RangeChange]:
    changes = []
    b_ranges = b.range_constraints
    for sym, rng in a.range_constraints.items():
        partner = symbols.a_to_b.get(sym) if sym.isidentifier() else symbols.rename(sym)
        if partner is None or partner not in b_ranges:
            changes.append(RangeChange(sym, None, REMOVED, rng, None))
        elif tuple(b_ranges[partner]) != tuple(rng):
            changes.append(RangeChange(sym, partner, CHANGED, rng, b_ranges[partner]))
    paired = {symbols.a_to_b.get(s) if s.isidentifier() else symbols.rename(s) for s in a.range_constraints}
    changes.extend(RangeChange(None, sym, ADDED, None, rng) for sym, rng in b_ranges.items() if sym not in paired)
    return changes


def guard_changes(a: Program, b: Program, symbols: SymbolMap) -> tuple[list[str], list[str]]:
    """(guards only A has, guards only B has), A's in B's symbols."""
    a_guards = {symbols.rename(g): g for g in a.guards_code}
    b_guards = set(b.guards_code)
    return [g for k, g in a_guards.items() if k not in b_guards], [g for g in b.guards_code if g not in a_guards]
