"""Symbolic shapes across two programs: which symbol of one is which symbol of the other, and comparing dims.

Two exports name their symbols independently (`s0` in one, `s77` in the other, for the same `x.shape[0]`), so an
expression is compared only after renaming A's symbols to B's. Symbols are matched by the input dims they stand for
(`x.shape[0]`, core/pt2/reader.py `Symbol.sources`), then by the dims of placeholders the matcher paired (a symbol at
the same place of the same input is the same symbol). An expression is compared as text after renaming: torch prints
a canonical form (sympy's), so equal expressions print alike.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from pt2_viewer.core.diff.facts import Dim, Output
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.model.tensor_meta import SymDim

_WORD = re.compile(r"\b[a-z]+\d+\b")


class SymbolMap:
    """A's symbol -> B's symbol."""

    def __init__(self, a: Program, b: Program) -> None:
        self.a_to_b: dict[str, str] = {}
        # bare symbols only: range constraints may also be keyed by expressions (`s17*s77`), renamed as text
        self._a_names = {n for n in (*(s.name for s in a.symbols), *a.range_constraints) if n.isidentifier()}
        self._b_names = {n for n in (*(s.name for s in b.symbols), *b.range_constraints) if n.isidentifier()}
        by_source = {src: s.name for s in b.symbols for src in s.sources}
        for s in a.symbols:
            for src in s.sources:
                if src in by_source:
                    self._pair(s.name, by_source[src])
                    break

    @property
    def identity(self) -> bool:
        """Every symbol of A is the symbol of B of the same name (metadata equal as text is then equal as types)."""
        return all(self.a_to_b.get(s) == s for s in self._a_names)

    def _pair(self, a: str, b: str) -> None:
        if a not in self.a_to_b and b not in self.a_to_b.values():
            self.a_to_b[a] = b

    def pair_by_name(self) -> None:
        """Last: a symbol still unpaired meets B's symbol of the same name, if that one is unpaired too (two exports
        of one model name their symbols alike; unbacked `u0`s have no input dim to pair by)."""
        for name in sorted(self._a_names & self._b_names):
            self._pair(name, name)

    def learn(self, a: Iterable[Output], b: Iterable[Output]) -> None:
        """Pair the bare symbols at the same place in two matched nodes' outputs (placeholders first)."""
        for oa, ob in zip(a, b):
            for da, db in zip(oa.sizes or (), ob.sizes or ()):
                if isinstance(da, SymDim) and isinstance(db, SymDim) and da.symbols == (da.text,) \
                        and db.symbols == (db.text,):
                    self._pair(da.text, db.text)

    def rename(self, text: str) -> str:
        """A's expression in B's symbols; a symbol without a partner keeps its name, marked so it matches nothing."""
        return _WORD.sub(lambda m: self.a_to_b.get(m.group(0), m.group(0) + "'"), text)

    def same_dim(self, a: Dim, b: Dim) -> bool:
        if isinstance(a, SymDim) or isinstance(b, SymDim):
            if not (isinstance(a, SymDim) and isinstance(b, SymDim)):
                return False
            return self.rename(a.text) == b.text
        return a == b


def static_vs_symbolic(a: Dim, b: Dim) -> bool:
    """One dim static and the other symbolic: a change of dynamism, not of shape."""
    return isinstance(a, SymDim) != isinstance(b, SymDim)


def compare_shapes(symbols: SymbolMap, a: Output, b: Output) -> str | None:
    """None when equal; "dynamic" when the only differences are static against symbolic dims; else "shape"."""
    if a.sizes is None or b.sizes is None:
        return None if (a.sizes is None) == (b.sizes is None) else "shape"
    if len(a.sizes) != len(b.sizes):
        return "shape"
    kind = None
    for da, db in zip(a.sizes, b.sizes):
        if symbols.same_dim(da, db):
            continue
        if static_vs_symbolic(da, db):
            kind = kind or "dynamic"
        else:
            return "shape"
    return kind
