"""A decomposed program as the compare view receives it: where the `.pt2` and its node mapping are, what it was
lowered to, which ops a job found outside core ATen, and which folder holds those files and who may delete it.

Two features hand one over. Program > Decompose… runs a decompose job in a temporary folder and gives that folder to
the comparison tab: closing the tab removes it. Numerics → "Open in compare view" shows the decomposed candidate the
Numerics job saved in its own folder, which the Numerics panel still reads (its spilled values, its overlay): the
comparison tab must leave it alone. `release(who)` removes the folder only when `who` owns it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from pt2_viewer.core.jobs.schemas.base import SchemaError
from pt2_viewer.core.jobs.schemas.decompose import DecomposeResult
from pt2_viewer.core.jobs.schemas.numerics import NumericsResult
from pt2_viewer.core.platform import temp_dirs


class Owner(enum.Enum):
    """Who removes a decomposition's folder when done with it."""

    COMPARE_TAB = "the comparison tab"  # a decompose job's folder, handed to the tab that shows it
    NUMERICS_JOB = "the Numerics job"  # the Numerics job's folder: its panel still uses it


@dataclass(frozen=True)
class Decomposition:
    program: str  # the original .pt2
    program_name: str  # which of its programs
    target: str  # "core", "functional" or "table"
    table: str | None  # the table file, for "table"
    output: str  # the decomposed .pt2
    mapping: str  # its node mapping file (core/compare/mapping.py)
    folder: Path  # the folder holding `output` and `mapping`
    owner: Owner
    non_core_ops: dict[str, int] | None = None  # ops outside core ATen; None when the job did not judge them

    @classmethod
    def from_decompose(cls, result: DecomposeResult, folder: str | Path) -> Decomposition:
        """A finished decompose job's result; its folder becomes the comparison tab's."""
        if not result.ok or not result.output or not result.mapping:
            raise SchemaError("decompose result: a successful result names its output and mapping")
        return cls(program=result.program or "", program_name=result.program_name or "",
                   target=result.target or "", table=result.table, output=result.output, mapping=result.mapping,
                   folder=Path(folder), owner=Owner.COMPARE_TAB, non_core_ops=result.non_core_ops)

    @classmethod
    def from_numerics(cls, result: NumericsResult) -> Decomposition | None:
        """The decomposed candidate a Numerics job saved (`save_candidate`), or None when it kept none. The folder
        stays the Numerics job's."""
        if not result.ok or not result.candidate_program or not result.mapping:
            return None
        kind = result.kind or result.candidate or ""
        return cls(program=result.program or "", program_name=result.program_name or "", target=kind,
                   table=result.candidate if kind == "table" else None, output=result.candidate_program,
                   mapping=result.mapping, folder=Path(result.candidate_program).parent, owner=Owner.NUMERICS_JOB)

    def may_delete(self, who: Owner) -> bool:
        return who is self.owner

    def release(self, who: Owner) -> None:
        """`who` is done with the decomposition: its folder goes if it is `who`'s, and stays otherwise."""
        if self.may_delete(who):
            temp_dirs.remove(self.folder)


__all__ = ["Decomposition", "Owner"]
