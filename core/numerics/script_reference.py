"""A model script's eager model as the reference: each submodule's output, caught by a forward hook, against the
exported program's value where that module's call ends (the last node of its `nn_module_stack` group whose value is
used outside it).

The script follows the convention of docs/worker.md (module-level `model`, `example_args`, optional
`example_kwargs`, `dynamic_shapes`, `strict`); it is imported (it runs: the caller asks the user first), exported
here, and both run on the example inputs. A module called more than once has several outputs and one group of nodes
per call; only modules called once are compared, and the others are named in `not_compared`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pt2_viewer.core.jobs.errors import JobFailure, first_line
from pt2_viewer.core.jobs.loading import import_file
from pt2_viewer.core.numerics.capture import is_getitem, shown_name, steps
from pt2_viewer.core.numerics.metrics import NodeError, compare_values
from pt2_viewer.core.run.timing import lifted_args


def module_boundaries(graph: Any) -> dict[str, str]:
    """{module path: the node whose value leaves that module's call last}; the root module ('') is left out."""
    groups: dict[str, list[Any]] = {}
    for n in graph.nodes:
        if n.op != "call_function" or is_getitem(n):
            continue
        for path, _type in (n.meta.get("nn_module_stack") or {}).values():
            if path:
                groups.setdefault(str(path), []).append(n)
    result: dict[str, str] = {}
    for path, members in groups.items():
        names = {m.name for m in members}
        leaving = [m for m in members if any(u.op == "output" or shown_name(u) not in names for u in m.users)]
        if leaving:
            result[path] = leaving[-1].name
    return result


def _convention(script: Path) -> tuple[Any, tuple[Any, ...], dict[str, Any], Any, bool]:
    module_name = import_file(script, "model script")
    module = sys.modules[module_name]
    model, args = getattr(module, "model", None), getattr(module, "example_args", None)
    if model is None or not isinstance(args, tuple):
        raise JobFailure("request", f"'{script.name}' defines no `model` and `example_args` (a tuple) at module level.",
                         "Follow the convention of resources/examples/convention.py.")
    return (model, args, dict(getattr(module, "example_kwargs", None) or {}), getattr(module, "dynamic_shapes", None),
            bool(getattr(module, "strict", False)))


def compare_script(script: Path) -> tuple[list[str], dict[str, NodeError], list[str]]:
    """(order, errors by module path, modules not compared) for the script's eager model against its export."""
    import torch
    import torch.fx._pytree as fx_pytree

    model, args, kwargs, dynamic_shapes, strict = _convention(script)
    model.eval()
    try:
        ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict)
    except Exception as e:
        raise JobFailure("export", f"Exporting the script's model failed: {first_line(e)}",
                         "Open the script in the window to see the failure explained.") from e
    outputs: dict[str, list[Any]] = {}
    hooks = [m.register_forward_hook(lambda _m, _i, out, path=path: outputs.setdefault(path, []).append(
        torch.utils._pytree.tree_map(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, out)))
        for path, m in model.named_modules() if path]
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    boundaries = module_boundaries(ep.graph)
    wanted = {node: path for path, node in boundaries.items() if len(outputs.get(path, [])) == 1}
    flat = fx_pytree.tree_flatten_spec((args, kwargs), ep.call_spec.in_spec)
    errors: dict[str, NodeError] = {}
    order: list[str] = []
    with torch.no_grad():
        for node, value in steps(ep.graph_module, lifted_args(ep, list(flat))):
            path = wanted.get(node.name)
            if path is None:
                continue
            order.append(path)
            found = compare_values(path, node.name, outputs[path][0], value)
            if found is not None:
                errors[path] = found
    not_compared = sorted(p for p in outputs if p not in errors)
    return order, errors, not_compared
