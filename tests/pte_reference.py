"""What ExecuTorch's own deserializer (`executorch.exir._serialize`) reads in a `.pte`, in the shape of `info --json`:
the truth tests/core/pte/test_pte_parity.py compares ours with. Deserializing the zoo's transformer takes ExecuTorch
about a minute, so the answer is stored beside the fixture (tests/torch_reference.py `stored`) and `make fixtures`
computes it with the `.pte` (scripts/build_fixtures.py)."""
from __future__ import annotations

from pathlib import Path

from tests.torch_reference import stored

_DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
           11: "bool", 15: "bfloat16"}


def executorch_view(path: Path) -> dict:
    """What ExecuTorch's deserializer says, in the shape of `info --json`."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import Tensor

    program = deserialize_pte_binary(path.read_bytes()).program

    def io(plan, i: int) -> dict:
        v = plan.values[i].val
        if isinstance(v, Tensor):
            return {"dtype": _DTYPES[int(v.scalar_type)], "shape": list(v.sizes)}
        return {"dtype": type(v).__name__.lower(), "shape": None}

    return {"format": "pte", "schema_version": program.version, "methods": [{
        "name": plan.name,
        "operators": [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators],
        "delegates": [{"backend": d.id, "bytes": len(program.backend_delegate_data[d.processed.index].data)}
                      for d in plan.delegates],
        "inputs": [io(plan, i) for i in plan.inputs],
        "outputs": [io(plan, i) for i in plan.outputs],
        "memory": {"buffers": list(plan.non_const_buffer_sizes[1:]), "peak": sum(plan.non_const_buffer_sizes[1:])},
    } for plan in program.execution_plan]}


def executorch_answer(path: Path) -> dict:
    """`executorch_view(path)`, stored for a cached fixture (read back while its bytes and this code are the same)."""
    return stored(path, "executorch-view", lambda: executorch_view(path))
