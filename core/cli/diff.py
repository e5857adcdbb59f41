"""`pt2-viewer diff A.pt2 B.pt2 [--program P] [--json] [--markdown] [--fail-on KINDS]`: what changed, for people and CI.
`pt2-viewer diff A.pt2 B.pte --etrecord B.etrecord`: a program against its `.pte`, matched through the ETRecord's
debug handles (core/diff/handles.py; read as JSON, torch-free).

Reads both archives without torch (core/pt2/reader.py) and diffs them (core/diff/). With no flag it prints a summary
and the per-module roll-up; `--json` one object for scripts, `--markdown` a table for a pull-request comment or a job
summary. Exit status: 0, or 1 when `--fail-on` names a kind of change the diff holds; 2 for bad input, with one line
naming the file and the problem.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pt2_viewer.core.cli.output import print_json
from pt2_viewer.core.diff.handles import EtrecordError, etrecord_source_to_pte, pte_provenance
from pt2_viewer.core.diff.output import markdown, text, to_json
from pt2_viewer.core.diff.program_diff import FAIL_KINDS, diff_programs
from pt2_viewer.core.formats import registry
from pt2_viewer.core.model.program import Program
from pt2_viewer.core.pt2.errors import ArchiveError

EXIT_CHANGED = 1
EXIT_BAD_INPUT = 2


EXIT_STATUS = ("exit status: 0 the diff was made (and holds no change --fail-on names); 1 it holds a change of a kind "
               "--fail-on names; 2 bad input: a missing or damaged file, an unknown --program or kind. Unlike the "
               "other commands, where a file that cannot be used exits 1, diff keeps 1 for 'changes found', so CI "
               "can tell the two apart.")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_STATUS
    parser.add_argument("a", metavar="A.pt2", help="the program before")
    parser.add_argument("b", metavar="B.pt2", help="the program after")
    parser.add_argument("--program", default=None, metavar="P",
                        help="which program of each archive (default: the first; the same name on both sides)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object (a stable format for scripts)")
    out.add_argument("--markdown", action="store_true", help="print a Markdown table (a PR comment, a CI summary)")
    parser.add_argument("--fail-on", default=None, metavar="KINDS",
                        help=f"exit 1 when a change of these kinds exists (comma-separated: {','.join(FAIL_KINDS)})")
    parser.add_argument("--etrecord", default=None, metavar="B.etrecord",
                        help="B is a .pte: match its nodes to A's through this ETRecord's debug handles (A is the "
                             "program lowered, or one made from it such as its core ATen decomposition)")


class BadInput(Exception):
    """One line for the user: the file, and what is wrong with it."""


def _kinds(text: str | None) -> set[str]:
    if not text:
        return set()
    kinds = {k.strip() for k in text.split(",") if k.strip()}
    unknown = sorted(kinds - set(FAIL_KINDS))
    if unknown:
        raise BadInput(f"--fail-on: unknown kind {', '.join(unknown)} (known: {','.join(FAIL_KINDS)})")
    return kinds


def _program(path: str, name: str | None) -> Program:
    if not Path(path).exists():
        raise BadInput(f"{path}: no such file")
    try:
        archive = registry.read(path)
    except ArchiveError as e:
        message = str(e)
        raise BadInput(message if path in message else f"{path}: {message}") from e
    if not archive.programs:
        raise BadInput(f"{path}: the archive holds no program")
    try:
        return archive.program(name)
    except KeyError:
        names = ", ".join(p.name for p in archive.programs)
        raise BadInput(f"{path}: no program named {name!r} (it has {names})") from None


def main(args: argparse.Namespace) -> int:
    try:
        wanted = _kinds(args.fail_on)
        a = _program(args.a, args.program)
        b = _program(args.b, args.program)
    except BadInput as e:
        print(f"pt2-viewer diff: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    mapping = None
    if args.etrecord:
        try:
            mapping = pte_provenance(a, b, etrecord_source_to_pte(args.etrecord, b))
        except EtrecordError as e:
            print(f"pt2-viewer diff: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    diff = diff_programs(a, b, mapping)
    if args.json:
        print_json(to_json(diff, args.a, args.b))
    elif args.markdown:
        print(markdown(diff, args.a, args.b))
    else:
        print(text(diff, args.a, args.b))
    return EXIT_CHANGED if diff.fails(wanted) else 0
