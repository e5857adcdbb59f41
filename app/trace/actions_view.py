"""The trace view's lists of actions: every graph break once, at the user's line (a link that opens the editor), with
torch's explanation and hints, the graph-break code and its page, and the fix; every recompile with its failed
guards in words, the fix, and a link that diffs the graph before and after. Links send intent back as signals:
`source_requested(file, line)`, `compile_requested(compile id)`, `diff_requested(compile id)` (as text),
`compare_requested(compile id)` (the two graphs side by side, with the diff's colours)."""
from __future__ import annotations

import html
import re

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QTextBrowser, QWidget

from pt2_viewer.core.trace import outline
from pt2_viewer.core.trace.model import GraphBreak, Recompile, SourceLine, Trace

_CODE = re.compile(r"`([^`]+)`")


def _words(text: str) -> str:
    """torch's words as HTML, its `backticks` as code."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


class ActionsView(QTextBrowser):
    source_requested = Signal(str, int)
    compile_requested = Signal(str)
    diff_requested = Signal(str)
    compare_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._link)
        self._places: list[tuple[str, int]] = []

    def _source(self, file: str, line: int) -> str:
        self._places.append((file, line))
        text = f"{outline.short_file(file)}:{line}"
        return f"<a href='source:{len(self._places) - 1}' title='{html.escape(file)}:{line}'>{html.escape(text)}</a>"

    @staticmethod
    def _compile_links(ids: list[str]) -> str:
        return ", ".join(f"<a href='compile:{html.escape(i)}'>{html.escape(i)}</a>" for i in ids)

    def show_breaks(self, breaks: list[GraphBreak]) -> None:
        self._places = []
        if not breaks:
            self.setHtml("<p>No graph break: each frame compiled into whole graphs.</p>")
            return
        parts = [f"<p>{len(breaks)} graph break{'s' if len(breaks) > 1 else ''}, each once, at your line. "
                 "Fix them from the top: each one splits a graph in two.</p>"]
        for n, b in enumerate(breaks, start=1):
            parts.append(f"<h3>{n}. {self._source(b.file, b.line)} — {_words(b.reason)}</h3>")
            if b.explanation:
                parts.append(f"<p>{_words(b.explanation)}</p>")
            if b.fix:
                parts.append(f"<p><b>Fix:</b> {_words(b.fix)}</p>")
            if b.hints:
                parts.append("<p>torch's hints:</p><ul>" + "".join(f"<li>{_words(h)}</li>" for h in b.hints)
                             + "</ul>")
            page = f"<a href='{html.escape(b.url)}'>{html.escape(b.code or b.url)}</a>" if b.url else \
                html.escape(b.code or "no graph-break code")
            parts.append(f"<p>Code {page} · hit by {self._compile_links(b.compile_ids)}</p>")
        self.setHtml("".join(parts))

    def show_recompiles(self, trace: Trace, recompiles: list[Recompile]) -> None:
        self._places = []
        if not recompiles:
            self.setHtml("<p>No recompile: every frame's guards held.</p>")
            return
        parts = [f"<p>{len(recompiles)} recompile{'s' if len(recompiles) > 1 else ''}: a guard of an earlier "
                 "compile failed, so the frame was compiled again.</p>"]
        by_id = {(c.id, c.rank): c for c in trace.compiles}
        for r in recompiles:
            compile_ = by_id.get((r.compile_id, r.rank))
            frame: SourceLine | None = compile_.frame if compile_ is not None else None
            where = f" {html.escape(frame.function)} at {self._source(frame.file, frame.line)}" if frame else ""
            parts.append(f"<h3>{self._compile_links([str(r.compile_id)])}{where}</h3><p>Failed guard"
                         f"{'s' if len(r.reasons) > 1 else ''}:</p><ul>"
                         + "".join(f"<li>{_words(reason)}</li>" for reason in r.reasons) + "</ul>")
            if fix := outline.recompile_fix(r):
                parts.append(f"<p><b>Fix:</b> {_words(fix)}</p>")
            before = outline.replaced(trace, compile_) if compile_ is not None else None
            if before is not None:
                cid = html.escape(str(r.compile_id))
                parts.append(f"<p>The Dynamo graph of {html.escape(str(before.id))} against this one: "
                             f"<a href='diff:{cid}'>as text</a> · <a href='compare:{cid}'>side by side in the graph "
                             "view</a></p>")
        self.setHtml("".join(parts))

    def _link(self, url: QUrl) -> None:
        text = url.toString()
        kind, _, rest = text.partition(":")
        if kind == "source":
            file, line = self._places[int(rest)]
            self.source_requested.emit(file, line)
        elif kind == "compile":
            self.compile_requested.emit(rest)
        elif kind == "diff":
            self.diff_requested.emit(rest)
        elif kind == "compare":
            self.compare_requested.emit(rest)
        elif kind in ("http", "https"):
            QDesktopServices.openUrl(url)
