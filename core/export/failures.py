"""Explain why a `torch.export` call failed: what kind of failure, which user line, what to do.

torch raises the same problem as different exception classes in strict and non-strict mode (strict wraps
data-dependent errors in `UserError`, non-strict raises `GuardOnDataDependentSymNode`), and the useful part of a
message (export's "Suggested fixes") comes after its first lines. So classification reads the whole exception chain:
every type name and every message, never just the outermost class.

This module never imports torch: the worker turns a live exception into plain `ChainLink`s with `exception_chain`,
and everything else works on strings, so it is testable and usable in the GUI process. Constraint-violation fixes are
parsed into `SpecChange`s that `apply_changes` applies to the JSON `dynamic_shapes` spec (see `docs/worker.md`), so the
GUI can apply export's suggestion and export again.
"""
from __future__ import annotations

import linecache
import os
import re
import sysconfig
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

# Failure kinds, in the order they are tested (a constraint violation may mention data-dependent words).
CONSTRAINT_VIOLATION = "constraint_violation"
SPECIALIZED_VALUE = "specialized_value"
DATA_DEPENDENT_GUARD = "data_dependent_guard"
GRAPH_BREAK = "graph_break"
UNTRACEABLE_DATA = "untraceable_data"
OTHER = "other"

TITLES = {
    CONSTRAINT_VIOLATION: "Dynamic shapes spec contradicts the model (constraint violation)",
    SPECIALIZED_VALUE: "Needs a concrete value from tensor data (specialized value)",
    DATA_DEPENDENT_GUARD: "Branch or check on tensor data (data-dependent guard)",
    GRAPH_BREAK: "Graph break or unsupported Python in strict mode",
    UNTRACEABLE_DATA: "Tensor data changed outside the traced operations (.data, in-place writes to inputs' storage)",
    OTHER: "Export failed",
}

HINTS = {
    CONSTRAINT_VIOLATION: (
        "Your dynamic_shapes spec promises more freedom than the model allows (a dimension it fixes, dimensions it "
        "requires equal, or a narrower range). Apply the suggested fixes (Dim ranges, equal dims, static dims), or "
        "use Dim.AUTO and let export work out the relations."
    ),
    SPECIALIZED_VALUE: (
        "The code needs a concrete Python int from tensor data (int(), range(), a list built from .item()). Avoid "
        "the cast, rewrite at a higher level (e.g. y.repeat(a, 1) instead of torch.cat over range(a)), or pin the "
        "value with torch._check(a == N)."
    ),
    DATA_DEPENDENT_GUARD: (
        "A branch or check depends on a value read from a tensor (.item(), .tolist(), nonzero()). Tell the "
        "compiler what it may assume with torch._check(...) (e.g. torch._check(a >= 0)), or express the branch "
        "with torch.cond(pred, true_fn, false_fn, operands)."
    ),
    GRAPH_BREAK: (
        "Strict export traces Python bytecode with TorchDynamo, which cannot follow this construct. Rewrite it "
        "(data-dependent `if` -> torch.cond; Python builtins such as id() -> tensor code), or export with "
        "strict=False, which runs your Python as-is and records only the tensor operations."
    ),
    UNTRACEABLE_DATA: (
        "Non-strict export runs your Python as-is and records only tensor operations; a write through `.data` (or a "
        "tensor made outside those operations) escapes the trace and ends up as a fake constant. Use ordinary tensor "
        "ops instead (x = x.clone(); x[0, 0] = 3), keep state in registered buffers, or export with strict=True to "
        "see the exact construct as a graph break."
    ),
    OTHER: "Read the message and the traceback below. If it comes from strict tracing, try strict=False.",
}

