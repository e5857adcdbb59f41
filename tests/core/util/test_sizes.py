"""One convention for sizes (issue 43 §5: the Summary said "KiB" while the parameter-bytes legend said "MB"): every
size a view shows goes through core/util/words.py `format_bytes`, steps of 1024 written B, KB, MB, GB. Checked on the
bundled example (a real export): the Summary's weights, the program's Details, the overlay's legend and a `.pte`
panel's sizes all say them the same way."""
from __future__ import annotations

import re

from pt2_viewer.core.graph.overlays import parameter_bytes_overlay
from pt2_viewer.core.graph.properties import program_properties
from pt2_viewer.core.graph.summary import program_summary
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.pte.tables import size_text
from pt2_viewer.core.util.words import format_bytes
from tests.programs import REPO_ROOT

UNIT = re.compile(r"\b\d[\d,.]* ?(KiB|MiB|GiB|[KMGT]?B)\b")


def test_format_bytes_steps_of_1024() -> None:
    assert [format_bytes(n) for n in (0, 116, 1023, 1024, 1536, 32 * 2**20, 3 * 2**30, 5 * 2**40)] == [
        "0 B", "116 B", "1023 B", "1.0 KB", "1.5 KB", "32.0 MB", "3.0 GB", "5.0 TB"]
    assert size_text is format_bytes  # the .pte and AOTInductor panels say sizes the same way


def test_every_view_of_one_program_says_sizes_one_way() -> None:
    archive = read_archive(REPO_ROOT / "resources" / "examples" / "example.pt2")
    program = archive.program()
    shown = [value for _label, value in program_summary(archive, program).facts()]
    shown += [row.text for s in program_properties(archive, program).sections for row in s.rows]
    overlay = parameter_bytes_overlay(program, program.graph)
    assert overlay.fmt is format_bytes
    shown += [overlay.fmt(v) for v in overlay.values.values()]
    units = {m.group(1) for text in shown for m in UNIT.finditer(text)}
    assert units and units <= {"B", "KB", "MB", "GB"}, units
