"""`pt2-viewer export SCRIPT -o DIR`: run a model script in the worker, headless, and save every exported program.

The same worker job the window uses (core/export/job.py): DIR receives one `.pt2` per successful export call
and `report.json` listing every call in order. This command streams the script's output, prints a summary, and exits
0 when the script ran to its end (even if some exports failed, which the summary shows), 1 when the script stopped
with an error, 2 when the worker itself crashed, timed out or could not run the job, 130 when cancelled (the rule of
core/cli/exit_status.py). The job runs in a temporary folder of its own: DIR receives only the programs, the doctor's
draft programs and report.json (request.json, result.json and the fixes' verification runs stay out of it).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pt2_viewer.core.cli import exit_status
from pt2_viewer.core.cli.jobs import add_worker_arguments, deliver, job_folder, signals_interrupt
from pt2_viewer.core.export.failures import first_sentence
from pt2_viewer.core.export.plain_words import user_words
from pt2_viewer.core.export.report import REPORT_FILE
from pt2_viewer.core.jobs import protocol
from pt2_viewer.core.jobs.remote.any_worker import worker_job
from pt2_viewer.core.jobs.schemas.export import ExportRequest, Rerun
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.report.script_report import failure_words

EXIT_SCRIPT_ERROR = exit_status.FAILED
EXIT_WORKER_FAILED = exit_status.USAGE_OR_WORKER


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="the Python model script to run")
    parser.add_argument("-o", "--out", required=True, help="folder for the .pt2 files and report.json")
    add_worker_arguments(parser, "the script")
    parser.add_argument("--rerun", metavar="CALL", default=None,
                        help="export call to run with other options: its index in report.json, or 'convention'")
    strict = parser.add_mutually_exclusive_group()
    strict.add_argument("--strict", dest="strict", action="store_true", default=None,
                        help="with --rerun: export in strict mode (TorchDynamo)")
    strict.add_argument("--non-strict", dest="strict", action="store_false", help="with --rerun: non-strict mode")
    parser.add_argument("--dynamic-shapes", metavar="JSON", default=None,
                        help="with --rerun: the dynamic_shapes spec as JSON text or a .json file (docs/worker.md)")
    parser.add_argument("--diagnose", action="store_true",
                        help="list every problem of each export call in one pass (torch's draft export), with fixes")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not echo the script's own output")


def build_request(args: argparse.Namespace) -> ExportRequest:
    script = Path(args.script).expanduser()
    if not script.is_file():
        raise SystemExit(f"pt2-viewer export: {script} does not exist or is not a file")
    request = ExportRequest(script=str(script.resolve()), diagnose=True if getattr(args, "diagnose", False) else None)
    if args.rerun is None:
        if args.strict is not None or args.dynamic_shapes is not None:
            raise SystemExit("pt2-viewer export: --strict/--non-strict/--dynamic-shapes need --rerun CALL "
                             "(the export call to change: its index, or 'convention')")
        return request
    call: int | str = args.rerun
    if args.rerun != "convention":
        try:
            call = int(args.rerun)
        except ValueError:
            raise SystemExit(
                f"pt2-viewer export: --rerun takes a call index or 'convention', not {args.rerun!r}") from None
    request.rerun = Rerun(call=call, strict=args.strict, dynamic_shapes=_load_spec(args.dynamic_shapes))
    return request


def _load_spec(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).read_text(encoding="utf-8")
        except OSError as e:
            raise SystemExit(f"pt2-viewer export: cannot read --dynamic-shapes file {value}: {e.strerror}") from None
    try:
        spec = json.loads(text)
    except ValueError as e:
        raise SystemExit(f"pt2-viewer export: --dynamic-shapes is not valid JSON: {e}") from None
    if not isinstance(spec, dict):
        raise SystemExit("pt2-viewer export: --dynamic-shapes must be a JSON object with 'inputs' (and 'dims')")
    return spec


def main(args: argparse.Namespace) -> int:
    """Run the script in the job's own folder; DIR receives the programs and report.json, never the job's
    request.json, result.json or the doctor's scratch folders."""
    request = build_request(args)
    out = Path(args.out).expanduser().resolve()
    with job_folder("export") as job_dir:
        try:
            return _export(args, request, job_dir, out)
        finally:
            deliver(job_dir, out)


def _export(args: argparse.Namespace, request: ExportRequest, job_dir: Path, out: Path) -> int:

    def echo(stream: str, line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stdout if stream == "stdout" else sys.stderr, flush=True)

    def progress(event: dict[str, Any]) -> None:
        if event.get("type") == "export_finished" and not args.quiet:
            state = "ok" if event.get("ok") else f"failed ({event.get('kind')})"
            print(f"[pt2-viewer] export #{event.get('index')}: {state}", file=sys.stderr, flush=True)

    job = worker_job(JobSpec("export_script", request, job_dir, timeout_s=args.timeout,
                             memory_limit_mb=args.max_memory_mb, on_output=echo, on_event=progress), args.worker)
    try:
        with signals_interrupt():
            outcome = job.wait()
    except KeyboardInterrupt:
        job.cancel()
        print("pt2-viewer export: cancelled", file=sys.stderr)
        return exit_status.CANCELLED
    finally:
        job.cancel()  # whatever ends this command ends the worker's process tree (a no-op once it has ended)
    if outcome.status != protocol.OK or not outcome.result:
        print(f"pt2-viewer export: {outcome.message}", file=sys.stderr)
        if outcome.error_traceback and not args.quiet:
            print(outcome.error_traceback, file=sys.stderr)
        _print_partial(job_dir, out)
        return EXIT_WORKER_FAILED
    # Always JOB/report.json: the result (like every event) is written by the worker the script runs in, so a path
    # it names is never followed.
    try:
        report = json.loads((job_dir / REPORT_FILE).read_text(encoding="utf-8"))
        summary = format_summary(report, out)
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError, IndexError) as e:
        print(f"pt2-viewer export: the job's report ({out / REPORT_FILE}) is missing or malformed "
              f"({type(e).__name__}); the script may have written over it.", file=sys.stderr)
        return EXIT_WORKER_FAILED
    print(summary)
    return 0 if report.get("ok") else EXIT_SCRIPT_ERROR