_TORCH_HINT = re.compile(r"^\s*Hint: (.+)$", re.MULTILINE)
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+), in (\S+)(?:, code: (.*))?')
_SHORT_LOC = re.compile(r"(?:#\s*)?([\w./\\-]+\.py):(\d+) in (\w+|<\w+>)")
_FIX_DIM = re.compile(r"^(\w+) = Dim\('(\w+)'(.*)\)$")
_FIX_MIN = re.compile(r"min=(-?\d+)")
_FIX_MAX = re.compile(r"max=(-?\d+)")
_FIX_LINEAR = re.compile(r"^(?:(-?\d+)\*)?([A-Za-z_]\w*)(?:\s*([+-])\s*(\d+))?$")
_MARKED_DYNAMIC = re.compile(
    r"You marked (.+?) as dynamic but your code specialized it to be a constant \((-?\d+)\)"
)
_SOURCE_DIM = re.compile(r"^L\[(.+?)\]((?:\[[^\]]+\])*)\.size\(\)\[(\d+)\]$")


@dataclass
class SourceLine:
    """A line of the user's script (or of a file it imports), as shown to the user."""

    file: str
    line: int
    function: str = ""
    code: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" + (f" in {self.function}" if self.function else "")
        return where + (f": {self.code}" if self.code else "")


@dataclass
class ChainLink:
    """One exception of a chain (`raise ... from ...`), as plain text."""

    type: str  # fully qualified class name, e.g. "torch._dynamo.exc.UserError"
    message: str


@dataclass
class SpecChange:
    """One change to a dynamic_shapes spec, parsed from export's "Suggested fixes" or its violation bullets.

    action is one of:
      "set_range"   named Dim `dim` gets `min`/`max` (None = unbounded)
      "make_static" named Dim `dim`, or input dimension `input`/`axis`, becomes the constant `value`
      "relate"      named Dim `dim` becomes `mul * root + add` (root: another named Dim, possibly new)
    """

    action: str
    dim: str | None = None
    input: str | None = None
    axis: int | None = None
    min: int | None = None
    max: int | None = None
    value: int | None = None
    root: str | None = None
    mul: int = 1
    add: int = 0
    text: str = ""


@dataclass
class Failure:
    """Why one export call failed, for the report and the GUI."""

    kind: str
    title: str
    message: str
    hint: str
    exception_type: str
    user_line: SourceLine | None = None
    fixes: list[SpecChange] = field(default_factory=list)
    suggested_fixes_text: list[str] = field(default_factory=list)
    torch_hints: list[str] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)
    traceback: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def exception_chain(exc: BaseException) -> list[ChainLink]:
    """The exception and its causes/contexts, outermost first, as plain text."""
    links: list[ChainLink] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        t = type(cur)
        links.append(ChainLink(f"{t.__module__}.{t.__qualname__}", _message_of(cur)))
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)
    return links


def _message_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception as e:  # a broken __str__ must not hide the failure
        return f"<could not format {type(exc).__name__}: {e}>"


def classify(chain: list[ChainLink], traceback_text: str = "", script_path: str | None = None,
             frames: list[SourceLine] | None = None) -> Failure:
    """Classify a failed export from its exception chain; `frames` are the traceback's frames, outermost first."""
    if not chain:
        raise ValueError("classify() needs at least one exception in the chain")
    text = "\n".join(link.message for link in chain)
    types = " ".join(link.type for link in chain)
    kind = _kind(types, text)
    fixes, fix_lines = (parse_constraint_fixes(text) if kind == CONSTRAINT_VIOLATION else ([], []))
    return Failure(
        kind=kind,
        title=TITLES[kind],
        message=key_message(kind, chain),
        hint=HINTS[kind],
        exception_type=chain[0].type,
        user_line=find_user_line(text, frames or [], script_path),
        fixes=fixes,
        suggested_fixes_text=fix_lines,
        torch_hints=_unique(m.strip() for m in _TORCH_HINT.findall(text)),
        chain=[link.type for link in chain],
        traceback=traceback_text,
    )


def classify_exception(exc: BaseException, script_path: str | None = None) -> Failure:
    """Classify a live exception (in the worker): chain, full traceback and the frames it went through."""
    tb_text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    frames = [SourceLine(f.filename, f.lineno or 0, f.name, (f.line or "").strip())
              for f in traceback.extract_tb(exc.__traceback__)]
    return classify(exception_chain(exc), tb_text, script_path, frames)


