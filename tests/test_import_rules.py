"""The architecture's run-time rules, enforced: reading a `.pt2` never imports torch (nor Qt) and never runs code from
the file.

Why it matters: the GUI process must stay small and safe. A `.pt2` from the internet is untrusted input; torch's own
loader unpickles parts of it (sample inputs, pickled weights), which can run arbitrary code. Our reader reads JSON only.

The static rules (`core` never imports `app` or Qt; packages import only downward) are import-linter contracts in
pyproject.toml, checked by scripts/check.sh (`make check`, and `make test` before the tests). What those cannot see is
what a run actually loads, which is what this file tests.
"""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

from tests.programs import REPO_ROOT, member_named, program_path, read_members, write_members

FORBIDDEN_WHILE_READING = ("torch", "PySide6", "shiboken6")


def _is_forbidden(module: str, forbidden: tuple[str, ...]) -> bool:
    return module.split(".")[0] in forbidden


# --------------------------------------------------------------------------------------------------------------------
# Reading a .pt2 imports neither torch nor Qt

READ_SCRIPT = """
import json, sys
from pt2_viewer.core.pt2.reader import read_archive
from pt2_viewer.core.pt2.info import archive_info, summary_text
for path in sys.argv[1:]:
    archive = read_archive(path)
    json.dumps(archive_info(archive))
    summary_text(archive)
    for program in archive.programs:
        program.all_graphs()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
print(json.dumps(loaded))
"""


def _run_reader(paths: list[Path]) -> list[str]:
    """Read `paths` in a fresh interpreter; the forbidden modules it had loaded at the end."""
    run = subprocess.run(
        [sys.executable, "-c", READ_SCRIPT.format(forbidden=set(FORBIDDEN_WHILE_READING)), *map(str, paths)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_reading_imports_neither_torch_nor_qt() -> None:
    paths = [program_path(name) for name in ("two_programs", "cond_map", "custom_op", "batchnorm_train_decomposed")]
    assert _run_reader(paths) == []


def test_info_command_imports_neither_torch_nor_qt() -> None:
    """`pt2-viewer info` as users run it, with Python's own import log (-X importtime) as the witness."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pt2_viewer", "info", str(program_path("cond_map")), "--json"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "pt2_viewer.core.pt2.reader" in imported, "the import log should show the reader"
    assert [m for m in imported if _is_forbidden(m, FORBIDDEN_WHILE_READING)] == []


# --------------------------------------------------------------------------------------------------------------------
# Nothing in a .pt2 can run code


class _TouchOnUnpickle:
    """Pickles to 'open(marker, "w")': unpickling it creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.marker), "w"))


def evil_payload(marker: Path) -> bytes:
    return pickle.dumps(_TouchOnUnpickle(marker), protocol=2)


def booby_trapped_archive(src: Path, dst: Path, marker: Path) -> Path:
    """A real archive whose every pickle-bearing place (sample inputs, weights marked `use_pickle`, constants, a
    torch.save-style data.pkl, an extra file) holds a payload that would create `marker` if unpickled."""
    payload = evil_payload(marker)
    members = read_members(src)
    root = next(iter(members)).split("/", 1)[0]
    members[member_named(members, "data/sample_inputs/model.pt")] = payload
    config_name = member_named(members, "data/weights/model_weights_config.json")
    config = json.loads(members[config_name])
    for entry in config["config"].values():
        entry["use_pickle"] = True
        members[f"{root}/data/weights/{entry['path_name']}"] = payload
    members[config_name] = json.dumps(config).encode()
    constants_name = member_named(members, "data/constants/model_constants_config.json")
    members[constants_name] = json.dumps(
        {"config": {"evil": {"path_name": "tensor_0", "is_param": False, "use_pickle": True, "tensor_meta": None}}}
    ).encode()
    members[f"{root}/data/constants/tensor_0"] = payload
    members[f"{root}/data.pkl"] = payload
    members[f"{root}/extra/evil.pkl"] = payload
    return write_members(dst, members)


def test_payload_is_live(tmp_path: Path) -> None:
    """The booby trap works: plain unpickling creates the marker. Without this the next test could not fail."""
    marker = tmp_path / "proof"
    pickle.loads(evil_payload(marker)).close()
    assert marker.exists()


def test_reading_never_unpickles(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled-by-the-reader"
    src = program_path("batchnorm_train")
    trapped = booby_trapped_archive(src, tmp_path / "trapped.pt2", marker)
    assert _run_reader([trapped]) == []
    assert not marker.exists(), "reading the archive ran code from a pickle in it"
    # The same in this process, through the command line as users run it.
    from pt2_viewer.app.cli import main as cli_main

    assert cli_main(["info", str(trapped), "--json"]) == 0
    assert not marker.exists(), "pt2-viewer info ran code from a pickle in the archive"

