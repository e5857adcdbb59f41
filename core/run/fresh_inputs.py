"""Each call of a program on its own copy of the inputs, and the program's buffers as they were before it ran.

torch.export keeps in-place ops (`x.add_(y)`, `x.resize_(10)`, a KV cache's `index_copy_`, BatchNorm's running
statistics) in the program, and `ep.module()` applies them to the tensors it is given and to the program's own buffers.
Run calls a program many times (warm-up, timed runs, torch.compile, per-node times): on the same tensors, the
outputs shown would be those of the 14th call (x + 13y for `x.add_(y)`), a `resize_` would make the next call break
the program's shape guards, and a warm worker's cached program would start its next job from a changed state.
So every call gets fresh copies of the inputs (made before the timed region), the one call whose outputs are shown
runs on copies of the inputs as given, and the buffers are put back after each phase.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


def copied(value: Any) -> Any:
    """`value` (a pytree of inputs) with every tensor replaced by a copy of its own; other leaves as they are."""
    import torch
    import torch.utils._pytree as pytree

    return pytree.tree_map(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, value)


class FreshInputs:
    """The program's inputs, handed out as a new copy for every call: `refill()` (untimed) then `call(fn)`."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.args, self.kwargs = args, kwargs
        self._next: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def refill(self) -> None:
        """Copy the inputs for the next call (the timing calls this before starting its clock)."""
        self._next = copied((self.args, self.kwargs))

    def call(self, fn: Callable[..., Any]) -> Any:
        """`fn` on the copy `refill` made (a new copy if it made none), which is not used again."""
        if self._next is None:
            self.refill()
        assert self._next is not None
        (args, kwargs), self._next = self._next, None
        return fn(*args, **kwargs)


class SavedBuffers:
    """The program's buffers (persistent ones in `ep.state_dict`, others in `ep.constants`) as they were when saved;
    `restore()` puts their values back in the same tensors, which `ep.module()` shares."""

    def __init__(self, ep: Any) -> None:
        import torch
        from torch.export.graph_signature import InputKind

        self._saved: list[tuple[Any, Any]] = []
        for spec in ep.graph_signature.input_specs:
            if spec.kind != InputKind.BUFFER:
                continue
            tensor = ep.state_dict.get(spec.target, ep.constants.get(spec.target))
            if isinstance(tensor, torch.Tensor):
                self._saved.append((tensor, tensor.detach().clone()))

    def restore(self) -> None:
        import torch

        with torch.no_grad():
            for tensor, saved in self._saved:
                if tensor.shape != saved.shape:
                    tensor.resize_(saved.shape)
                tensor.copy_(saved)