def _kind(types: str, text: str) -> str:
    if ("ConstraintViolationError" in types or "Constraints violated" in text
            or "Specializations unexpectedly required" in text or "Suggested fixes:" in text):
        return CONSTRAINT_VIOLATION
    if "Could not extract specialized integer" in text or "Could not extract specialized" in text:
        return SPECIALIZED_VALUE
    if ("Could not guard on data-dependent expression" in text or "GuardOnDataDependentSymNode" in types
            or ("data-dependent" in text.lower() and "UserError" in types)):
        return DATA_DEPENDENT_GUARD
    if "torch._dynamo.exc.Unsupported" in types or "graph break" in text.lower():
        return GRAPH_BREAK
    if "found a fake tensor in the exported program constant" in text:
        return UNTRACEABLE_DATA
    return OTHER


SENTENCES = {
    CONSTRAINT_VIOLATION: "Your dynamic_shapes spec allows shapes that the model does not accept.",
    SPECIALIZED_VALUE: "The model needs a plain Python number read from tensor data, which export cannot know while "
                       "it traces.",
    DATA_DEPENDENT_GUARD: "The model decides something from a value read from tensor data, which export cannot know "
                          "while it traces.",
    GRAPH_BREAK: "Strict export (TorchDynamo) cannot trace a piece of Python the model runs.",
    UNTRACEABLE_DATA: "The model changes tensor data outside the traced operations (through .data or in place).",
}


def plain_sentence(failure: Failure) -> str:
    """One plain sentence that says what went wrong, before torch's own message: the kind's sentence, else torch's
    first whole sentence (never cut in the middle)."""
    if failure.kind in SENTENCES:
        return SENTENCES[failure.kind]
    text = failure.message.split(": ", 1)[-1] if failure.message.startswith(failure.exception_type.rsplit(".", 1)[-1]
                                                                            ) else failure.message
    return f"Export failed: {first_sentence(text)}"


def first_sentence(text: str) -> str:
    """The first whole sentence of a message (its first line when that has no sentence end): never cut mid-way."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    m = re.match(r"(.+?[.!?])(\s|$)", first)
    return m.group(1) if m else first


def key_message(kind: str, chain: list[ChainLink]) -> str:
    """The few lines a user needs, not the whole wall of text."""
    text = "\n".join(link.message for link in chain)
    lines = [ln.rstrip() for ln in text.splitlines()]
    if kind == CONSTRAINT_VIOLATION:
        head = [ln.strip() for ln in lines if ln.startswith(("Constraints violated", "Specializations unexpectedly"))]
        bullets = [ln.strip() for ln in lines if ln.strip().startswith("- ")]
        return "\n".join(_unique(head[:1] + bullets))
    if kind in (SPECIALIZED_VALUE, DATA_DEPENDENT_GUARD):
        for ln in lines:
            m = re.search(r"Could not (?:guard on|extract specialized) .*", ln)
            if m:
                return m.group(0).strip()
    if kind == GRAPH_BREAK:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        explanation = next((ln.strip() for ln in lines if ln.strip().startswith("Explanation:")), "")
        return "\n".join(x for x in (first, explanation) if x)
    outer = chain[0]
    first = next((ln.strip() for ln in outer.message.splitlines() if ln.strip()), "")
    return f"{outer.type.rsplit('.', 1)[-1]}: {first}" if first else outer.type.rsplit(".", 1)[-1]


def find_user_line(text: str, frames: list[SourceLine], script_path: str | None) -> SourceLine | None:
    """The innermost line of the user's script involved in the failure.

    Strict mode traces symbolically, so the user's `forward` frames appear only in the message ("from user code:",
    `File "...", line N`, or a shortened `dir/script.py:16 in forward`) and the traceback reaches only the export
    call; non-strict mode has them in the traceback too. Message frames win, then traceback frames, innermost first;
    without a frame in the script itself, the innermost frame outside libraries is used.
    """
    in_message = [SourceLine(m.group(1), int(m.group(2)), m.group(3), (m.group(4) or "").strip())
                  for m in _FILE_LINE.finditer(text)]
    if script_path:
        for group in (in_message, frames):
            hits = [f for f in group if same_file(f.file, script_path)]
            if hits:
                return with_code(SourceLine(script_path, hits[-1].line, hits[-1].function, hits[-1].code))
        short = [m for m in _SHORT_LOC.finditer(text) if same_file(m.group(1), script_path)]
        if short:
            return with_code(SourceLine(script_path, int(short[-1].group(2)), short[-1].group(3)))
    user = [f for f in in_message + frames if not is_library_file(f.file)]
    return user[-1] if user else None


def with_code(line: SourceLine) -> SourceLine:
    """Fill in the line's source text from the file, if it is missing."""
    if not line.code and not line.file.startswith("<"):
        line.code = linecache.getline(line.file, line.line).strip()
    return line


