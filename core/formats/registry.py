"""Every kind of file the viewer opens, in one list, as Netron's `ModelFactoryService.register` keeps its readers.

Each `Format` says how it is recognised (`Recognition`: a test of the file's first bytes, a folder inside a zip, a
folder's entries, or its extension alone), its reader (what the file becomes in this process: an `Archive` of
programs for every format today) and what it opens as in the window (`Opens`: a program's graph, the AOTInductor
package's tab, or a model script run by the export worker). The window (app/graph/loader.py, app/main_window.py),
`info`, `render`, `diff`, the parsed-program cache and the desktop file types all dispatch through `recognise`, so
adding a format is one entry here:

- an extension-only format (`.onnx`, which has no magic): `Recognition(by_extension=True)`, listed after the formats
  known by their content;
- a folder recognised by its contents (a torch.compile trace, `TRACE_FOLDER`: `dedicated_log_torch_trace*.log`
  files): `Recognition(folder_holds=(LOG_GLOB,))`.

The first entry that recognises a file wins: an entry that refines another comes first (an AOTInductor package is a
`.pt2` zip too), formats known by name alone come last, so a file's content wins over its name. What no entry knows
is read by `FALLBACK`, whose reader says what the file is instead ("not a .pt2 archive: it is a text file"), as a
`.pt2` reader always did: the messages people see do not depend on this list.

No Qt and no torch here; readers import what only their format needs when first called (a `.pte`'s flatbuffers
runtime brings numpy).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum
from fnmatch import fnmatch

import msgspec

from pt2_viewer.core.formats.probe import ZIP_MAGIC, Probe
from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.platform.file_types import DesktopFileType
from pt2_viewer.core.pt2.archive import AOTI_DIR
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.parsed_cache import ParsedProgramCache
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.pte.errors import PteError
from pt2_viewer.core.pte.magic import MAGIC_AT, pte_head
from pt2_viewer.core.trace.files import LOG_GLOB, looks_like_trace_log

Reader = Callable[[str], Archive]
Store = Callable[[], bool]


class Opens(Enum):
    """What a format opens as in the window."""

    PROGRAM = "program"  # a program's graph in a document tab (with its model's own panels: a `.pte`'s ExecuTorch)
    AOTI_PACKAGE = "aoti package"  # the AOTInductor package's tab: compiled models, the program's graph beside them
    SCRIPT = "script"  # run by the export worker (after the trust question); its tab shows what it exported
    TRACE = "trace"  # a torch.compile trace (core/trace): its own tab (app/trace/), read by `pt2-viewer trace` too


class Recognition(msgspec.Struct, frozen=True):
    """How a format is told from the others: every test given must pass. A file's content (`head`, `zip_holds`), a
    folder's entries (`folder_holds`: any entry matching any of these patterns), or, with `by_extension`, the
    format's extensions alone."""

    head: Callable[[bytes], bool] | None = None  # a test of the file's first bytes (its magic)
    zip_holds: str = ""  # a folder the zip holds under its root folder
    folder_holds: tuple[str, ...] = ()
    by_extension: bool = False

    def knows(self, probe: Probe, extensions: tuple[str, ...]) -> bool:
        if self.folder_holds:
            return probe.is_folder and any(fnmatch(name, pattern) for name in probe.folder_entries
                                           for pattern in self.folder_holds)
        if self.by_extension:
            return probe.suffix in extensions
        if probe.is_folder or (self.head is None and not self.zip_holds):
            return False
        if self.head is not None and not self.head(probe.head):
            return False
        return not self.zip_holds or any(name.startswith(self.zip_holds) for name in probe.zip_files)


class Format(msgspec.Struct, frozen=True):
    """One kind of file: `name` (a stable id), `description` (its File > Open filter; "" when it shares another's
    extension and has no filter of its own), the `extensions` it is saved under (the dialog, the desktop's globs),
    its `recognition`, what it `opens_as`, its `read`er (None: nothing in this process reads it: a script runs in a
    worker), whether the window reads it through the parsed-program cache (`cached`, core/pt2/parsed_cache.py), and
    its desktop file type (`desktop`, core/platform/file_types.py; None: the desktop does not send it here)."""

    name: str
    description: str
    extensions: tuple[str, ...]
    recognition: Recognition
    opens_as: Opens
    read: Reader | None
    cached: bool = False
    desktop: DesktopFileType | None = None


def _is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGIC)


def _read_pte(path: str) -> Archive:
    """An ExecuTorch `.pte`'s methods as an `Archive` (core/pte/reader.py), its problems as `ArchiveError`."""
    from pt2_viewer.core.pte.reader import read_pte  # deferred: the flatbuffers runtime imports numpy

    try:
        return read_pte(path)
    except PteError as e:
        raise ArchiveError(str(e), path=str(path)) from None


def _read_onnx(path: str) -> Archive:
    """An ONNX model's graph as an `Archive` of one program (core/onnx/reader.py), its problems as `ArchiveError`."""
    from pt2_viewer.core.onnx.errors import OnnxError  # deferred: a .onnx's reader brings onnx, numpy, protobuf
    from pt2_viewer.core.onnx.reader import read_onnx

    try:
        return read_onnx(path)
    except OnnxError as e:
        raise ArchiveError(str(e), path=str(path)) from None


