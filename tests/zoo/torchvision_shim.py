"""Let `import torchvision` (and the `transformers` model imports that pull it in) work on a CPU-only torch.

The torchvision 0.28.0 wheel that matches torch 2.13.0 is linked against a CUDA torch: on the CPU build its compiled
ops do not load, and the import then fails registering fake kernels for `torchvision::nms` and `torchvision::qnms`,
whose schemas were never defined. The zoo needs only torchvision's model code, so defining those two schemas before
the import is enough. Kept here, inside the zoo builder: the app itself never imports torchvision.
"""
from __future__ import annotations

import torch

_SCHEMAS = {
    "nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}


def _defined(name: str) -> bool:
    try:
        return torch._C._dispatch_find_schema_or_throw(f"torchvision::{name}", "") is not None
    except RuntimeError:
        return False


def install() -> None:
    """Define the missing `torchvision::nms`/`qnms` schemas (only those not already defined)."""
    for name, schema in _SCHEMAS.items():
        if not _defined(name):
            torch.library.define(f"torchvision::{name}", schema)


def import_torchvision():  # type: ignore[no-untyped-def]
    install()
    import torchvision

    return torchvision


def import_model_libraries() -> None:
    """Import torchvision and transformers (shim first), as loading the zoo's archives in torch needs: their pytree
    output types (`transformers.modeling_outputs.*`) and custom ops (`transformers::grouped_mm_fallback`, the
    mixture-of-experts kernel) are registered on import."""
    import_torchvision()
    import transformers.integrations.moe  # noqa: F401
    import transformers.modeling_outputs  # noqa: F401
