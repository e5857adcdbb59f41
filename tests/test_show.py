"""`pt2_viewer.show(ep)` from a REPL: the ExportedProgram is saved to a temporary .pt2 and the viewer opens on it
(here with `screenshot=`, so the window draws the graph, saves it and exits)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys, torch, pt2_viewer
class M(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1
ep = torch.export.export(M(), (torch.randn(2, 3),))
path = pt2_viewer.show(ep, name="relu_add", screenshot=sys.argv[1])
from pt2_viewer.core.pt2.reader import read_archive  # the file is kept while this Python runs
print(path.name, *[n.target for n in read_archive(path).programs[0].graph.nodes])
"""


def test_show_saves_the_program_and_opens_the_viewer_on_it(tmp_path):
    png = tmp_path / "graph.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(png)], capture_output=True, text=True, env=env,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    name, *ops = done.stdout.strip().splitlines()[-1].split()
    assert name == "relu_add.pt2" and "torch.ops.aten.relu.default" in ops
    assert png.stat().st_size > 10_000  # the window drew the graph and saved it
    # and described what it shows beside the picture: the input, the relu and the add, readable, on screen
    described = json.loads(png.with_suffix(".json").read_text(encoding="utf-8"))
    assert Path(described["tab"]).name == "relu_add.pt2" and described["zoom"] > 0
    shown = {i["name"]: i for i in described["items"]}
    assert {"x", "relu", "add"} <= set(shown)
    assert all(shown[n]["kind"] == "node" and shown[n]["visible"] and shown[n]["label_px"] >= 9 for n in ("x", "relu"))


def test_show_refuses_what_is_not_a_program():
    import pytest

    import pt2_viewer

    with pytest.raises(TypeError, match="takes a torch.export.ExportedProgram, not dict"):
        pt2_viewer.show({})
