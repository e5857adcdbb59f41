"""A program through the pipeline's stages, as a chain: each adjacent pair diffed, selection followed along it.

A chain is a list of stages (a program and its title): the program as exported, its core ATen decomposition, its
`.pte`. Each adjacent pair is diffed (core/diff/program_diff.py) with the best provenance there is between them:
torch's `from_node` from a program to a decomposition (the matcher reads it from the nodes), the ETRecord's debug
handles from a program (or its decomposition) to its `.pte` (core/diff/handles.py). Each pair's `CompareSession`
links its nodes by the diff's matching and that provenance, so a node selected in one stage finds its counterparts in
every other stage by walking the pairs outward (`counterparts`). Qt-free: app/compare/chain.py shows it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pt2_viewer.core.compare.mapping import NodeMapping
from pt2_viewer.core.compare.session import LEFT, RIGHT, CompareSession, LinkedDocumentModel, op_rows
from pt2_viewer.core.diff.handles import DEBUG_HANDLE, EtrecordError, etrecord_source_to_pte, pte_provenance
from pt2_viewer.core.diff.program_diff import ProgramDiff, diff_programs
from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import Archive, Program
from pt2_viewer.core.pt2.errors import ArchiveError


@dataclass
class Stage:
    archive: Archive
    program: Program
    title: str


@dataclass
class Chain:
    stages: list[Stage]
    diffs: list[ProgramDiff]  # stage i against stage i + 1
    sessions: list[CompareSession]  # the same pairs, their nodes linked (for selection and the diff panel)
    models: list[LinkedDocumentModel]  # each stage's document model, built with the rest off the GUI thread

    def counterparts(self, stage: int, node: str) -> dict[int, list[str]]:
        """Each stage's nodes linked to `node` of `stage`, through the pairs between them (the stage itself: the
        node)."""
        out = {stage: [node]}
        frontier = [node]
        for i in range(stage, len(self.sessions)):
            frontier = _union(self.sessions[i].counterparts(LEFT, n) for n in frontier)
            out[i + 1] = frontier
        frontier = [node]
        for i in range(stage - 1, -1, -1):
            frontier = _union(self.sessions[i].counterparts(RIGHT, n) for n in frontier)
            out[i] = frontier
        return out


def _union(lists: Iterable[list[str]]) -> list[str]:
    seen: dict[str, None] = {}
    for names in lists:
        seen.update(dict.fromkeys(names))
    return list(seen)


def chain_of(stages: list[Stage], provenance: list[NodeMapping | None]) -> Chain:
    """Diff each adjacent pair of `stages` (`provenance[i]`: what links stage i to i + 1, when there is any)."""
    diffs, sessions = [], []
    for (a, b), mapping in zip(zip(stages, stages[1:]), provenance):
        diff = diff_programs(a.program, b.program, mapping)
        links = diff.node_mapping()
        if mapping is not None:  # the whole provenance: a source op's every .pte node, not only its pair
            known = {(k.before, k.after) for k in links.links}
            links.links += [k for k in mapping.links if (k.before, k.after) not in known]
        method = "etrecord" if mapping is not None and any(k.method == DEBUG_HANDLE for k in mapping.links) \
            else "diff"
        sessions.append(CompareSession(a.program, b.program, links, op_rows(a.program, b.program), None, method,
                                       left_title=a.title, right_title=b.title))
        diffs.append(diff)
    models = [LinkedDocumentModel(s.archive, s.program) for s in stages]
    return Chain(stages, diffs, sessions, models)


def pipeline_chain(source: Archive, core: Archive, pte: Archive, source_to_pte: dict[str, list[str]],
                   source_program: Program | None = None) -> Chain:
    """Source | core ATen | `.pte`: the decomposition paired by torch's `from_node`, the `.pte` by the ETRecord's
    debug handles (`source_to_pte`, as the lower job gives it or core/diff/handles.py reads it), reached from the
    decomposition's nodes through their `from_node`."""
    first = source_program or source.program()
    stages = [Stage(source, first, f"{Path(source.path).name} [{first.name}]"),
              Stage(core, core.program(), f"core ATen ({Path(core.path).name})"),
              Stage(pte, pte.program(), f"{Path(pte.path).name} [{pte.program().name}]")]
    return chain_of(stages, [None, pte_provenance(stages[1].program, stages[2].program, source_to_pte)])


def read_stages(paths: list[str]) -> list[Archive] | str:
    """The archives of a chain's later stages, or a one-line message naming the file that cannot be read or holds no
    program graph."""
    archives = []
    for path in paths:
        try:
            archive = registry.read(path)
        except (ArchiveError, OSError) as e:
            return str(e) if path in str(e) else f"{path}: {e}"
        if not archive.programs:
            return f"{path}: holds no program graph to compare"
        archives.append(archive)
    return archives


def read_pipeline(source: Archive, program: Program, core_path: str, pte_path: str,
                  etrecord_path: str | None = None, source_to_pte: dict[str, list[str]] | None = None) -> Chain | str:
    """The chain of `program` (of `source`), its core ATen decomposition at `core_path` and its `.pte` at
    `pte_path`, linked by `source_to_pte` (the lower job's) or else the ETRecord at `etrecord_path` (read without
    torch); a one-line message naming the file and the problem when one cannot be read. Without either, the `.pte`
    pairs by structure only."""

    archives = read_stages([core_path, pte_path])
    if isinstance(archives, str):
        return archives
    core, pte = archives
    if source_to_pte is None and etrecord_path:
        try:
            source_to_pte = etrecord_source_to_pte(etrecord_path, pte.program())
        except EtrecordError as e:
            return str(e)
    return pipeline_chain(source, core, pte, source_to_pte or {}, program)
