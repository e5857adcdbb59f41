"""Prove the doctor's fixes before they are shown: apply all of a call's fixes to a copy of the script and export it
again, in a fresh worker, the way the original runs (the same folder on sys.path, the same working directory, the
same `__file__`; core/export/job.py's request `"run_as"`).

Verified means: with all of a call's fixes applied together, that call exported. Only then does a problem get its
`diff` (and `verified: true`); a fix whose re-export failed goes under `tried` with that failure, and the next
candidate (a `torch._check` after a `torch.cond` rewrite) is tried in a second round while the time budget lasts.
The calls of one script are verified together, in one re-run, when their edits do not overlap.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2_viewer.core.export.fixes.code_fixes import Candidates
from pt2_viewer.core.export.fixes.edits import EditConflict, Fix, patched_texts, unified_diff
from pt2_viewer.core.export.plain_words import user_words

ROUNDS = 2
MIN_BUDGET_S = 60.0
MAX_BUDGET_S = 600.0
STARTUP_S = 30.0  # a fresh worker imports torch before the script's first line


@dataclass
class Outcome:
    """A call of the patched run: exported, or its failure in a sentence."""

    ok: bool
    failure: str = ""
    failure_code: str = ""  # the user's line the failure points at, to tell whether a problem is gone
    model: str = ""


def budget_s(script_s: float, fixes: int) -> float:
    """The original run's time times the number of fixes (plus a worker's start), capped."""
    return max(MIN_BUDGET_S, min(MAX_BUDGET_S, (script_s + STARTUP_S) * max(1, fixes)))


def verify(script: Path, calls: list[Any], proposals: dict[int, dict[int, Candidates]], out: Path, budget: float,
           emit: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Re-export patched copies until every call with candidates is verified, has no candidate left, or the budget
    ran out; fills in each problem's diff/verified/resolved/tried/narrows (call.problems is a doctor.Diagnosis)."""
    deadline = time.monotonic() + budget
    by_index = {c.index: c for c in calls}
    choice: dict[int, dict[int, int]] = {ci: {pi: 0 for pi in items} for ci, items in proposals.items()}
    pending = {ci for ci in proposals if by_index.get(ci) is not None and by_index[ci].problems is not None}
    run_no = 0
    for _round in range(ROUNDS):
        if not pending:
            break
        for group in _groups(pending, proposals, choice):
            left = deadline - time.monotonic()
            if left < 10:
                _out_of_time(by_index, group, budget)
                pending -= set(group)
                continue
            run_no += 1
            fixes = {ci: {pi: proposals[ci][pi].fixes[k] for pi, k in choice[ci].items()} for ci in group}
            if emit is not None:
                emit({"type": "progress", "stage": "verify", "message": f"Verifying the fixes of export call(s) "
                      f"{', '.join('#' + str(ci) for ci in group)} by exporting a patched copy"})
            outcomes = _rerun(script, [f for per in fixes.values() for f in per.values()], out / f"verify-{run_no}",
                              left)
            for ci in group:
                call = by_index[ci]
                if isinstance(outcomes, str):
                    result, failure = None, outcomes
                else:
                    result = outcomes.get(ci)
                    failure = result.failure if result is not None else outcomes[-1].failure
                if result is not None and result.ok and result.model in (call.model, ""):
                    _accept(call, fixes[ci], script)
                    pending.discard(ci)
                    continue
                _record_tried(call, fixes[ci], script, failure, result)
                if not _advance(choice[ci], proposals[ci]):
                    pending.discard(ci)
    for ci in pending:
        _out_of_time(by_index, [ci], budget)
    for ci in proposals:
        call = by_index.get(ci)
        if call is not None and call.problems is not None:
            for p in call.problems.items:
                if not p.verified and p.tried:
                    p.reason = (p.reason + " " if p.reason else "") + "The fix we tried still fails: " + \
                        p.tried[-1]["failure"]


def _groups(pending: set[int], proposals: dict[int, dict[int, Candidates]],
            choice: dict[int, dict[int, int]]) -> list[list[int]]:
    """Calls whose chosen edits can be applied together, greedily in call order."""
    groups: list[list[int]] = []
    for ci in sorted(pending):
        edits = [e for pi, k in choice[ci].items() for e in proposals[ci][pi].fixes[k].edits]
        try:
            patched_texts(edits)
        except (EditConflict, OSError):
            groups.append([ci])  # its own fixes clash: it is tried alone, and fails there, saying so
            continue
        for g in groups:
            together = edits + [e for cj in g for pi, k in choice[cj].items() for e in proposals[cj][pi].fixes[k].edits]
            try:
                patched_texts(together)
            except (EditConflict, OSError):
                continue
            g.append(ci)
            break
        else:
            groups.append([ci])
    return groups


