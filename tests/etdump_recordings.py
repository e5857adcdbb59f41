"""ETDumps recorded as a device records them: by a separate ExecuTorch runtime process (ExecuTorch's pybindings,
`_load_for_executorch(..., enable_etdump=True, debug_buffer_size=N)`), never by the viewer's own run job, on the
inputs the viewer gives the source (generated, seed 0: what `--inputs generated --seed 0` runs), written with
`write_etdump_result_to_file` beside a debug buffer. Also a `.pte` of the small zoo model lowered otherwise than the
lower job lowers it (its memory plan aligned to 128 bytes), so that lowering again cannot stand in for its ETRecord.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

RECORD = """
import sys, torch
from executorch.extension.pybindings.portable_lib import _load_for_executorch
pte, inputs, etdump, debug, runs, size = sys.argv[1:7]
module = _load_for_executorch(pte, enable_etdump=True, debug_buffer_size=int(size))
flat = torch.load(inputs)
for _ in range(int(runs)):
    module.forward(flat)
module.write_etdump_result_to_file(etdump, debug)
"""


@dataclass
class Recording:
    """An ETDump and the debug buffer written with it, of `pte`, over `runs` runs."""

    pte: Path
    etdump: Path
    debug_buffer: Path
    runs: int


def record(pte: Path, source: Path, folder: Path, runs: int = 3, buffer_mb: int = 32) -> Recording:
    """Run `pte` `runs` times in a separate ExecuTorch runtime process on the source's generated inputs (seed 0)."""
    import torch

    from pt2_viewer.core.numerics.pte import flat_inputs
    from pt2_viewer.core.run.inputs import generate_inputs

    folder.mkdir(parents=True, exist_ok=True)
    ep = torch.export.load(str(source))
    made = generate_inputs(ep, None, 0)
    inputs = folder / "inputs.pt"
    torch.save(flat_inputs(ep, made.args, made.kwargs), inputs)
    etdump, debug = folder / "run.etdp", folder / "run.bin"
    subprocess.run([sys.executable, "-c", RECORD, str(pte), str(inputs), str(etdump), str(debug), str(runs),
                    str(buffer_mb * 2**20)], check=True, capture_output=True, timeout=600)
    return Recording(pte, etdump, debug, runs)


def lowered_otherwise(source: Path, out: Path) -> Path:
    """`source` lowered to portable kernels with its memory plan aligned to 128 bytes (the lower job keeps
    ExecuTorch's 16): the same operators, other places in memory, so a fresh lowering's instructions differ."""
    import torch
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    ep = torch.export.load(str(source))
    config = ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(alignment=128))
    out.write_bytes(to_edge_transform_and_lower(ep).to_executorch(config).buffer)
    return out
