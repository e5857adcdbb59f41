"""Worker job `export_script`: run a user's model script and capture every `torch.export.export` call it makes.

Two kinds of script are supported (docs/worker.md):
  1. scripts that call `torch.export.export` themselves, any number of times (the torch.export tutorial does):
     each call is recorded in order with the line that made it, the program it produced (saved as a .pt2) or the
     exception it raised (classified by pt2_viewer.core.export.failures), and the guards it added
     (pt2_viewer.core.export.guards). The exception still reaches the script, so a failure the script catches does not
     stop the rest of it.
  2. scripts that define `model`, `example_args` and optionally `example_kwargs`, `dynamic_shapes` and `strict`
     at module level: after the script ran, the job exports them itself.
Request: {"script": PATH, "rerun": {"call": INDEX | "convention", "strict": BOOL, "dynamic_shapes": SPEC}}; "rerun"
is optional and replaces the options of that one call (SPEC is core/export/dynamic_spec.py's JSON). With
"diagnose": true the doctor's fixes are verified by re-running a patched copy with "run_as": the original's path
(and "save": false, no .pt2 files) in a fresh worker.
Output: one NN_Model.pt2 per successful call and report.json; the returned dict summarises them.

The script runs as `__main__` registered in sys.modules, as `python script.py` would run it: strict export looks
the script's module up by name and fails with ModuleNotFoundError otherwise.
"""
from __future__ import annotations

import ast
import re
import sys
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pt2_viewer.core.export import doctor, dynamic_spec
from pt2_viewer.core.export.failures import (
    CONSTRAINT_VIOLATION,
    SPECIALIZED_VALUE,
    Failure,
    SourceLine,
    classify_exception,
    exception_chain,
    is_library_file,
    same_file,
    with_code,
)
from pt2_viewer.core.export.fixes.code_fixes import Candidates
from pt2_viewer.core.export.fixes.verify import budget_s, verify
from pt2_viewer.core.export.guards import GuardCapture, GuardLog, resolve_inputs
from pt2_viewer.core.export.report import CONVENTION, REPORT_FILE, ExportCall, ExportReport, Rerun, ScriptError
from pt2_viewer.core.jobs.kinds import EXPORT_SCRIPT
from pt2_viewer.core.jobs.protocol import PROGRESS, write_json_atomic
from pt2_viewer.core.jobs.schemas.export import ExportDone, ExportRequest
from pt2_viewer.core.jobs.typed_job import TypedJob
from pt2_viewer.core.util.files import write_atomically
from pt2_viewer.core.util.repeated_output import stderr_blocks_once

Emit = Callable[[dict[str, Any]], None]


