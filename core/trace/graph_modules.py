"""Which module of the user's model made each node of a compiled graph, for a log that holds no `nn_module_stack`.

- **Weights by name.** Dynamo lifts each parameter and buffer into a placeholder named by its path:
  `L_self_modules_layer1_modules_0_modules_conv1_parameters_weight_` is `layer1.0.conv1.weight`, a parameter
  (`_modules_`, `_parameters_`, `_buffers_` separate the parts). Torch before 2.5 read weights with `get_attr`
  (`self.L__self___layer1_0_conv1_weight`) and called `torch.nn` modules whole (`self.L__self___fc(x)`): those names
  are read with each underscore a dot (`lm_head` reads `lm.head`: the names lost which underscores were dots).
  AOTAutograd's and Inductor's graphs name their inputs `primals_N` / `argN_1`: each is the Dynamo input its comment
  names (`# PlainAOTInput(idx=0)`), or, where the text has no comments, the Dynamo input at its position.
- **An op that reads a weight** belongs to the weight's module (`conv2d` reading `layer1.0.conv1.weight` is in
  `layer1.0.conv1`).
- **The source** places the rest. Each run of nodes under one `# File:` comment is one line of the model's code,
  `code: x = self.avgpool(x)`; a call of `self.NAME` in it, beside a node of known module in the same function's
  lines (`self.features(x)` making `features.0.0`'s conv), says whose `self` that function ran on (the root), so
  the line's nodes are `avgpool`'s. A node the source does not place goes to the innermost module holding the
  nodes of known module before and after it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from pt2_viewer.core.model.program import InputKind, Node, NodeOp
from pt2_viewer.core.trace.graph_text import SourceComment, TextGraph

_MARKERS = frozenset({"modules", "parameters", "buffers"})
_OLD_LEAVES = ("running_mean", "running_var", "num_batches_tracked", "in_proj_weight", "in_proj_bias", "weight",
               "bias")


@dataclass(frozen=True)
class WeightName:
    """A placeholder that is a parameter or buffer of the compiled module."""

    fqn: str  # `layer1.0.conv1.weight`
    kind: InputKind

    @property
    def owner(self) -> str:
        return self.fqn.rpartition(".")[0]


def weight_name(name: str) -> WeightName | None:
    """The parameter or buffer a Dynamo placeholder stands for, from its name; None for any other input."""
    text = name[2:] if name[:2] in ("L_", "l_") else name
    text = text.rstrip("_") if text.endswith("_") else text
    if text.startswith("_self___"):
        return _old_style(text[len("_self___"):])
    tokens = text.split("_")
    first = next((i for i, t in enumerate(tokens) if t in _MARKERS and i), None)
    if first is None:
        return None
    parts: list[str] = []
    marker = ""
    for token in tokens[first:]:
        if token in _MARKERS and (not parts or parts[-1]):  # a marker starts the next part
            marker = token
            parts.append("")
        else:
            parts[-1] = f"{parts[-1]}_{token}" if parts[-1] else token
    if marker == "modules" or not all(parts):
        return None
    return WeightName(".".join(parts), InputKind.PARAMETER if marker == "parameters" else InputKind.BUFFER)


def _old_style(text: str) -> WeightName | None:
    """`layer1_0_conv1_weight` (torch < 2.4): its known tensor name last, the module's parts before it."""
    for leaf in _OLD_LEAVES:
        if text == leaf or text.endswith("_" + leaf):
            module = text[:-len(leaf)].rstrip("_").replace("_", ".")
            kind = InputKind.BUFFER if leaf.startswith(("running", "num_")) else InputKind.PARAMETER
            return WeightName(f"{module}.{leaf}" if module else leaf, kind)
    return None


def called_module(target: str) -> str | None:
    """The module a call of torch before 2.5 names (`L__self___layer1_0_conv1`: `layer1.0.conv1`, each underscore
    read as a dot); None for any other target."""
    if not target.startswith("L__self___"):
        return None
    return target[len("L__self___"):].replace("_", ".") or None