def _advance(choice: dict[int, int], candidates: dict[int, Candidates]) -> bool:
    """Move the problems that have another candidate to it; False when none has."""
    moved = False
    for pi, k in choice.items():
        if k + 1 < len(candidates[pi].fixes):
            choice[pi] = k + 1
            moved = True
    return moved


def _rerun(script: Path, fixes: list[Fix], out: Path, timeout: float) -> dict[int, Outcome] | str:
    """Export a patched copy of the script in a fresh worker; call index -> outcome, or why the run failed."""
    base = script.parent
    try:
        texts = patched_texts([e for f in fixes for e in f.edits])
    except (EditConflict, OSError) as e:
        return f"the fixes could not be applied together ({e})"
    copy_dir = out / "copy"
    copy_script = copy_dir / script.name
    copy_dir.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        rel = os.path.relpath(path, base)
        if rel.startswith(".."):
            return f"a fix changes {path}, outside the script's folder"
        (copy_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy_dir / rel).write_text(text, encoding="utf-8")
    if not copy_script.exists():
        copy_script.write_text(script.read_text(encoding="utf-8"), encoding="utf-8")
    run_out = out / "out"
    run_out.mkdir(parents=True, exist_ok=True)
    request = run_out / "request.json"
    request.write_text(json.dumps({"script": str(copy_script), "run_as": str(script), "save": False}),
                       encoding="utf-8")
    cmd = [sys.executable, "-m", "pt2_viewer.core.worker", "export_script", "--request", str(request),
           "--out", str(run_out)]
    # The child stays in this worker's process group and inherits its PT2V_JOB_MARKER (core/jobs/process_tree.py):
    # cancelling the Diagnose ends it with the job's tree (tests/core/export/test_verify_cancel.py). Never give it a
    # session or an environment of its own.
    try:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=timeout, cwd=os.getcwd(), check=False)
    except subprocess.TimeoutExpired:
        return f"verification ran out of its time budget ({timeout:.0f} s left) before the patched script ended"
    try:
        report = json.loads((run_out / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "the patched script's worker wrote no report"
    outcomes: dict[int, Outcome] = {}  # -1: why a call is missing
    for c in report.get("calls", []):
        f = c.get("failure") or {}
        line = f.get("user_line") or {}
        outcomes[int(c["index"])] = Outcome(bool(c.get("ok")), _sentence(f), str(line.get("code") or ""),
                                            str(c.get("model", "")))
    error = report.get("script_error")
    missing = "the patched script did not reach this export call"
    if error:
        missing = f"the patched script stopped before it: {error.get('type')}: {_first_line(error.get('message', ''))}"
    outcomes[-1] = Outcome(False, missing)
    return outcomes


def _sentence(failure: dict[str, Any]) -> str:
    if not failure:
        return ""
    return f"{failure.get('title', 'export failed')}: {user_words(_first_line(failure.get('message', '')))}"


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")


def _accept(call: Any, fixes: dict[int, Fix], script: Path) -> None:
    for pi, fix in fixes.items():
        p = call.problems.items[pi]
        p.fix_kind, p.fix, p.narrows = fix.kind, fix.code, fix.narrows
        p.diff = unified_diff(fix.edits, str(script.parent))
        p.verified, p.resolved = bool(p.diff), True
        if fix.kind != "torch_check":
            p.reason = ""  # the fix says what it does and narrows; a torch._check keeps its torch.cond alternative


def _record_tried(call: Any, fixes: dict[int, Fix], script: Path, failure: str, result: Outcome | None) -> None:
    for pi, fix in fixes.items():
        p = call.problems.items[pi]
        gone = None
        if result is not None and p.user_line is not None and result.failure_code:
            gone = result.failure_code.strip() != (p.user_line.code or "").strip()
        p.resolved = gone
        entry = {"fix_kind": fix.kind, "fix": fix.code, "diff": unified_diff(fix.edits, str(script.parent)),
                 "verified": False, "failure": failure or "the call was not reached", "problem_gone": gone}
        if entry not in p.tried:
            p.tried.append(entry)


def _out_of_time(by_index: dict[int, Any], group: list[int], budget: float) -> None:
    for ci in group:
        d = by_index[ci].problems
        if d is not None and "time budget" not in d.note:
            d.note = (d.note + " " if d.note else "") + (
                f"Verification ran out of its time budget ({budget:.0f} s): the fixes for this call were not "
                "verified, so no diff is shown.")