def same_file(candidate: str, script_path: str) -> bool:
    """True if `candidate` names the script. torch shortens paths to their last characters ("mp/x/s.py" for
    "/tmp/x/s.py"), so a relative candidate that contains a directory matches the end of the script's path."""
    if not candidate or not script_path:
        return False
    if os.path.isabs(candidate):
        return os.path.realpath(candidate) == os.path.realpath(script_path)
    tail = candidate.replace("\\", "/").lstrip("./")
    return "/" in tail and script_path.replace("\\", "/").endswith(tail)


_LIBRARY_DIRS = tuple(
    {os.path.realpath(p) + os.sep for k, p in sysconfig.get_paths().items() if k in ("stdlib", "purelib", "platlib")}
    | {os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep}  # pt2_viewer.core: the worker itself
)


def is_library_file(path: str) -> bool:
    """Files that are not the user's: the standard library, site-packages (torch), frozen modules, this app's core."""
    if not path or path.startswith("<"):
        return True
    real = os.path.realpath(path)
    return real.startswith(_LIBRARY_DIRS) or "/site-packages/" in real


def parse_constraint_fixes(text: str) -> tuple[list[SpecChange], list[str]]:
    """Parse export's "Suggested fixes:" block and its "You marked X as dynamic" bullets into SpecChanges."""
    changes: list[SpecChange] = []
    fix_lines: list[str] = []
    if "Suggested fixes:" in text:
        for raw in text.split("Suggested fixes:", 1)[1].splitlines():
            line = raw.strip()
            if not line:
                if fix_lines:
                    break
                continue
            change = parse_fix_line(line)
            if change is None:
                break  # the block ended (torch appends a hint paragraph after it)
            fix_lines.append(line)
            changes.append(change)
    fixed_dims = {c.dim for c in changes}
    for m in _MARKED_DYNAMIC.finditer(text):
        source, value = m.group(1), int(m.group(2))
        dim = _SOURCE_DIM.match(source)
        if dim:  # an unnamed dimension (Dim.AUTO/DYNAMIC) was specialized: make that input dimension static
            change = SpecChange("make_static", input=readable_input(dim.group(1), dim.group(2)),
                                axis=int(dim.group(3)), value=value, text=m.group(0))
        elif source not in fixed_dims and re.fullmatch(r"\w+", source):
            change = SpecChange("make_static", dim=source, value=value, text=m.group(0))
        else:
            continue
        if change not in changes:
            changes.append(change)
    return changes, fix_lines


