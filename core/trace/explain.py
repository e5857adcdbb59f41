"""torch's graph-break and recompile texts, in plain words, with the fix where one is known.

A graph break's payload (`dynamo_graph_break_reason`) reads `Graph break in user code at FILE:LINE`, then
`Graph Break Reason: ...`, `Explanation: ...`, `Hint: ...` lines, the graph-break site's page (`.../gb/gb0170.html`)
and the user's traceback. A recompile's payload (`recompile_reasons`) holds each failed guard as torch wrote it,
`0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3`.
"""
from __future__ import annotations

import json
import re

from pt2_viewer.core.trace.model import GraphBreak

_AT = re.compile(r"Graph break in user code at (.+):(\d+)\s*$", re.M)
_REASON = re.compile(r"Graph Break Reason:\s*(.*?)\s*(?:\n\s*Explanation:|\n\s*Hint:|\n\s*Developer debug context|"
                     r"\n\s*For more details|\nUser code traceback|\Z)", re.S)
_EXPLANATION = re.compile(r"^\s*Explanation:\s*(.*?)(?=^\s*Hint:|^\s*Developer debug context|^\s*For more details|"
                          r"^User code traceback|\Z)", re.S | re.M)
_HINT = re.compile(r"^\s*Hint:\s*(.+)$", re.M)
_PAGE = re.compile(r"(https?://\S+/(gb\d+)\.html)")
_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$', re.M)
_TORCH_FILE = re.compile(r"[/\\]torch[/\\]")

# (what the reason or explanation says, the fix), first match wins.
FIXES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"data-dependent branching|dynamic control flow", re.I),
     "express the branch with torch.cond(pred, true_fn, false_fn, operands) so both sides are traced"),
    (re.compile(r"\.item\(\)|capture_scalar_outputs|Tensor\.item", re.I),
     "set torch._dynamo.config.capture_scalar_outputs = True to trace .item() into the graph"),
    (re.compile(r"`print`|builtin `?print|logging|reorderable_logging_functions", re.I),
     "add the function to torch._dynamo.config.reorderable_logging_functions (e.g. {print}) so it runs after the "
     "graph instead of breaking it"),
    (re.compile(r"data.dependent (expression|output shape|symbol)|unbacked|dynamic.output.shape", re.I),
     "tell torch what the size can be with torch._check(...) (e.g. torch._check(n >= 0)) before it is used"),
]


def is_torch_file(path: str) -> bool:
    """A file of torch itself (the user's line is never one)."""
    return bool(_TORCH_FILE.search(path))


def read_graph_break(text: str) -> GraphBreak | None:
    """The graph break a `dynamo_graph_break_reason` payload describes, at the user's own line: torch's own
    `user code at` place, or the innermost frame of the user's traceback outside torch."""
    head, _, traceback = text.partition("User code traceback:")
    at = _AT.search(head)
    place = (at.group(1), int(at.group(2))) if at else None
    if place is None or is_torch_file(place[0]):
        frames = [(f, int(n)) for f, n, _ in _FRAME.findall(traceback.split("\nTraceback (most recent")[0])
                  if not is_torch_file(f)]
        place = frames[-1] if frames else place
    if place is None:
        return None
    reason_match = _REASON.search(head)
    # torch's reason may start with where it was ("Encountered graph break when attempting to trace CALL: ..."),
    # a blank line before the break's own title: the title is the last paragraph
    reason = _first_or_last(reason_match.group(1), last=True) if reason_match else head.strip().splitlines()[0]
    explanation = _EXPLANATION.search(head)
    page = _PAGE.search(head)
    hints = [" ".join(h.split()) for h in _HINT.findall(head)]
    explained = _first_or_last(explanation.group(1), last=False) if explanation else ""  # not the code it quotes
    return GraphBreak(file=place[0], line=place[1], reason=reason, explanation=explained, hints=hints,
                     code=page.group(2) if page else None, url=page.group(1) if page else None,
                     fix=fix_for(" ".join([reason, explained, *hints])))


def _first_or_last(text: str, *, last: bool) -> str:
    """The first (or last) paragraph of `text`, on one line."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return (paragraphs[-1] if last else paragraphs[0]) if paragraphs else ""


def fix_for(text: str) -> str | None:
    return next((fix for pattern, fix in FIXES if pattern.search(text)), None)


_SIZE = re.compile(r"^(?:(\S+): )?tensor '(.+)' (size|stride) mismatch at index (\d+)\. expected (\S+), actual (\S+)$")
_DTYPE = re.compile(r"^(?:(\S+): )?tensor '(.+)' (dtype|device|requires_grad|dispatch key set) mismatch\. "
                    r"expected (.+), actual (.+)$")
_OTHER = re.compile(r"^(\d+/\d+): (.+)$")
_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16", "Int": "int32",
           "Long": "int64", "Bool": "bool", "Byte": "uint8", "Char": "int8", "Short": "int16"}
_METHOD = {"size": "size", "stride": "stride", "dtype": "dtype", "device": "device",
           "requires_grad": "requires_grad", "dispatch key set": "dispatch keys"}


def guard_failures(text: str) -> list[str]:
    """The failed guards of a `recompile_reasons` payload: a JSON list of strings when there are several, the one
    line itself otherwise."""
    try:
        value = json.loads(text)
    except ValueError:
        return [line.strip() for line in text.splitlines() if line.strip()]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def in_words(failure: str) -> str:
    """One failed guard in plain words: "`x.size(0)` was 2 when compiled for [0/0], now 3"."""
    failure = " ".join(failure.split())
    if m := _SIZE.match(failure):
        owner, name, what, index, before, now = m.groups()
        return f"`{name}.{what}({index})` was {before} when compiled{_for(owner)}, now {now}"
    if m := _DTYPE.match(failure):
        owner, name, what, before, now = m.groups()
        if what == "dtype":
            before, now = _DTYPES.get(before, before), _DTYPES.get(now, now)
        return f"`{name}.{_METHOD[what]}` was {before} when compiled{_for(owner)}, now {now}"
    if m := _OTHER.match(failure):
        return f"{m.group(2)} (a guard of [{m.group(1)}] failed)"
    return failure


def _for(owner: str | None) -> str:
    return f" for [{owner}]" if owner else ""
