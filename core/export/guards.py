"""Capture and explain the symbols and guards torch creates while exporting with dynamic shapes.

`TORCH_LOGS="+dynamic"` prints where each shape symbol comes from (`create_symbol s0 = 6 for L['w'].size()[0]`) and
every guard the model adds (`eval Eq(s2, s4) [guard added] x0 = x + y  # script.py:16 in forward`). Those lines come
from the logger `torch.fx.experimental.symbolic_shapes` (torch 2.13: ShapeEnv's `create_symbol`,
`create_unbacked_symint`, `_log_guard`). `GuardCapture` hooks that logger for the length of one export call, keeps the
records, and still passes on to torch's own handlers exactly what the user asked torch to print.

Non-strict export logs no user line for a guard, so the capture also asks a `frames` callback (supplied by the worker,
which can look at torch's TracingContext and the live Python stack) for the frames active when the guard was added.

This module never imports torch; the parsing functions work on plain log messages.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pt2_viewer.core.export.failures import SourceLine, is_library_file, readable_input, same_file, with_code
from pt2_viewer.core.model.expr import range_text, torch_range_text

# The loggers that carry TORCH_LOGS="dynamic" output in torch 2.13.
SYMBOLIC_SHAPES_LOGGER = "torch.fx.experimental.symbolic_shapes"
LOGGERS = (SYMBOLIC_SHAPES_LOGGER,)
MAX_RAW_LINES = 2000

_CREATE = re.compile(r"^create_symbol (\w+) = (\S+) for (.+?) \[(.+?), (.+?)\](?: \((.+?)\))?(?:, for more info.*)?$",
                     re.DOTALL)
_UNBACKED = re.compile(r"^create_unbacked_sym(?:int|float|bool) (\w+) \[(.+?), (.+?)\] ?(.*?)(?:, for more info.*)?$",
                       re.DOTALL)
_GUARD = re.compile(r"^(\w+)( \(forcing_spec\))? (.+?) \[guard added\] ?(.*?)(?:, for more info run with .*)?$",
                    re.DOTALL)
_SLOC = re.compile(r"^(?:(?P<code>.*?)\s+#\s+(?P<file>\S+):(?P<line>\d+) in (?P<func>\S+) ?)?(?:\((?P<fw>[^()]*)\))?$",
                   re.DOTALL)
_SIZE_SOURCE = re.compile(r"^L\[(.+?)\]((?:\[[^\]]+\])*)\.size\(\)\[(\d+)\]$")
_FLAT_ARG = re.compile(r"^L\['flat_args'\]\[(\d+)\]")
_SYMBOL = re.compile(r"\b([su]\d+)\b")


@dataclass
class SymbolInfo:
    """A shape symbol: `s0` for an input dimension (backed) or `u0` for a value read from tensor data (unbacked)."""

    name: str
    source: str  # torch's description, e.g. "L['x'].size()[0]" or the user code that made it
    input: str | None = None  # the input it describes, e.g. "x" or "pair[0]"
    axis: int | None = None  # its dimension
    hint: str | None = None  # the example value it was created from
    range: str = ""  # as pt2_viewer.core.model.expr.range_text writes it, e.g. "[2, ∞]"
    unbacked: bool = False
    user_line: SourceLine | None = None
    framework: str = ""  # an unbacked symbol's torch frame, "_subclasses/fake_impls.py:1233 in local_scalar_dense"


@dataclass
class GuardInfo:
    """One guard (`eval`) or runtime assertion the model added, with the user line that caused it."""

    kind: str  # "eval" (a guard) or "runtime_assert"
    expr: str  # as torch prints it, e.g. "Eq(s2, s4)"
    readable: str = ""  # with symbols replaced by input dimensions, e.g. "Eq(x.shape[0], y.shape[1])"
    symbols: list[str] = field(default_factory=list)
    user_line: SourceLine | None = None
    code: str = ""  # the line of user code torch names
    framework: str = ""  # the torch function that added it, e.g. "_subclasses/fake_impls.py:1960 in infer_size"
    forcing_spec: bool = False


@dataclass
class GuardLog:
    """Everything captured during one export call."""

    symbols: list[SymbolInfo] = field(default_factory=list)
    guards: list[GuardInfo] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def guard_log_from_json(d: dict[str, Any]) -> GuardLog:
    """Rebuild a GuardLog from report.json (the GUI reads reports without torch)."""
    def line(v: dict[str, Any] | None) -> SourceLine | None:
        return SourceLine(**v) if v else None

    return GuardLog(
        symbols=[SymbolInfo(**{**s, "user_line": line(s.get("user_line")),
                               "range": torch_range_text(s.get("range", ""))})
                 for s in d.get("symbols", [])],
        guards=[GuardInfo(**{**g, "user_line": line(g.get("user_line"))}) for g in d.get("guards", [])],
        raw=list(d.get("raw", [])),
    )


def parse_symbol(message: str) -> SymbolInfo | None:
    """Parse a `create_symbol` or `create_unbacked_sym*` log message."""
    m = _CREATE.match(message)
    if m:
        info = SymbolInfo(name=m.group(1), hint=m.group(2), source=m.group(3),
                          range=range_text(m.group(4), m.group(5)))
        size = _SIZE_SOURCE.match(info.source)
        if size:
            info.input, info.axis = readable_input(size.group(1), size.group(2)), int(size.group(3))
        return info
    m = _UNBACKED.match(message)
    if m:
        sloc = _split_sloc(m.group(4))
        return SymbolInfo(name=m.group(1), source=sloc["code"] or sloc["fw"], range=range_text(m.group(2), m.group(3)),
                          unbacked=True, user_line=sloc["line"], framework=sloc["fw"])
    return None


def parse_guard(message: str) -> GuardInfo | None:
    """Parse a `... [guard added] ...` log message (guards and runtime asserts)."""
    m = _GUARD.match(message)
    if not m:
        return None
    sloc = _split_sloc(m.group(4).strip())
    return GuardInfo(kind=m.group(1), expr=m.group(3), symbols=_unique(_SYMBOL.findall(m.group(3))),
                     code=sloc["code"], framework=sloc["fw"], user_line=sloc["line"],
                     forcing_spec=bool(m.group(2)))


def _split_sloc(text: str) -> dict[str, Any]:
    """`x0 = x + y  # dir/s.py:16 in forward (_subclasses/fake_impls.py:1960 in infer_size)` -> its parts."""
    m = _SLOC.match(text.strip())
    if not m:
        return {"code": "", "fw": text.strip(), "line": None}
    line = None
    if m.group("file"):
        line = SourceLine(m.group("file"), int(m.group("line")), m.group("func"), (m.group("code") or "").strip())
    return {"code": (m.group("code") or "").strip(), "fw": m.group("fw") or "", "line": line}


def resolve_inputs(log: GuardLog, flat_input_names: list[str] | None = None) -> GuardLog:
    """Name symbol inputs (strict mode says `L['flat_args'][2]`) and rewrite guards in terms of input dimensions."""
    for sym in log.symbols:
        flat = _FLAT_ARG.match(sym.source)
        if flat and flat_input_names and int(flat.group(1)) < len(flat_input_names):
            sym.input = flat_input_names[int(flat.group(1))]
    names = {s.name: f"{s.input}.shape[{s.axis}]" for s in log.symbols if s.input is not None and s.axis is not None}
    for guard in log.guards:
        guard.readable = _SYMBOL.sub(lambda m: names.get(m.group(1), m.group(1)), guard.expr)
    return log


class GuardCapture(logging.Filter):
    """Context manager: record symbols and guards logged during one export call.

    It is a filter on torch's logger rather than a handler: it lowers the logger to INFO so torch emits the records,
    keeps what it needs, and lets through only the records the user's own settings (TORCH_LOGS, set_logs) would
    have let through, so torch's handlers print exactly what they would have printed without the capture.

    `frames()` returns the frames active when a record is logged, outermost first; the innermost frame in
    `script_path` becomes the guard's user line (torch names it itself only in strict mode, and with a shortened path).
    """

    def __init__(self, script_path: str | None, frames: Callable[[], list[SourceLine]] | None = None,
                 logger_names: tuple[str, ...] = LOGGERS) -> None:
        super().__init__()
        self.script_path = script_path
        self.frames = frames
        self.logger_names = logger_names
        self.log = GuardLog()
        self._saved: dict[str, tuple[logging.Logger, int, int]] = {}

    def __enter__(self) -> GuardCapture:
        for name in self.logger_names:
            logger = logging.getLogger(name)
            self._saved[name] = (logger, logger.level, logger.getEffectiveLevel())
            logger.addFilter(self)
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc: object) -> None:
        for logger, level, _effective in self._saved.values():
            logger.removeFilter(self)
            logger.setLevel(level)
        self._saved.clear()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            self._record(record.getMessage())
        except Exception:  # never let a parsing problem break the user's export
            logging.getLogger(__name__).debug("could not parse %r", record.msg, exc_info=True)
        saved = self._saved.get(record.name)
        return record.levelno >= (saved[2] if saved else logging.NOTSET)

    def _record(self, message: str) -> None:
        if "[guard added]" in message:
            guard = parse_guard(message)
            if guard:
                guard.user_line = self._user_line(guard.user_line)
                self.log.guards.append(guard)
                self._keep(message)
        elif message.startswith(("create_symbol ", "create_unbacked_sym")) and " duck sized " not in message:
            sym = parse_symbol(message)
            if sym:
                if sym.unbacked:
                    sym.user_line = self._user_line(sym.user_line)
                    sym.source = _unbacked_source(sym)
                self.log.symbols.append(sym)
                self._keep(message)

    def _keep(self, message: str) -> None:
        if len(self.log.raw) < MAX_RAW_LINES:
            self.log.raw.append(message.split(", for more info run with", 1)[0])

    def _user_line(self, logged: SourceLine | None) -> SourceLine | None:
        frames = self.frames() if self.frames else []
        if self.script_path:
            hits = [f for f in frames if same_file(f.file, self.script_path)]
            if hits:
                return with_code(hits[-1])
            if logged and same_file(logged.file, self.script_path):
                return with_code(SourceLine(self.script_path, logged.line, logged.function, logged.code))
        user = [f for f in frames if not is_library_file(f.file)]
        return with_code(user[-1]) if user else logged


def _unbacked_source(sym: SymbolInfo) -> str:
    """What an unbacked symbol stands for, in the user's words: the user's line that read it (`a = x.item()`), never
    torch's frame that made it (non-strict export logs `_subclasses/fake_impls.py:1233 in local_scalar_dense`, kept
    as `framework`); where no user line is known, what kind of value it is."""
    if sym.user_line is not None and not is_library_file(sym.user_line.file) and sym.user_line.code:
        return sym.user_line.code
    if sym.source and sym.source != sym.framework:  # torch logged the user's code itself (strict export)
        return sym.source
    return "a value read from a tensor's data (.item() or a data-dependent size)"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
