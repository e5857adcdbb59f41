"""A torch.compile trace with Inductor's provenance on, as `pt2-viewer trace SCRIPT.py` makes one (issue 40 §2): the
script runs in a child process under the script job's own environment (core/export/trace_job.py
`trace_environment`: `TORCH_TRACE`, `INDUCTOR_PROVENANCE=1`, the compile caches off), on CPU.

`provenance_trace()`: a tiny MLP compiled for inference (one forward graph) and tests/trace_programs.py's small CNN
trained one step (forward and backward: Inductor's post-grad graph, code and provenance logged twice). Built once
per torch version and script (tests/programs.py `cached_file`)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pt2_viewer.core.export.trace_job import trace_environment
from tests.programs import cache_dir, cached_file
from tests.trace_programs import CNN_SCRIPT, script_path

PROVENANCE_SCRIPT = CNN_SCRIPT + '''

class TinyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)) * 2)


torch.manual_seed(0)
mlp = TinyMLP().eval()
with torch.no_grad():
    torch.compile(mlp)(torch.randn(2, 8))

cnn = SmallCNN()
loss = torch.compile(cnn)(torch.randn(2, 3, 8, 8)).sum()
loss.backward()
'''


def provenance_trace() -> Path:
    """The TORCH_TRACE folder of PROVENANCE_SCRIPT, run as the trace job runs a script."""
    folder = cache_dir(provenance_trace, PROVENANCE_SCRIPT)
    script = script_path("provenance_script", PROVENANCE_SCRIPT, folder)

    def build(trace_dir: Path) -> None:
        env = {**os.environ, **trace_environment(trace_dir), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
               "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, str(script)], env=env, cwd=script.parent, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"{script.name} failed: {done.stderr.strip().splitlines()[-1:]}")

    return cached_file(folder / "provenance_trace", build)


def prebuild_fixtures() -> None:
    """`make fixtures`: the trace the kernel-link tests read."""
    provenance_trace()