class ExportRecorder:
    """Replaces torch.export.export while the script runs; records, saves and classifies every call."""

    def __init__(self, script: Path, out: Path, emit: Emit, rerun: Rerun | None, diagnose: bool = False) -> None:
        import torch

        self.torch = torch
        self.script = script
        self.out = out
        self.emit = emit
        self.rerun = rerun
        self.diagnose = diagnose  # also run torch's draft export on each call and list every problem (doctor.py)
        self.calls: list[ExportCall] = []
        self.proposals: dict[int, dict[int, Candidates]] = {}  # call -> problem -> the doctor's fixes to verify
        self.save = True  # False in the doctor's verification runs, which only need each call's outcome
        self.real_export = torch.export.export
        self._depth = 0
        self.raised: dict[int, ExportCall] = {}  # id of an exception an export call raised -> that call

    def install(self) -> None:
        self.torch.export.export = self.export  # `from torch.export import export` in the script gets this too

    def uninstall(self) -> None:
        self.torch.export.export = self.real_export

    def export(self, *args: Any, **kwargs: Any) -> Any:
        if self._depth:  # torch calling export from inside an export: not the user's call
            return self.real_export(*args, **kwargs)
        return self.record_call(args, kwargs, site=self._call_site(), source="script")

    def record_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], site: SourceLine | None,
                    source: str) -> Any:
        import inspect

        try:
            bound = inspect.signature(self.real_export).bind(*args, **kwargs)
        except TypeError:  # called wrongly: let torch raise its own error, there is no export to record
            return self.real_export(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        mod, ex_args, ex_kwargs = a["mod"], tuple(a.get("args") or ()), a.get("kwargs") or {}
        index = len(self.calls)
        rerun = self._is_rerun_target(index, source)
        call = ExportCall(index=index, source=source, line=site, model=type(mod).__name__,
                          strict=bool(a.get("strict")), dynamic_shapes=None, dynamic_shapes_spec=None, rerun=rerun)
        self.calls.append(call)
        self.emit({"type": "export_started", "index": index, "model": call.model,
                   "line": site.line if site else None, "source": source})
        started = time.monotonic()
        capture = GuardCapture(str(self.script), frames=current_frames)
        self._depth += 1
        try:
            call.inputs = dynamic_spec.input_names(mod, ex_args, ex_kwargs)
            call.input_shapes = _input_shapes(call.inputs, ex_args, ex_kwargs)
            if rerun and self.rerun is not None:
                self._apply_rerun(a, mod, ex_args, ex_kwargs)
                call.strict = bool(a.get("strict"))
            call.dynamic_shapes = None if a.get("dynamic_shapes") is None else repr(a["dynamic_shapes"])
            call.dynamic_shapes_spec = _spec_or_none(a.get("dynamic_shapes"), mod, ex_args, ex_kwargs)
            with capture, stderr_blocks_once():  # torch prints a strict export's partial graph twice
                ep = self.real_export(**a)
        except BaseException as exc:
            call.duration_s = time.monotonic() - started
            call.guards = self._guards(capture, mod, ex_args, ex_kwargs)
            call.failure = classify_exception(exc, str(self.script))
            if call.failure.user_line is None or call.failure.user_line == site:
                call.failure.user_line = _blamed_guard_line(call.failure, call.guards) or site
            self._diagnose(call, a)
            if self.diagnose and call.failure is not None and call.failure.kind == SPECIALIZED_VALUE:
                call.item_values = item_values(self.torch, str(self.script), mod, ex_args, ex_kwargs)
            self._propose(call)
            self._finished(call)
            self.raised[id(exc)] = call
            raise
        finally:
            self._depth -= 1
        call.duration_s = time.monotonic() - started
        call.ok = True
        call.guards = self._guards(capture, mod, ex_args, ex_kwargs)
        call.program = _program_summary(ep)
        self._save(call, ep)
        self._depth += 1
        try:
            self._diagnose(call, a)
        finally:
            self._depth -= 1
        self._propose(call)
        self._finished(call)
        return ep

    def _propose(self, call: ExportCall) -> None:
        """The doctor's candidate fixes for this call's problems, verified once the script has ended (verify)."""
        if call.problems is not None:
            try:
                self.proposals[call.index] = doctor.propose(call.problems, str(self.script), call)
            except Exception as e:  # a fixer's bug must not cost the user the diagnosis itself
                call.problems.note = (call.problems.note + " " if call.problems.note else "") + (
                    f"No fixes could be proposed ({type(e).__name__}: {e}).")

    def _diagnose(self, call: ExportCall, a: dict[str, Any]) -> None:
        """With `diagnose`: run torch's draft export with the call's own arguments and record every problem; where
        draft export is missing or fails, say so and keep the real export's one failure (doctor.fallback)."""
        if not self.diagnose:
            return
        self.emit({"type": PROGRESS, "stage": "diagnose", "message": f"Diagnosing export #{call.index} (draft export)"})
        draft = getattr(self.torch.export, "draft_export", None)
        if draft is None:
            call.problems = doctor.fallback(f"torch {self.torch.__version__} has no torch.export.draft_export",
                                            call.failure, call.dynamic_shapes_spec)
            return
        names = ("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature")
        try:
            ep = draft(**{k: a[k] for k in names if k in a})
            report = ep._report
        except Exception as e:  # torch's own limits (real-tensor propagation fails on some models)
            first = (str(e).strip().splitlines() or [""])[0][:300]
            call.problems = doctor.fallback(f"{type(e).__name__}: {first}", call.failure, call.dynamic_shapes_spec)
            return
        try:  # file ids torch's structured log interned before this call (the report names only newer ones)
            from torch._logging.structured import INTERN_TABLE
            files = {v: k for k, v in INTERN_TABLE.items()}
        except Exception:
            files = {}
        call.problems = doctor.from_draft(report, str(self.script), call.guards, call.dynamic_shapes, files)
        if not call.ok:  # the program draft export produced anyway, to look at beside the problems
            name = f"{call.index:02d}_{_safe_name(call.model)}.draft.pt2"
            try:
                write_atomically(self.out / name, lambda tmp: self.torch.export.save(ep, tmp))
                call.problems.pt2 = name
            except Exception as e:
                call.problems.note = f"The draft program could not be saved ({type(e).__name__}: {e})."

    def _is_rerun_target(self, index: int, source: str) -> bool:
        if self.rerun is None:
            return False
        return self.rerun.call == index or (self.rerun.call == CONVENTION and source == CONVENTION)

    def _apply_rerun(self, a: dict[str, Any], mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        assert self.rerun is not None
        if self.rerun.strict is not None:
            a["strict"] = bool(self.rerun.strict)
        if self.rerun.dynamic_shapes is not None:
            a["dynamic_shapes"] = dynamic_spec.to_torch(self.rerun.dynamic_shapes, mod, args, kwargs)

    def _guards(self, capture: GuardCapture, mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> GuardLog:
        try:
            names = dynamic_spec.flat_input_names(mod, args, kwargs)
        except Exception:
            names = None
        return resolve_inputs(capture.log, names)

    def _save(self, call: ExportCall, ep: Any) -> None:
        if not self.save:
            return
        name = f"{call.index:02d}_{_safe_name(call.model)}.pt2"
        try:
            write_atomically(self.out / name, lambda tmp: self.torch.export.save(ep, tmp))
            call.pt2 = name
        except Exception as e:  # the export worked; only saving it did not (e.g. an unpicklable constant)
            call.save_error = f"{type(e).__name__}: {e}"

    def _finished(self, call: ExportCall) -> None:
        self.emit({"type": "export_finished", "index": call.index, "ok": call.ok, "pt2": call.pt2,
                   "kind": call.failure.kind if call.failure else None,
                   "message": call.failure.message if call.failure else None,
                   "duration_s": round(call.duration_s, 3)})

    def _call_site(self) -> SourceLine | None:
        """The script line that called export (or the innermost user frame if a helper module called it)."""
        frame: types.FrameType | None = sys._getframe(2)
        fallback = None
        while frame is not None:
            code = frame.f_code
            if same_file(code.co_filename, str(self.script)):
                return _source_line(str(self.script), frame.f_lineno, code.co_name)
            if fallback is None and not is_library_file(code.co_filename):
                fallback = _source_line(code.co_filename, frame.f_lineno, code.co_name)
            frame = frame.f_back
        return fallback


def _blamed_guard_line(failure: Failure, guards: GuardLog) -> SourceLine | None:
    """For a constraint violation torch names no user line: use the first guard on a dimension it complains about."""
    if failure.kind != CONSTRAINT_VIOLATION:
        return None
    named = {s.name for s in guards.symbols if s.source and s.source in failure.message}
    for guard in guards.guards:
        if named & set(guard.symbols) and guard.user_line is not None:
            return guard.user_line
    return None


def item_values(torch: Any, script: str, mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Script line -> the Python number `.item()` returned there, from one eager call of the model on the example
    inputs: the value a `torch._check(a == N)` fix pins (export needed a plain int from tensor data). "error": the
    eager call's own exception, when the model fails without export too."""
    seen: dict[str, Any] = {}
    real = torch.Tensor.item

    def item(self: Any) -> Any:
        value = real(self)
        frame = sys._getframe(1)
        if same_file(frame.f_code.co_filename, script):
            seen.setdefault(str(frame.f_lineno), value)
        return value

    torch.Tensor.item = item
    try:
        with torch.no_grad():
            mod(*args, **kwargs)
    except Exception as e:  # the model fails without export too: no pin can help, and the fix's reason says so
        seen["error"] = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}"
    finally:
        torch.Tensor.item = real
    return seen


def current_frames() -> list[SourceLine]:
    """Frames active now, outermost first: the live Python stack, then the user frames Dynamo is tracing (strict)."""
    frames: list[SourceLine] = []
    for f, lineno in reversed(list(traceback.walk_stack(sys._getframe(1)))):
        frames.append(SourceLine(f.f_code.co_filename, lineno, f.f_code.co_name))
    try:
        from torch._guards import TracingContext

        traced = TracingContext.extract_stack()
    except Exception:
        traced = []
    frames.extend(SourceLine(f.filename, f.lineno or 0, f.name) for f in traced)
    return frames


def _source_line(path: str, lineno: int, function: str) -> SourceLine:
    return with_code(SourceLine(path, lineno, function))


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "program"


def _input_shapes(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, list[int]]:
    """Each top-level tensor input's example shape, for the window's Export options (the real dims)."""
    values = list(args) + list(kwargs.values())
    return {n: [int(s) for s in v.shape] for n, v in zip(names, values) if hasattr(v, "shape") and hasattr(v, "ndim")}


def _spec_or_none(ds: Any, mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return dynamic_spec.from_torch(ds, mod, args, kwargs)
    except Exception:
        return None


def _program_summary(ep: Any) -> dict[str, Any]:
    try:
        nodes = list(ep.graph.nodes)
        return {
            "nodes": len(nodes),
            "ops": sum(1 for n in nodes if n.op == "call_function"),
            "range_constraints": {str(k): str(v) for k, v in ep.range_constraints.items()},
            "user_inputs": list(ep.graph_signature.user_inputs),
        }
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


# --- running the script -----------------------------------------------------------------------------------------

def compile_script(script: Path) -> tuple[types.CodeType | None, ScriptError | None]:
    """Read and compile the script (before torch is imported, so a syntax error is reported at once)."""
    try:
        return compile(script.read_bytes().decode("utf-8"), str(script), "exec"), None
    except OSError as e:
        return None, ScriptError("OSError", f"cannot read the script: {e.strerror}", None,
                                 "Check that the file exists and is readable.", "")
    except UnicodeDecodeError as e:
        return None, ScriptError("UnicodeDecodeError", f"the script is not UTF-8 text ({e.reason} at byte "
                                 f"{e.start})", None, "Save the file as UTF-8.", "")
    except SyntaxError as e:
        line = SourceLine(str(script), e.lineno or 0, "<module>", (e.text or "").strip())
        return None, ScriptError("SyntaxError", e.msg or "invalid syntax", line,
                                 "Fix the syntax error; the script did not run at all.",
                                 "".join(traceback.format_exception_only(type(e), e)))


def run_script(script: Path, code: types.CodeType, recorder: ExportRecorder | None,
               run_as: Path | None = None) -> tuple[dict[str, Any], ScriptError | None]:
    """Execute the compiled script as __main__; return its namespace and the error it stopped with, if any.
    `recorder`: the export calls' (None: the script runs as it is, as the trace job runs it, core/export/trace_job.py).
    `run_as`: the script is a patched copy of that file (the doctor's verification), run as the original runs:
    its `__file__` and argv, its folder on sys.path (behind the copy's, so patched sibling modules win)."""
    module = types.ModuleType("__main__")
    module.__file__ = str(run_as or script)
    module.__dict__["__builtins__"] = __builtins__
    saved_argv, saved_path = sys.argv, list(sys.path)
    # Stays registered until the worker exits: strict export, the convention export and pickling look it up.
    sys.modules["__main__"] = module
    sys.argv = [str(run_as or script)]
    sys.path.insert(0, str(script.parent))
    if run_as is not None:
        sys.path.insert(1, str(run_as.parent))
    error = None
    if recorder is not None:
        recorder.install()
    try:
        exec(code, module.__dict__)
    except SystemExit as e:
        if e.code not in (None, 0):
            error = ScriptError("SystemExit", f"the script called sys.exit({e.code!r})", _innermost(e, script),
                                "The script stopped itself; exports made before it are kept.", _format(e, script))
    except BaseException as e:  # the script's own failure: report it at its line, keep the exports made before
        error = _script_error(e, script, recorder.raised.get(id(e)) if recorder is not None else None)
    finally:
        if recorder is not None:
            recorder.uninstall()
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return module.__dict__, error


def _script_error(e: BaseException, script: Path, failed_call: ExportCall | None = None) -> ScriptError:
    """The error the script stopped with. `failed_call`: the export call that raised it, when the script did not
    catch an export's failure (the hint then says so, not that the script raised the error itself)."""
    chain = exception_chain(e)
    message = chain[0].message
    if isinstance(e, MemoryError) or "can't allocate memory" in message:
        hint = ("The script ran out of memory. Use smaller example inputs or a smaller model, or raise the "
                "worker's memory limit.")
    elif isinstance(e, AttributeError) and "torch" in message and "has no attribute" in message:
        hint = ("The script uses a torch API this torch version does not have (for example "
                "torch.export.export_for_training was removed; use torch.export.export).")
    elif isinstance(e, (ImportError, ModuleNotFoundError)):
        hint = "Install the missing module into the Python that runs the worker, or fix the import."
    elif failed_call is not None:
        where = f" at line {failed_call.line.line}" if failed_call.line else ""
        hint = (f"Export #{failed_call.index}{where} failed and the script did not catch it, so the script stopped "
                "there; exports made before it are kept.")
    else:
        hint = "The script raised this error itself; exports made before it are kept."
    return ScriptError(chain[0].type.removeprefix("builtins."), message, _innermost(e, script), hint,
                       _format(e, script), failed_call.index if failed_call is not None else None)


def _innermost(e: BaseException, script: Path) -> SourceLine | None:
    hits = [f for f in traceback.extract_tb(e.__traceback__) if same_file(f.filename, str(script))]
    if not hits:
        return None
    f = hits[-1]
    return SourceLine(str(script), f.lineno or 0, f.name, (f.line or "").strip())


def _format(e: BaseException, script: Path) -> str:
    """The traceback from the script's first frame on (the worker's own frames say nothing to the user)."""
    tb = e.__traceback__
    while tb is not None and not same_file(tb.tb_frame.f_code.co_filename, str(script)):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(e), e, tb or e.__traceback__))


# --- the module-level convention --------------------------------------------------------------------------------

def convention_export(ns: dict[str, Any], script: Path, recorder: ExportRecorder) -> ScriptError | None:
    """Export `model` with `example_args` (and friends) if the script defines them; errors become ScriptErrors."""
    import torch

    model = ns.get("model")
    if not isinstance(model, torch.nn.Module) or "example_args" not in ns:
        return None
    site = _assignment_line(script, "model")
    example_args = ns["example_args"]
    if not isinstance(example_args, tuple):
        return ScriptError("TypeError", f"example_args must be a tuple, not {type(example_args).__name__}",
                           _assignment_line(script, "example_args"),
                           "Write example_args = (x,) for a single input (note the comma).", "")
    kwargs: dict[str, Any] = {"mod": model, "args": example_args, "kwargs": ns.get("example_kwargs")}
    if "dynamic_shapes" in ns:
        kwargs["dynamic_shapes"] = ns["dynamic_shapes"]
    if "strict" in ns:
        kwargs["strict"] = bool(ns["strict"])
    try:
        recorder.record_call((), kwargs, site=site, source=CONVENTION)
    except Exception:
        pass  # recorded with its failure; not a script error
    return None


def _assignment_line(script: Path, name: str) -> SourceLine | None:
    """The module-level line that assigns `name` (the last one), for pointing at the convention's model."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    line = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            line = node.lineno
    return _source_line(str(script), line, "<module>") if line else None


# --- the job ----------------------------------------------------------------------------------------------------

def parse_request(request: ExportRequest) -> tuple[Path, Rerun | None]:
    """The script and the optional rerun (the schema checked the fields' types; `diagnose` is read by `run`)."""
    if not request.script:
        raise ValueError("the request needs 'script': the path of a Python model script")
    path = Path(request.script).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"the script {path} does not exist or is not a file")
    rerun = request.rerun
    if rerun is None:
        return path, None
    if not (isinstance(rerun.call, int) or rerun.call == CONVENTION):
        raise ValueError("'rerun' must be an object with 'call' (an export call index or \"convention\") and "
                         "optionally 'strict' and 'dynamic_shapes'")
    return path, Rerun(rerun.call, rerun.strict, rerun.dynamic_shapes)


def run(request: ExportRequest, out: Path, emit: Emit) -> ExportDone:
    script, rerun = parse_request(request)
    started = time.monotonic()
    code, error = compile_script(script)
    calls: list[ExportCall] = []
    if code is not None:
        emit({"type": PROGRESS, "stage": "import", "message": "Importing torch"})
        recorder = ExportRecorder(script, out, emit, rerun, diagnose=bool(request.diagnose))
        recorder.save = request.save is not False
        run_as = Path(request.run_as) if request.run_as else None
        emit({"type": PROGRESS, "stage": "script", "message": f"Running {script.name}"})
        ns, error = run_script(script, code, recorder, run_as)
        if error is None:
            emit({"type": PROGRESS, "stage": "convention", "message": "Exporting the module-level model, if any"})
            error = convention_export(ns, script, recorder)
        calls = recorder.calls
        if recorder.proposals:  # the doctor's fixes, proven by exporting a patched copy (core/export/fixes/verify.py)
            fixes = sum(len(c.fixes) for per in recorder.proposals.values() for c in per.values())
            verify(script, calls, recorder.proposals, out, budget_s(time.monotonic() - started, fixes), emit)
    if error is not None:
        emit({"type": "script_error", "error_type": error.type, "message": error.message,
              "line": error.line.line if error.line else None})
    emit({"type": PROGRESS, "stage": "report", "message": "Writing report.json"})
    torch = sys.modules.get("torch")
    report = ExportReport(script=str(script), ok=error is None, calls=calls, script_error=error,
                          torch_version=getattr(torch, "__version__", None),
                          python_version=sys.version.split()[0], duration_s=round(time.monotonic() - started, 3))
    write_json_atomic(out / REPORT_FILE, report.to_json())
    return ExportDone(report=REPORT_FILE, script_ok=error is None, calls=len(calls),
                      exported=sum(1 for c in calls if c.ok), failed=sum(1 for c in calls if not c.ok),
                      programs=[c.pt2 for c in calls if c.pt2])


run_job = TypedJob(run, EXPORT_SCRIPT)  # the worker's entry: the `export_script` job of core/jobs/kinds.py