def parse_fix_line(line: str) -> SpecChange | None:
    """One line of "Suggested fixes": `dx = Dim('dx', min=4, max=256)`, `d1 = 4`, `dy = dx`, `dx = 2*_dx + 1`."""
    m = _FIX_DIM.match(line)
    if m:
        lo, hi = _FIX_MIN.search(m.group(3)), _FIX_MAX.search(m.group(3))
        return SpecChange("set_range", dim=m.group(1), min=int(lo.group(1)) if lo else None,
                          max=int(hi.group(1)) if hi else None, text=line)
    if " = " not in line:
        return None
    name, expr = (s.strip() for s in line.split(" = ", 1))
    if not re.fullmatch(r"\w+", name):
        return None
    if re.fullmatch(r"-?\d+", expr):
        return SpecChange("make_static", dim=name, value=int(expr), text=line)
    lin = _FIX_LINEAR.match(expr)
    if lin:
        add = int(lin.group(4) or 0) * (-1 if lin.group(3) == "-" else 1)
        return SpecChange("relate", dim=name, root=lin.group(2), mul=int(lin.group(1) or 1), add=add, text=line)
    return None


def readable_input(first_key: str, rest: str = "") -> str:
    """`'x'` + `[0]` (from L['x'][0]) -> `x[0]`; strict mode's `'flat_args'` keys are kept as given."""
    return first_key.strip("'\"") + rest


# --- the JSON dynamic_shapes spec ------------------------------------------------------------------------------
# {"dims": {"dx": {"min": 4, "max": 256}}, "inputs": {"x": [{"dim": "dx"}, "static"], "y": null}}
# A dimension entry is "static", "auto", "dynamic", an int (that exact size), or {"dim": NAME, "mul": 2, "add": 1}.

def apply_changes(spec: dict[str, Any], changes: list[SpecChange]) -> dict[str, Any]:
    """Return a new JSON dynamic_shapes spec with `changes` applied (the input spec is not modified)."""
    dims: dict[str, dict[str, Any]] = {k: dict(v or {}) for k, v in (spec.get("dims") or {}).items()}
    inputs: dict[str, Any] = {k: (list(v) if isinstance(v, list) else v)
                              for k, v in (spec.get("inputs") or {}).items()}
    for change in changes:
        if change.action == "set_range" and change.dim:
            dims[change.dim] = {k: v for k, v in (("min", change.min), ("max", change.max)) if v is not None}
        elif change.action == "make_static" and change.dim:
            value = change.value
            _rewrite_refs(inputs, change.dim, lambda ref, value=value: ref.get("mul", 1) * value + ref.get("add", 0))
            dims.pop(change.dim, None)
        elif change.action == "make_static" and change.input is not None and change.axis is not None:
            entry = inputs.get(change.input)
            if isinstance(entry, list) and change.axis < len(entry):
                entry[change.axis] = "static"
        elif change.action == "relate" and change.dim and change.root:
            def relate(ref: dict[str, Any], c: SpecChange = change) -> dict[str, Any]:
                mul, add = ref.get("mul", 1), ref.get("add", 0)
                return _ref(c.root or "", mul * c.mul, mul * c.add + add)
            _rewrite_refs(inputs, change.dim, relate)
            dims.pop(change.dim, None)
            dims.setdefault(change.root, {})
        else:
            raise ValueError(f"cannot apply {change.action!r} change: {change.text or change}")
    return {"dims": dims, "inputs": inputs}


def _ref(name: str, mul: int = 1, add: int = 0) -> dict[str, Any]:
    ref: dict[str, Any] = {"dim": name}
    if mul != 1:
        ref["mul"] = mul
    if add:
        ref["add"] = add
    return ref


def _rewrite_refs(inputs: dict[str, Any], name: str, new: Any) -> None:
    for key, entry in inputs.items():
        if isinstance(entry, list):
            inputs[key] = [new(e) if isinstance(e, dict) and e.get("dim") == name else e for e in entry]


def _unique(items: Any) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
    return out


def failure_from_json(d: dict[str, Any]) -> Failure:
    """Rebuild a Failure from report.json (the GUI reads reports without torch)."""
    d = dict(d)
    line = d.pop("user_line", None)
    fixes = [SpecChange(**f) for f in d.pop("fixes", [])]
    return Failure(**d, user_line=SourceLine(**line) if line else None, fixes=fixes)
