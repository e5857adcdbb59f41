"""torch's words for a failed export, said in the user's: the one formatter every place that shows a failure uses
(the Exports list, the status bar, the Problems panel, the script's summary line, the report).

torch writes its symbols and sources as it traced them: `Eq(s97, s52)`, `L['a'].size()[0]`, `u0`, `VR[2, int_oo]`.
The user wrote `a`, `b` and `Dim("batch")`. `user_words` rewrites a text with the names known (an input's
dimension `a.shape[0]`, the script's Dim name, the variable that holds an `.item()`), and `requirements` states a
constraint violation's suggested fixes as what the model requires: "export requires a.shape[0] == b.shape[0]".
A symbol with no name left is called "a value read from tensor data" or "a dynamic size", never `u0`/`s97`.

No torch, no Qt: plain strings.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pt2_viewer.core.export.failures import (
    DATA_DEPENDENT_GUARD,
    SPECIALIZED_VALUE,
    Failure,
    SpecChange,
    first_sentence,
    plain_sentence,
)

_SOURCE = re.compile(r"L\[['\"]([^'\"\]]+)['\"]\]((?:\[[^\]]+\])*)(?:\.size\(\)\[(\d+)\])?")
_SYMBOL = re.compile(r"\b([su]\d+|zuf\d+|f\d+)\b")
_EQ = re.compile(r"\b(Eq|Ne)\(([^(),]+(?:\([^()]*\))?[^(),]*), ([^(),]+(?:\([^()]*\))?[^(),]*)\)")
_NOISE = re.compile(r"\s*(?:\(unhinted: .*?\)(?=\.|\s*\(Size-like|\s*$)"
                    r"|For more information, run with TORCH_LOGS=\"?\+dynamic\"?\.?"
                    r"|, for more info run with TORCH_LOGS=\S+|\(Size-like symbols: [^)]*\))")
_RANGE = re.compile(r"VR\[(-?\w+), (-?\w+)\]")


def source_text(source: str) -> str:
    """torch's source of a value (`L['a'].size()[0]`, `L['x']`) as the user writes it (`a.shape[0]`, `x`)."""
    def one(m: re.Match[str]) -> str:
        name = m.group(1) + m.group(2)
        return f"{name}.shape[{m.group(3)}]" if m.group(3) else name
    return _SOURCE.sub(one, source)


def user_words(text: str, names: Mapping[str, str] | None = None) -> str:
    """`text` with torch's sources, sympy spellings and symbols replaced by the user's names (`names`: torch's symbol
    -> the user's name); a symbol without a name becomes words, so no `u0`/`s97`/`L['a']` is left."""
    names = names or {}
    out = _NOISE.sub("", source_text(text))
    out = _RANGE.sub(lambda m: f"[{m.group(1)}, {m.group(2)}]".replace("int_oo", "∞"), out)
    out = _SYMBOL.sub(lambda m: names.get(m.group(1)) or _unnamed(m.group(1)), out)
    for _ in range(3):  # nested Eq(...) once or twice at most
        out = _EQ.sub(lambda m: f"{m.group(2).strip()} {'==' if m.group(1) == 'Eq' else '!='} {m.group(3).strip()}",
                      out)
    out = re.sub(r"\bMod\(([^(),]+), ([^(),]+)\)", lambda m: f"{_paren(m.group(1))} % {m.group(2).strip()}", out)
    out = re.sub(r"\(\(([^()]*)\)\)", r"(\1)", out)
    return re.sub(r"\s+([.,;])", r"\1", out).strip()


def _paren(text: str) -> str:
    text = text.strip()
    return f"({text})" if re.search(r"[-+* /]", text) else text


def _unnamed(symbol: str) -> str:
    return "a dynamic size" if symbol.startswith("s") else "a value read from tensor data"


def symbol_names(symbols: Any, dim_names: Mapping[str, str] | None = None) -> dict[str, str]:
    """torch's symbol -> the user's name, from a GuardLog's symbols: a script's Dim name when the spec gave one
    (`dim_names`: {"x.shape[0]": "batch"}), else the input dimension it stands for (`x.shape[0]`), else the
    variable assigned on the line that made an unbacked one (`a = x.item()` -> `a`)."""
    out: dict[str, str] = {}
    for s in symbols or []:
        if s.input is not None and s.axis is not None:
            dim = f"{s.input}.shape[{s.axis}]"
            out[s.name] = (dim_names or {}).get(dim, dim)
        elif s.unbacked and s.user_line is not None:
            m = re.match(r"^\s*([A-Za-z_]\w*)\s*=[^=]", s.user_line.code or "")
            if m:
                out[s.name] = m.group(1)
    return out


