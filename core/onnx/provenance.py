"""What an ONNX node says about where it came from, read from the metadata torch's exporter writes on every node:

- `pkg.torch.onnx.fx_node`: the FX node, in its printed form (`%conv2d : [num_users=1] = call_function[...]`): its
  name is parsed out. It is the node's name in the program the exporter decomposed, not always in the `.pt2` (a
  BatchNorm's `_native_batch_norm_legit_no_training_2` is `batch_norm_2` there);
- `pkg.torch.onnx.name_scopes` and `pkg.torch.onnx.class_hierarchy`: the module path, outermost first (`['',
  'layers.0', 'layers.0.self_attn', 'view_1']`: the root, each module's full path, then the FX node), and each
  one's class;
- `pkg.torch.onnx.stack_trace`: the user's line;
- `pkg.onnxscript.rewriter.rule_name`: the optimizer rules that made the node (`FuseBatchNormIntoConv`).

A file with none of these (the TorchScript exporter's, `dynamo=False`, and most others) is grouped by the scopes in
its node names, `/layer1/layer1.0/conv1/Conv`, as Model Explorer does; it has no source links.

`SourceLink` is the data model of a node's link to its source program: the FX node and module it names, and
whether the link is only `approximate` (found by module, op and order rather than by name), for the pipeline view
and numerics to fill and follow.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

FX_NODE = "pkg.torch.onnx.fx_node"
NAME_SCOPES = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY = "pkg.torch.onnx.class_hierarchy"
STACK_TRACE = "pkg.torch.onnx.stack_trace"
RULE_NAME = "pkg.onnxscript.rewriter.rule_name"
SHOWN_KEYS = (FX_NODE, NAME_SCOPES, CLASS_HIERARCHY, STACK_TRACE, RULE_NAME, "namespace")

_FX_NAME = re.compile(r"^\s*%([A-Za-z_][\w.]*)\s*:")
_FX_TARGET = re.compile(r"call_function\[target=(?:torch\.ops\.)?([\w.]+)\]")


@dataclass(frozen=True)
class SourceLink:
    """An ONNX node's link to a node of its source program: the FX node's name (None where only the module is
    known), its module path ("" at the root), and `approximate` when not found by name."""

    node: str | None
    module: str
    approximate: bool = False


@dataclass(frozen=True)
class Scope:
    """One module a node was exported inside: its full path and class ("" where the file does not say)."""

    path: str
    class_name: str


def fx_node_name(printed: str) -> str | None:
    """`%conv2d : [num_users=1] = call_function[...]` -> `conv2d`."""
    m = _FX_NAME.match(printed)
    return m.group(1) if m else None


def fx_node_target(printed: str) -> str:
    """`... = call_function[target=torch.ops.aten.relu.default](...)` -> `aten.relu.default` ("" if not a call)."""
    m = _FX_TARGET.search(printed[:2000])
    return m.group(1) if m else ""


def _string_list(text: str) -> list[str]:
    """`"['', 'bn1', 'conv2d']"`, as the exporter writes a list: read as a Python literal, never evaluated."""
    if len(text) > 100_000:  # no real module path is this long: a hostile file's
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [str(x) for x in value] if isinstance(value, (list, tuple)) else []


def exporter_scopes(props: dict[str, str]) -> tuple[Scope, ...] | None:
    """The modules from `name_scopes` and `class_hierarchy`, outermost first, the root and the FX node left out;
    None when the node has no `name_scopes`."""
    if NAME_SCOPES not in props:
        return None
    names = _string_list(props[NAME_SCOPES])
    classes = _string_list(props.get(CLASS_HIERARCHY, ""))
    scopes = []
    for i in range(1, len(names) - 1):
        scopes.append(Scope(names[i], classes[i] if i < len(classes) else ""))
    return tuple(scopes)


def name_scopes(node_name: str) -> tuple[Scope, ...]:
    """The scopes in a node's name, `/layer1/layer1.0/conv1/Conv` -> layer1, layer1.0, layer1.0.conv1: a scope that
    starts with its parent's path (`layer1.0` in `layer1`) is a full path, any other is a child's own name."""
    parts = [p for p in node_name.split("/")[:-1] if p]
    if not node_name.startswith("/") or not parts:
        return ()
    scopes: list[Scope] = []
    path = ""
    for part in parts:
        path = part if not path or part.startswith(path + ".") else f"{path}.{part}"
        scopes.append(Scope(path, ""))
    return tuple(scopes)


def module_stack_text(scopes: tuple[Scope, ...]) -> str:
    """The scopes as torch's `nn_module_stack` string (`key,path,class;...`, core/model/metadata.py), so the graph
    groups an ONNX node by module as it groups a `.pt2`'s."""
    return ";".join(f"{s.path},{s.path},{s.class_name}" for s in scopes)


def source_link(props: dict[str, str]) -> SourceLink | None:
    """The source the exporter names for a node; None when it names none (not an export of torch's dynamo
    exporter)."""
    if FX_NODE not in props and NAME_SCOPES not in props:
        return None
    scopes = exporter_scopes(props) or ()
    return SourceLink(fx_node_name(props.get(FX_NODE, "")), scopes[-1].path if scopes else "")


def rules(props: dict[str, str]) -> str:
    return props.get(RULE_NAME, "")


def stack_trace(props: dict[str, str]) -> str:
    """The exporter's stack trace in torch's traceback form (each frame line indented), as `Node.stack` parses."""
    text = props.get(STACK_TRACE, "")
    return "\n".join(("  " + line) if line.startswith("File ") else line for line in text.splitlines())
