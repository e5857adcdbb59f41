"""The format registry (core/formats/registry.py): every kind of file the viewer opens is one entry, recognised by its
content (or, for a script, its name), read by its own reader; what no entry knows gets the `.pt2` reader's words, as
before. One real file of each kind: the bundled example export, an AOTInductor package and an ExecuTorch `.pte`
built by this machine's torch (tests/zoo/pipeline.py), and a model script. The next formats' ways of being
recognised (a folder by its entries, `.onnx` by its name alone) are tried on entries made here."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pt2_viewer.core.formats import registry
from pt2_viewer.core.formats.probe import Probe
from pt2_viewer.core.formats.registry import AOTI, FORMATS, PT2, PTE, SCRIPT, Format, Opens, Recognition
from pt2_viewer.core.pt2.errors import ArchiveError
from pt2_viewer.core.pt2.info import archive_info
from pt2_viewer.core.pt2.reader import read_archive
from tests.programs import REPO_ROOT, ExportFailed

EXAMPLE = REPO_ROOT / "resources" / "examples" / "example.pt2"
SCRIPT_FILE = REPO_ROOT / "resources" / "examples" / "convention.py"


@pytest.fixture(scope="module")
def pipeline_files() -> dict[str, Path]:
    """A `.pte` and an AOTInductor package of the zoo's small model, as torch and ExecuTorch write them."""
    pytest.importorskip("executorch", reason="executorch builds the .pte test file (requirements-dev.txt)")
    from tests.zoo.pipeline import aoti_path, small_pte

    try:
        return {"pte": small_pte("portable"), "aoti": aoti_path(), "aoti with program": aoti_path(with_program=True)}
    except ExportFailed as e:
        pytest.skip(str(e))


def test_every_format_is_one_entry() -> None:
    assert [(f.name, f.extensions, f.opens_as) for f in FORMATS] == [
        ("aoti", (".pt2",), Opens.AOTI_PACKAGE),
        ("pt2", (".pt2",), Opens.PROGRAM),
        ("pte", (".pte",), Opens.PROGRAM),
        ("trace folder", (), Opens.TRACE),  # a TORCH_TRACE folder by its logs (tests/core/trace/test_trace_format.py)
        ("trace log", (".log",), Opens.TRACE),  # one of its logs by its first record
        ("onnx", (".onnx",), Opens.PROGRAM),  # known by its name alone: after every format known by its content
        ("script", (".py",), Opens.SCRIPT),
    ]
    assert registry.FALLBACK is PT2
    assert [f.name for f in FORMATS if f.cached] == ["aoti", "pt2"]  # the parsed-program cache keeps zips only
    assert SCRIPT.read is None  # run by the export worker, never read in this process
    # File > Open's filters, as the window always offered them
    assert registry.open_dialog_filter() == (
        "PyTorch programs and model scripts (*.pt2 *.pte *.onnx *.py);;PyTorch export archives (*.pt2);;"
        "ExecuTorch programs (*.pte);;ONNX models (*.onnx);;Python model scripts (*.py);;All files (*)")
    assert [t.mime_type for t in registry.desktop_file_types()] == [registry.PT2_MIME_TYPE, registry.PTE_MIME_TYPE,
                                                                    registry.ONNX_MIME_TYPE]


def test_one_real_file_of_each_kind_opens_through_the_registry(pipeline_files: dict[str, Path],
                                                               tmp_path: Path) -> None:
    pte = pipeline_files["pte"]
    assert registry.recognise(EXAMPLE) is PT2
    assert registry.recognise(pipeline_files["aoti"]) is AOTI
    assert registry.recognise(pipeline_files["aoti with program"]) is AOTI
    assert registry.recognise(pte) is PTE
    assert registry.recognise(SCRIPT_FILE) is SCRIPT

    example = registry.read(EXAMPLE)
    assert example.programs and example.aoti is None and example.executorch is None
    assert archive_info(example) == archive_info(read_archive(EXAMPLE))
    package = registry.read(pipeline_files["aoti"])
    assert package.aoti is not None and not package.programs
    both = registry.read(pipeline_files["aoti with program"])
    assert both.aoti is not None and both.programs
    program = registry.read(pte)
    assert program.executorch is not None and program.programs
    assert json.dumps(archive_info(program)).startswith('{"format": "pte"')

    renamed = tmp_path / "model.bin"  # a .pte by its magic, whatever its name
    shutil.copyfile(pte, renamed)
    assert registry.recognise(renamed) is PTE and registry.read(renamed).executorch is not None
    # The `.pt2` reader reads `.pt2` archives only: nothing hands a `.pte` on from it any more
    with pytest.raises(ArchiveError, match="not a .pt2 archive"):
        read_archive(pte)