def uses_of_dims(spec: Mapping[str, Any] | None) -> dict[str, list[tuple[str, int, int]]]:
    """Dim name -> the input dimensions that use it, as (`x.shape[0]`, mul, add), from the JSON dynamic_shapes."""
    out: dict[str, list[tuple[str, int, int]]] = {}
    for name, dims in ((spec or {}).get("inputs") or {}).items():
        if isinstance(dims, list):
            for axis, d in enumerate(dims):
                if isinstance(d, Mapping) and isinstance(d.get("dim"), str):
                    out.setdefault(d["dim"], []).append((f"{name}.shape[{axis}]", int(d.get("mul", 1)),
                                                         int(d.get("add", 0))))
    return out


def _linear(base: str, mul: int, add: int) -> str:
    text = f"{mul}*{base}" if mul != 1 else base
    return text + (f" + {add}" if add > 0 else f" - {-add}" if add < 0 else "")


def requirements(changes: list[SpecChange], spec: Mapping[str, Any] | None) -> list[str]:
    """Each suggested change as what the model requires of the inputs: `a.shape[0] == b.shape[0]`,
    `3 <= x.shape[0] <= 64`, `x.shape[1] == 4` (the Dim's own name where no input uses it)."""
    uses = uses_of_dims(spec)
    out: list[str] = []

    def dims(name: str) -> list[str]:
        return [_linear(u, m, a) if (m, a) != (1, 0) else u for u, m, a in uses.get(name, [])] or [name]
    for c in changes:
        if c.action == "relate" and c.dim and c.root:
            for mine in dims(c.dim):
                root = dims(c.root)[0] if c.root in uses else c.root
                related = _linear(root, c.mul, c.add)
                out.append(f"{root} == {mine}" if (c.mul, c.add) == (1, 0) else f"{mine} == {related}")
        elif c.action == "set_range" and c.dim:
            for d in dims(c.dim):
                lo = f"{c.min} <= " if c.min is not None else ""
                hi = f" <= {c.max}" if c.max is not None else ""
                out.append(f"{lo}{d}{hi}" if lo or hi else f"{d} is dynamic")
        elif c.action == "make_static" and c.dim:
            out += [f"{d} == {c.value}" for d in dims(c.dim)]
        elif c.action == "make_static" and c.input is not None and c.axis is not None:
            out.append(f"{c.input}.shape[{c.axis}] == {c.value}")
    return list(dict.fromkeys(out))


def requirement_sentence(changes: list[SpecChange], spec: Mapping[str, Any] | None) -> str:
    """"export requires a.shape[0] == b.shape[0]": what the dynamic_shapes spec must say and does not."""
    reqs = requirements(changes, spec)
    return f"export requires {' and '.join(reqs)}" if reqs else ""


def headline(failure: Failure, spec: Mapping[str, Any] | None = None, names: Mapping[str, str] | None = None) -> str:
    """The one line that says why an export failed, in the user's words: for the Exports list, the status bar, the
    Problems panel, the script's summary and the report. A constraint violation says what the model requires."""
    if failure.fixes:
        said = requirement_sentence(failure.fixes, spec)
        if said:
            return said[0].upper() + said[1:] + "."
    code = (failure.user_line.code or "").strip() if failure.user_line is not None else ""
    if failure.kind == DATA_DEPENDENT_GUARD and code:
        return f"Export cannot decide `{code.rstrip(':').strip()}` while tracing: it depends on tensor data."
    if failure.kind == SPECIALIZED_VALUE and code:
        return f"Export needs a plain Python int from tensor data in `{code}`."
    sentence = plain_sentence(failure)
    if not sentence.startswith("Export failed: "):
        return sentence
    return "Export failed: " + user_words(first_sentence(sentence.removeprefix("Export failed: ")), names)


def detail(failure: Failure, names: Mapping[str, str] | None = None) -> str:
    """torch's key message with its symbols and sources in the user's words (several lines)."""
    return "\n".join(user_words(ln, names) for ln in failure.message.splitlines() if ln.strip())
