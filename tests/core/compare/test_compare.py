"""The torch-free node mapping file's round trip, and a comparison that never imports torch. (Two programs without
provenance are paired by the structural diff's matcher: tests/core/diff/.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pt2_viewer.core.compare.mapping import (
    Link,
    NodeMapping,
    read_mapping,
    write_mapping,
)
from tests.programs import REPO_ROOT, pt2_path  # noqa: F401  (pt2_path is a fixture)


def test_mapping_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    m = NodeMapping(before_nodes=["a", "b"], after_nodes=["c", "d", "e"],
                    links=[Link("a", "c", "from_node"), Link("a", "d", "from_node"), Link("b", "e", "stack_trace")],
                    before_label="m.pt2 / model", after_label="m.core.pt2 / model")
    path = tmp_path / "m.mapping.json"
    write_mapping(m, path)
    doc = json.loads(path.read_text())
    assert doc["before_to_after"]["a"] == [{"node": "c", "method": "from_node"}, {"node": "d", "method": "from_node"}]
    assert doc["after_to_before"]["e"] == [{"node": "b", "method": "stack_trace"}]
    assert doc["method_counts"] == {"from_node": 2, "stack_trace": 1}
    assert read_mapping(path) == m
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind

    path.write_text(json.dumps({**doc, "format": "something-else"}))
    with pytest.raises(ValueError, match="not a node mapping file"):
        read_mapping(path)
    path.write_text(json.dumps({**doc, "version": 99}))
    with pytest.raises(ValueError, match="newer than this viewer reads"):
        read_mapping(path)


def test_compare_never_imports_torch() -> None:
    code = ("import sys, pt2_viewer.core.compare.mapping, pt2_viewer.core.decompose.job, pt2_viewer.core.run.job, "
            "pt2_viewer.core.cli.run, pt2_viewer.core.cli.decompose; print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
