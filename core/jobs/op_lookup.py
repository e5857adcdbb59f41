"""Looking an op up in this process's torch by its serialized name (`torch.ops.ns.op.overload`).

Its own module because both the archive check (which namespaces are unregistered, so their modules must be imported)
and loading (which ops are still missing after the imports) ask it, and loading imports the archive check.
"""

from __future__ import annotations

from typing import Any


def resolve_op(target: str) -> Any | None:
    """`torch.ops.ns.op.overload` -> the OpOverload, or None when it is not registered in this process."""
    import torch  # deferred: heavy, and imported only inside a worker job

    parts = target.split(".")
    if len(parts) < 4:
        return None
    obj: Any = torch.ops
    try:
        for p in parts[2:]:
            obj = getattr(obj, p)
    except (AttributeError, RuntimeError):
        return None
    return obj
