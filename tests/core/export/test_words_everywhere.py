"""No torch-internal symbol reaches the command line or the report (issue 30 §2): for failing scripts written the way
users write them (explicit export calls and the module-level convention), `pt2-viewer export --diagnose`'s summary and
the script's report say `a.shape[0]`, `batch` and "a value read from tensor data", never `u0`, `s97`, `L['a']` or
`Eq(...)`; torch's symbol is shown only as an aside after the user's name (`batch (s77)`).

The scripts are diagnosed once by the real worker and cached (tests/core/export/doctor_runs.py, shared with the fix
tests); the summary is the text `pt2-viewer export --diagnose` prints (core/cli/export.py `format_summary`), the
report the page `pt2-viewer report` writes for the export folder. A named dim in Details and in the report's Symbols
tab is checked on the tests' own dynamic-shapes program.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from pt2_viewer.core.cli.export import format_summary
from pt2_viewer.core.report.script_report import script_page
from pt2_viewer.core.report.write import write_script_report
from tests.core.export.doctor_runs import diagnosed

# two explicit export calls and two module-level scripts: a data-dependent `if` (u0, Eq(u0, 1)), a range the model
# narrows (L['x'].size()[0], VR[...]), two dims forced equal (s52, s97, L['a']), a Python int from `.item()` (u0)
SCRIPTS = ("branch_on_sum", "narrowed_by_if", "module_equal_dims", "module_item_range")
TORCH_SYMBOL = re.compile(r"\b[su]\d+\b|\bzuf\d+\b|L\[['\"]|\b(?:Eq|Ne|Mod)\(|\bVR\[")
ASIDE = re.compile(r"(?<=[\w\])]) \((?:[su]\d+|zuf\d+)\)")  # `batch (s77)`: torch's symbol after the user's name


def leaks(text: str) -> list[str]:
    """Each line of `text` that shows a torch-internal symbol outside a `(s77)` aside after a user's name."""
    return [line for line in text.splitlines() if TORCH_SYMBOL.search(ASIDE.sub("", line))]


def test_leaks_finds_what_it_should() -> None:
    assert leaks("export requires a.shape[0] == b.shape[0]\nbatch (s77) [2, 64]") == []
    for shown in ("Eq(u0, 1)", "s97 == s52", "L['a'].size()[0]", "(s77) alone", "VR[2, int_oo]"):
        assert leaks(shown) == [shown]


@pytest.fixture(scope="module", params=SCRIPTS)
def run(request: pytest.FixtureRequest) -> tuple[str, dict, Path]:
    script, report = diagnosed(request.param)
    return request.param, report, script.parent.parent / "out"


def test_the_diagnose_summary_says_it_in_the_users_words(run: tuple[str, dict, Path]) -> None:
    name, report, out = run
    assert not report["calls"][0]["ok"], f"{name} should fail to export"
    text = format_summary(report, out)
    assert leaks(text) == [], f"{name}: torch's symbols in `export --diagnose`:\n{text}"
    assert "Diagnose #0" in text  # the doctor's part is in the text checked
    failed = next(line for line in text.splitlines() if " FAILED " in line)
    assert not failed.rstrip().endswith(":")  # a headline follows the kind
    if report["calls"][0]["failure"]["message"].strip() not in text:  # torch's own words: where they still are
        assert f"torch's own message: {out / 'report.json'} (calls[0].failure.message)" in text


def test_the_report_says_it_in_the_users_words(run: tuple[str, dict, Path], tmp_path: Path) -> None:
    name, report, out = run
    page = script_page(out)
    calls = html.unescape(re.sub(r"<[^>]+>", "\n", page.extra_html))  # the Export calls tab, as read
    assert leaks(calls) == [], f"{name}: torch's symbols in the report's Export calls tab:\n{calls}"
    assert leaks(page.empty_note) == []
    for program in page.programs:  # the draft program's Symbols tab, its signature and guards
        shown = json.dumps({k: program[k] for k in ("name", "signature", "symbols", "guards")}, ensure_ascii=False)
        assert leaks(shown) == [], f"{name}: torch's symbols in the report's {program['name']}: {shown}"
    written = tmp_path / "report.html"  # and the file `pt2-viewer report` writes holds those words
    write_script_report(out, written)
    assert html.escape(report["calls"][0]["model"]) in written.read_text(encoding="utf-8")


def test_the_reports_symbols_tab_leads_with_the_scripts_dim_name() -> None:
    """The draft program of narrowed_by_if (`n = Dim("n", ...)` on x.shape[0]) lists its symbol as `n (s77)`, as the
    window's Symbols panel does; an unbacked one without a name says what it is (`... (u0)`)."""
    _, report = diagnosed("narrowed_by_if")
    out = Path(report["script"]).parent.parent / "out"
    [program] = [p for p in script_page(out).programs if p["name"].endswith("(draft)")]
    named = [s for s in program["symbols"] if "x.shape[0]" in s["sources"]]
    assert named and re.fullmatch(r"n \(s\d+\)", named[0]["name"]), program["symbols"]
    _, report = diagnosed("branch_on_sum")
    out = Path(report["script"]).parent.parent / "out"
    symbols = [s["name"] for p in script_page(out).programs for s in p["symbols"]]
    assert symbols and all(re.fullmatch(r"a value read from tensor data \(u\d+\)", s) for s in symbols), symbols


def test_details_symbols_lead_with_the_scripts_dim_name(pt2_path) -> None:  # type: ignore[no-untyped-def]
    """Details with nothing selected (core/graph/properties.py) lists `batch (s77)` for the symbol that stands for
    the script's Dim("batch"), and keeps torch's symbol alone where the script gave no name (Dim.AUTO)."""
    from pt2_viewer.core.graph.properties import program_properties
    from pt2_viewer.core.pt2.reader import read_archive

    archive = read_archive(pt2_path("dynamic_shapes"))
    program = archive.programs[0]
    rows = program_properties(archive, program, {"x.shape[0]": "batch"}).section("Symbols")
    assert rows is not None
    by_source = {r.note: r.label for r in rows.rows}
    batch = next(s for s in program.symbols if "x.shape[0]" in s.sources)
    assert by_source[", ".join(batch.sources)] == f"batch ({batch.name})"
    auto = next(s for s in program.symbols if "x.shape[0]" not in s.sources)
    assert by_source[", ".join(auto.sources)] == auto.name
    plain = program_properties(archive, program).section("Symbols")  # a .pt2 alone: torch's symbols as they are
    assert plain is not None and sorted(r.label for r in plain.rows) == sorted(s.name for s in program.symbols)
