"""The kernels of an AOTInductor package that torch's provenance names, as the compiled attribution reads them
(core/profile/compiled.py): a package built with `trace.provenance_tracking_level = 1` holds, per model,
`kernel_information.json` mapping each kernel call of its wrapper (`NAME:HANDLE`) to the source program's nodes
(`pre_grad_nodes`); core/pt2/aoti.py reads it beside the wrapper's calls, in the order they run. No torch."""
from __future__ import annotations

from pt2_viewer.core.model.program import Archive
from pt2_viewer.core.pt2.aoti import AotiModel, aoti_models
from pt2_viewer.core.trace.provenance import CompiledKernels, KernelNodes


def package_kernels(archive: Archive) -> list[CompiledKernels]:
    """One entry per compiled model with provenance; empty for a package built without it (or no package)."""
    if archive.aoti is None:
        return []
    return [_kernels(m) for m in aoti_models(archive) if any(k.from_provenance for k in m.kernels)]


def _kernels(model: AotiModel) -> CompiledKernels:
    kernels = []
    for k in model.kernels:
        _, _, handle = k.handle.rpartition(":")
        kernels.append(KernelNodes(k.kernel.removeprefix("call_"), int(handle) if handle.isdigit() else None, (),
                                   k.source_nodes if k.from_provenance else ()))
    return CompiledKernels(None, None, None, kernels, {})