def _print_partial(job_dir: Path, out: Path) -> None:
    pt2s = sorted(p.name for p in job_dir.glob("*.pt2"))
    if pt2s:
        print(f"Programs saved before it stopped, in {out}: {', '.join(pt2s)}", file=sys.stderr)


def format_problems(call: dict[str, Any]) -> list[str]:
    """The doctor's findings for one call (`--diagnose`): each problem with its count, line, suggestion and fix."""
    problems = call.get("problems")
    if not problems:
        return []
    items = problems.get("items", [])
    lines = [f"  Diagnose #{call['index']} ({problems['method']}): {len(items)} problem(s)"]
    if problems.get("note"):
        lines.append(f"        {user_words(problems['note'])}")
    for p in items:
        user = p.get("user_line")
        at = f" at {Path(user['file']).name}:{user['line']}: {user.get('code', '')}" if user else ""
        lines.append(f"    - {p['kind']} x{p['count']}{at}")
        lines += [f"        {user_words(m)}" for m in str(p['message']).splitlines() if m.strip()]
        if p.get("fix"):
            lines.append(f"        fix ({p['fix_kind']}): {p['fix']}" + (" (verified)" if p.get("verified") else ""))
            if p.get("narrows"):
                lines.append(f"        narrows: {user_words(p['narrows'])}")
            lines += [f"        {d}" for d in str(p.get("diff", "")).splitlines()]
        elif p.get("suggestion"):
            lines.append(f"        suggestion: {user_words(p['suggestion'])}")
        if p.get("reason"):
            lines.append(f"        {user_words(p['reason'])}")
    if problems.get("pt2"):
        lines.append(f"        the draft program: {problems['pt2']}")
    return lines


def format_summary(report: dict[str, Any], out: Path) -> str:
    """A readable summary of report.json: one block per export call, then the script's own error."""
    lines = [f"Script {report['script']} (torch {report.get('torch_version', '?')}): "
             f"{len(report['calls'])} export call(s)"]
    for call in report["calls"]:
        where = f"line {call['line']['line']}" if call.get("line") else "line ?"
        mode = "strict" if call.get("strict") else "non-strict"
        head = f"  #{call['index']:<2} {where:<9} {call['model']:<20} {mode:<10}"
        guards = call.get("guards") or {}
        counts = f"{len(guards.get('symbols', []))} symbols, {len(guards.get('guards', []))} guards"
        if call["ok"]:
            saved = call["pt2"] or f"not saved: {call.get('save_error')}"
            lines.append(f"{head} ok      -> {saved} ({counts})")
            continue
        failure = call["failure"] or {}
        said, key = failure_words(call)
        message = key.splitlines()
        # as the window's Explanation: one plain sentence and the user's line lead, torch's key lines follow, all in
        # the user's names (core/export/plain_words.py): `a.shape[0]`, `batch`, never `s97`, `u0` or `L['a']`
        lines.append(f"{head} FAILED  {failure.get('kind')}: {said}")
        user = failure.get("user_line")
        if user:
            lines.append(f"        at {Path(user['file']).name}:{user['line']}: {user.get('code', '')}")
        lines.extend(f"        {'torch: ' if i == 0 else '       '}{m}" for i, m in enumerate(message[:4]))
        if failure.get("suggested_fixes_text"):
            lines.append(f"        suggested fixes: {user_words('; '.join(failure['suggested_fixes_text']))}")
        lines.append(f"        hint: {failure.get('hint', '')}")
        if key.strip() != str(failure.get("message") or "").strip():
            lines.append(f"        torch's own message: {out / REPORT_FILE} (calls[{call['index']}].failure.message)")
    for call in report["calls"]:
        lines.extend(format_problems(call))
    error = report.get("script_error")
    if error:
        lines.extend(_script_stopped(error, report["calls"], out))
    programs = sum(1 for c in report["calls"] if c.get("pt2"))
    lines.append(f"Wrote {programs} program(s) and report.json to {out}")
    return "\n".join(lines)


def _script_stopped(error: dict[str, Any], calls: list[dict[str, Any]], out: Path) -> list[str]:
    """Why the script stopped, in one plain sentence with the user's line, as the window says it: an export failure
    that the script let through is named by its call (the call's block above has the rest); any other error by its
    type and its first sentence. torch's whole message and the traceback stay in report.json."""
    at = f" at line {error['line']['line']} ({error['line']['code']})" if error.get("line") else ""
    short_type = str(error["type"]).rsplit(".", 1)[-1]
    message = str(error.get("message") or "")
    last = calls[-1] if calls else None
    failure = (last or {}).get("failure") or {}
    if last is not None and not last.get("ok") and failure.get("exception_type") == error["type"]:
        sentence, whole = f"export #{last['index']} failed ({short_type}): {failure_words(last)[0]}", False
    else:
        first = user_words(first_sentence(message))
        sentence, whole = (f"{short_type}: {first}" if first else short_type), first == message.strip()
    lines = [f"The script stopped{at}: {sentence}", f"  hint: {error['hint']}"]
    if not whole:
        lines.append(f"  the whole message and the traceback: {out / REPORT_FILE} (script_error)")
    return lines