def _read_trace(path: str) -> Archive:
    """A torch.compile trace is not one program (`info`, `render`, `diff` read programs): say what it is and what
    reads it. The window opens it in its own tab (`Opens.TRACE`), never through this reader."""
    raise ArchiveError(f"{path} is a torch.compile trace: `pt2-viewer trace {path}` lists its compiles, graph breaks "
                       f"and recompiles, and `pt2-viewer {path}` opens it in the window", path=path)


PT2_MIME_TYPE = "application/x-pytorch-pt2"
PTE_MIME_TYPE = "application/x-executorch-pte"
ONNX_MIME_TYPE = "application/x-onnx"

AOTI = Format(
    name="aoti", description="", extensions=(".pt2",),
    recognition=Recognition(head=_is_zip, zip_holds=AOTI_DIR), opens_as=Opens.AOTI_PACKAGE, read=read_archive,
    cached=True)
PT2 = Format(
    name="pt2", description="PyTorch export archives", extensions=(".pt2",),
    recognition=Recognition(head=_is_zip), opens_as=Opens.PROGRAM, read=read_archive, cached=True,
    desktop=DesktopFileType(PT2_MIME_TYPE, "PyTorch exported program", "PT2", "PyTorch 2 export archive",
                            (".pt2",), sub_class_of="application/zip"))
PTE = Format(
    name="pte", description="ExecuTorch programs", extensions=(".pte",),
    recognition=Recognition(head=pte_head), opens_as=Opens.PROGRAM, read=_read_pte,
    desktop=DesktopFileType(PTE_MIME_TYPE, "ExecuTorch program", "PTE", "PyTorch ExecuTorch program", (".pte",),
                            magic=((MAGIC_AT, b"ET12"),)))
ONNX = Format(
    name="onnx", description="ONNX models", extensions=(".onnx",),
    recognition=Recognition(by_extension=True), opens_as=Opens.PROGRAM, read=_read_onnx,
    desktop=DesktopFileType(ONNX_MIME_TYPE, "ONNX model", "ONNX", "Open Neural Network Exchange", (".onnx",)))
# a TORCH_TRACE folder by its logs, a log by its first record; no File > Open filter of their own (*.log is any log)
TRACE_FOLDER = Format(
    name="trace folder", description="", extensions=(),
    recognition=Recognition(folder_holds=(LOG_GLOB,)), opens_as=Opens.TRACE, read=_read_trace)
TRACE_LOG = Format(
    name="trace log", description="", extensions=(".log",),
    recognition=Recognition(head=looks_like_trace_log), opens_as=Opens.TRACE, read=_read_trace)
SCRIPT = Format(
    name="script", description="Python model scripts", extensions=(".py",),
    recognition=Recognition(by_extension=True), opens_as=Opens.SCRIPT, read=None)

FORMATS: tuple[Format, ...] = (AOTI, PT2, PTE, TRACE_FOLDER, TRACE_LOG, ONNX, SCRIPT)
FALLBACK = PT2  # reads what no entry recognises, and says what the file is instead
ANY_DESCRIPTION = "PyTorch programs and model scripts"


def recognise(file: str | os.PathLike[str] | Probe) -> Format:
    """The format of `file` (a path, or a `Probe` already made for it): the first entry that knows it, else
    `FALLBACK`."""
    probe = file if isinstance(file, Probe) else Probe(file)
    return next((f for f in FORMATS if f.recognition.knows(probe, f.extensions)), FALLBACK)


def read(file: str | os.PathLike[str] | Probe) -> Archive:
    """What `file` holds, read by its format's reader (`info`, `render`, `diff`, the report); `ArchiveError` with a
    message for the user on any problem. A format with no reader in this process (a script) is read by `FALLBACK`,
    which says what the file is."""
    probe = file if isinstance(file, Probe) else Probe(file)
    reader = recognise(probe).read or FALLBACK.read
    assert reader is not None
    return reader(str(probe.path))


def read_deferred(probe: Probe, on_miss: Callable[[], object] | None = None,
                  ) -> tuple[Format, Archive, Store | None]:
    """The window's read: `(format, archive, store)`. A format the parsed-program cache keeps is read through it
    (`store` writes its entry, left to the caller; `on_miss` is called once the program is known not to come from
    the cache), handed the zip listing recognition read; any other is read by its reader (`on_miss` called first:
    nothing of it is cached)."""
    fmt = recognise(probe)
    path = str(probe.path)
    if fmt.cached:
        archive, store = ParsedProgramCache().read_deferred(path, on_miss=on_miss, listing=probe.zip_listing)
        return fmt, archive, store
    if on_miss is not None:
        on_miss()
    reader = fmt.read or FALLBACK.read
    assert reader is not None
    return fmt, reader(path), None


def open_dialog_filter() -> str:
    """File > Open's filters: every format's extensions together, then each format with a description, then all
    files."""
    described = [f for f in FORMATS if f.description]
    patterns = " ".join(dict.fromkeys(f"*{ext}" for f in described for ext in f.extensions))
    filters = [f"{ANY_DESCRIPTION} ({patterns})"]
    filters += [f"{f.description} ({' '.join('*' + ext for ext in f.extensions)})" for f in described]
    return ";;".join([*filters, "All files (*)"])


def desktop_file_types() -> tuple[DesktopFileType, ...]:
    """The file types `--install-desktop` declares and makes PT2 Viewer the default for (core/platform/desktop.py)."""
    return tuple(f.desktop for f in FORMATS if f.desktop is not None)