def aot_input_index(note: str) -> int | None:
    """`PlainAOTInput(idx=3)` -> 3: the Dynamo input an AOTAutograd placeholder is (read with `ast`)."""
    try:
        call = ast.parse(note, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "PlainAOTInput":
        for k in call.keywords:
            if k.arg == "idx" and isinstance(k.value, ast.Constant) and type(k.value.value) is int:
                return k.value.value
    return None


def common_prefix(a: str | None, b: str | None) -> str:
    """The innermost module holding both (`features.1` and `features.2.block` -> `features`); "" if either is None."""
    if a is None or b is None:
        return ""
    if a == b:
        return a
    out: list[str] = []
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        out.append(x)
    return ".".join(out)


def inside(path: str, module: str) -> bool:
    return module == "" or path == module or path.startswith(module + ".")


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


@lru_cache(maxsize=4096)
def self_calls(code: str) -> tuple[str, ...]:
    """The modules a line calls on `self`, as paths relative to it: `x = self.layer1[0].conv1(x)` -> ["layer1.0.conv1"].
    The line is parsed, never run; a line that is not whole Python (a statement cut at its first line) has none."""
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            path = _self_path(node.func)
            if path and path not in out:
                out.append(path)
    return tuple(out)


def _self_path(e: ast.expr) -> str | None:
    parts: list[str] = []
    while True:
        if isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        elif isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and type(e.slice.value) is int:
            parts.append(str(e.slice.value))
            e = e.value
        else:
            break
    if not (isinstance(e, ast.Name) and e.id == "self") or not parts:
        return None
    return ".".join(reversed(parts))


def _self_of(known: str, relative: str) -> str | None:
    """The path of `self` when `self.RELATIVE` made a node of module `known`: `features.2.block.0.0` by `self.block`
    -> `features.2`; None when `known` is not inside such a module."""
    parts, rel = known.split("."), relative.split(".")
    for i in range(len(parts) - len(rel) + 1):
        if parts[i:i + len(rel)] == rel:
            return ".".join(parts[:i])
    return None


def node_modules(graph: TextGraph, weights: dict[str, WeightName]) -> dict[str, str]:
    """Each call node's module path ("" for the root): from the weights it reads, then the source (module
    docstring). `weights` maps the graph's weight placeholders' values to their names."""
    calls = [n for n in graph.nodes if n.op is NodeOp.CALL_FUNCTION]
    known: dict[str, str] = {}
    owner = {value: w.owner for value, w in weights.items()}
    for n in calls:
        called = called_module(n.target)
        if called is not None:
            known[n.name] = called
            continue
        owners = [owner[r] for r in n.input_refs() if r in owner]
        if owners:
            path = owners[0]
            for other in owners[1:]:
                path = common_prefix(path, other)
            known[n.name] = path
    blocks = _blocks(calls, graph.sources)
    modules: dict[str, str] = dict(known)
    before: dict[str, str | None] = {}
    last: str | None = None
    for n in calls:
        before[n.name] = last
        last = known.get(n.name, last)
    after: dict[str, str | None] = {}
    last = None
    for n in reversed(calls):
        after[n.name] = last
        last = known.get(n.name, last)
    for run in _runs(blocks):
        self_path = _run_self(run, known)
        for source, nodes in run:
            block_module = _block_module(source, nodes, known, self_path)
            has_known = any(n.name in known for n in nodes)
            for n in nodes:
                if n.name in known:
                    continue
                around = common_prefix(before[n.name], after[n.name])
                if block_module is not None and inside(around, block_module):
                    modules[n.name] = around
                elif block_module is not None and not has_known:
                    modules[n.name] = block_module
                elif self_path is not None:
                    modules[n.name] = around if inside(around, self_path) else self_path
                else:
                    modules[n.name] = around
    return modules


_Block = tuple[SourceComment | None, list[Node]]


def _blocks(calls: list[Node], sources: dict[str, SourceComment]) -> list[_Block]:
    """Runs of consecutive nodes under one source comment."""
    out: list[_Block] = []
    for n in calls:
        source = sources.get(n.name)
        if out and out[-1][0] is source:
            out[-1][1].append(n)
        else:
            out.append((source, [n]))
    return out


def _runs(blocks: list[_Block]) -> list[list[_Block]]:
    """Consecutive blocks of one function (one call of it, as far as the text tells)."""
    out: list[list[_Block]] = []
    for block in blocks:
        source = block[0]
        prev = out[-1][-1][0] if out else None
        if out and source is not None and prev is not None and (prev.file, prev.function) == \
                (source.file, source.function):
            out[-1].append(block)
        else:
            out.append([block])
    return out


def _run_self(run: list[_Block], known: dict[str, str]) -> str | None:
    """The module a function's run of lines ran on: where a `self.NAME(...)` call of its lines made a node of known
    module."""
    for source, nodes in run:
        if source is None:
            continue
        for relative in self_calls(source.code):
            for n in nodes:
                if n.name in known:
                    found = _self_of(known[n.name], relative)
                    if found is not None:
                        return found
    return None


def _block_module(source: SourceComment | None, nodes: list[Node], known: dict[str, str],
                  self_path: str | None) -> str | None:
    """The module a line calls (`self.avgpool(x)` on the root: `avgpool`), where its `self` is known."""
    if source is None or self_path is None:
        return None
    relatives = self_calls(source.code)
    for relative in relatives:
        module = _join(self_path, relative)
        if any(inside(known[n.name], module) for n in nodes if n.name in known):
            return module
    return _join(self_path, relatives[0]) if relatives else None