def test_the_window_reads_through_the_cache_what_it_keeps(pipeline_files: dict[str, Path], tmp_path: Path) -> None:
    """`read_deferred`, the window's read: a zip through the parsed-program cache (handed the listing recognition
    read: a second read of the same file comes from the cache), anything else by its reader, said to be a miss."""
    path = Path(shutil.copyfile(EXAMPLE, tmp_path / "example.pt2"))
    probe = Probe(path)
    misses: list[str] = []
    fmt, first, store = registry.read_deferred(probe, on_miss=lambda: misses.append("pt2"))
    assert fmt is PT2 and store is not None and store() and misses == ["pt2"]
    fmt, again, store = registry.read_deferred(Probe(path), on_miss=lambda: misses.append("again"))
    assert fmt is PT2 and store is None and misses == ["pt2"] and again == first
    fmt, pte, store = registry.read_deferred(Probe(pipeline_files["pte"]), on_miss=lambda: misses.append("pte"))
    assert fmt is PTE and store is None and misses == ["pt2", "pte"] and pte.executorch is not None


def test_what_no_format_knows_is_said_as_before(tmp_path: Path) -> None:
    """The fallback reader words it: a text file, a folder, a missing file get the `.pt2` reader's own message."""
    notes = tmp_path / "notes.pte"
    notes.write_text("just some notes")
    folder = tmp_path / "folder.pt2"
    folder.mkdir()
    for path, said in [(notes, "is not a .pt2 archive: it is a text file"), (folder, "is a folder, not a .pt2 file"),
                       (tmp_path / "nowhere.pte", "does not exist"), (SCRIPT_FILE, "it is a text file")]:
        with pytest.raises(ArchiveError) as caught:
            registry.read(path)
        assert said in str(caught.value), path
        with pytest.raises(ArchiveError) as before:
            read_archive(path)
        assert str(caught.value) == str(before.value)


def test_the_next_formats_can_be_recognised_as_the_registry_declares_them(tmp_path: Path) -> None:
    """A folder known by its entries (a torch.compile trace) and a format known by its name alone (`.onnx`, which
    has no magic): what their entries will declare, tried on entries made here."""
    trace = Format("trace", "torch.compile traces", (), Recognition(folder_holds=("dedicated_log_torch_trace_*.log",)),
                   Opens.PROGRAM, read=None)
    onnx = Format("onnx", "ONNX models", (".onnx",), Recognition(by_extension=True), Opens.PROGRAM, read=None)
    folder = tmp_path / "TORCH_TRACE"
    folder.mkdir()
    assert not trace.recognition.knows(Probe(folder), trace.extensions)
    (folder / "dedicated_log_torch_trace_rank_0_abc.log").write_text("{}\n")
    assert trace.recognition.knows(Probe(folder), trace.extensions)
    assert not trace.recognition.knows(Probe(folder / "dedicated_log_torch_trace_rank_0_abc.log"), ())
    model = tmp_path / "Model.ONNX"
    model.write_bytes(b"\x08\x07")
    assert onnx.recognition.knows(Probe(model), onnx.extensions)
    assert not onnx.recognition.knows(Probe(EXAMPLE), onnx.extensions)
    assert not PT2.recognition.knows(Probe(folder), PT2.extensions)  # content formats never take a folder
