"""One ExecuTorch execution plan as the viewer's `Program`: instructions as nodes, values as tensors.

So the graph view, Details, Find, Summary and the report work on a `.pte` unchanged:
- a kernel call is a `call_function` node whose target is torch's spelling of the operator
  (`aten::convolution.out` -> `torch.ops.aten.convolution.out`), the file's own spelling kept in its metadata;
- a delegate call is ONE node, `delegate.<backend>`, its payload size and compile specs in its metadata;
- moves, conditional jumps and frees (control flow, dynamic memory) are nodes `executorch.move` etc.;
- the method's inputs are placeholders (user inputs), constant tensors placeholders of kind constant;
- every tensor value keeps its dtype and shape; its dim order becomes the strides it implies, and is also named in
  the producing node's metadata, with its place in the memory plan.

Which arguments of a call are its outputs? The emitter (exir/emit/_emitter.py) writes a kernel's schema arguments,
then its return values, so the last argument is always written and an `out=` tensor appears twice; a delegate's
arguments are its inputs then its outputs, so an argument no earlier instruction wrote (not an input, not a
constant) is an output.
"""
from __future__ import annotations

import re
from typing import Any

from pt2_viewer.core.model.executorch import DelegateBlock
from pt2_viewer.core.model.program import (
    Argument,
    Edge,
    Graph,
    InputKind,
    InputSpec,
    Node,
    NodeOp,
    OutputKind,
    OutputSpec,
    Program,
    Ref,
    Signature,
    StoredTensor,
    Value,
)
from pt2_viewer.core.model.tensor_meta import SCALAR_TYPES as SERDE_SCALAR_TYPES
from pt2_viewer.core.model.tensor_meta import TensorMeta
from pt2_viewer.core.pte.errors import PteError
from pt2_viewer.core.pte.schema import PtePlan, PteTensor, PteValue

_SERDE_CODE = {name: code for code, name in SERDE_SCALAR_TYPES.items()}
_NOT_NAME = re.compile(r"[^0-9A-Za-z_.]")
CONTROL_TARGETS = {"move": "executorch.move", "jump_false": "executorch.jump_false", "free": "executorch.free",
                   "unknown": "executorch.unknown_instruction"}


def operator_text(name: str, overload: str) -> str:
    """`aten::add.out`: the operator table as the file spells it."""
    return f"{name}.{overload}" if overload else name


def operator_target(name: str, overload: str) -> str:
    """torch's spelling, so namespace, operator and overload read as for an exported program."""
    if "::" not in name:
        return operator_text(name, overload)
    ns, op = name.split("::", 1)
    return f"torch.ops.{ns}.{op}.{overload or 'default'}"


def strides_for(sizes: tuple[int, ...], dim_order: tuple[int, ...]) -> tuple[int, ...]:
    """The strides a dim order implies (outermost dimension first in `dim_order`)."""
    if sorted(dim_order) != list(range(len(sizes))):
        dim_order = tuple(range(len(sizes)))
    strides = [0] * len(sizes)
    step = 1
    for d in reversed(dim_order):
        strides[d] = step
        step *= max(sizes[d], 1)
    return tuple(strides)


def tensor_json(t: PteTensor) -> dict[str, Any]:
    """The tensor in torch's serialized TensorMeta shape (what `Value.meta` parses)."""
    return {"dtype": _SERDE_CODE.get(t.dtype, -1), "sizes": [{"as_int": s} for s in t.sizes],
            "strides": [{"as_int": s} for s in strides_for(t.sizes, t.dim_order)],
            "device": {"type": "cpu"}, "requires_grad": t.requires_grad, "layout": 7,
            "storage_offset": {"as_int": t.storage_offset}}


def dim_order_text(t: PteTensor) -> str:
    return "(" + ", ".join(str(d) for d in t.dim_order) + ("," if len(t.dim_order) == 1 else "") + ")"


LIST_KINDS = ("tensor_list", "optional_tensor_list", "int_list")


def expansion_cost(plan: PtePlan) -> int:
    """How many entries mapping the plan walks: every instruction argument, a list argument as all its items. The
    reader's budget charges each list once, when it is read; a hostile file can name one long list from many
    arguments, so the reader checks this too before mapping the plan (and its memory plan) onto the program model."""
    n = len(plan.values)
    cost = 0
    for ins in plan.instructions:
        for a in ins.args:
            cost += 1
            if 0 <= a < n and plan.values[a].kind in LIST_KINDS and isinstance(plan.values[a].value, list | tuple):
                cost += len(plan.values[a].value)
    return cost


class PlanMapper:
    """Builds the `Program` of one plan; `value_names[i]` is the value name of EValue i (after `program()`)."""

    def __init__(self, plan: PtePlan, delegates: list[DelegateBlock], constant_names: dict[int, str],
                 version: int) -> None:
        self.plan = plan
        self.delegates = delegates
        self.version = version
        self._check(plan.inputs + plan.outputs, "the method's inputs and outputs")
        self.inputs = set(plan.inputs)
        self.value_names: list[str] = []
        used: set[str] = set()
        position = {v: k for k, v in enumerate(plan.inputs)}
        for i, ev in enumerate(plan.values):
            t = ev.value if ev.kind == "tensor" else None
            if i in position:
                name = f"input_{position[i]}"
            elif t is not None and (t.data_buffer_idx > 0 or t.external):
                name = _NOT_NAME.sub("_", t.fqn) or constant_names.get(t.data_buffer_idx, f"const_{t.data_buffer_idx}")
            else:
                name = f"v{i}"
            if name in used:
                name = f"{name}_{i}"
            used.add(name)
            self.value_names.append(name)
        self.index_of = {name: i for i, name in enumerate(self.value_names)}

    # -- checks ------------------------------------------------------------------------------------------------
    def _check(self, indices: Any, what: str) -> None:
        n = len(self.plan.values)
        for i in indices:
            if not 0 <= i < n:
                raise PteError(f"The method '{self.plan.name}' is damaged: {what} refer to value {i}, but the "
                               f"method has {n} values. Lower the model again, or copy the file again.")

    def _is_constant(self, i: int) -> bool:
        ev = self.plan.values[i]
        return ev.kind == "tensor" and (ev.value.data_buffer_idx > 0 or ev.value.external)

    # -- the graph ---------------------------------------------------------------------------------------------
    def program(self) -> Program:
        plan, names = self.plan, self.value_names
        values: dict[str, Value] = {}
        nodes: list[Node] = []
        edges: list[Edge] = []
        producer: dict[int, str] = {}  # EValue index -> node that last wrote it
        specs: list[InputSpec] = []
        weights: list[StoredTensor] = []

        def value_for(i: int) -> Value:
            name = names[i]
            v = values.get(name)
            if v is None:
                v = values[name] = _value(name, plan.values[i])
            return v

        def add(node: Node, written: list[int]) -> None:
            seen: set[tuple[str, str]] = set()
            for ref in node.input_refs():
                src = value_for(self.index_of[ref]).producer
                if src is not None and (src, ref) not in seen:
                    seen.add((src, ref))
                    edges.append(Edge(src, node.name, ref))
            for i in written:
                value_for(i).producer = node.name
                producer[i] = node.name
            nodes.append(node)

        for i in plan.inputs:
            ev = plan.values[i]
            node = Node(names[i], NodeOp.PLACEHOLDER, names[i], outputs=[names[i]],
                        metadata=self._tensor_metadata(ev))
            add(node, [i])
            specs.append(InputSpec(names[i], InputKind.USER_INPUT, None))
        for i, ev in enumerate(plan.values):
            if self._is_constant(i) and i not in self.inputs:
                t: PteTensor = ev.value
                meta = self._tensor_metadata(ev)
                meta["constant"] = "external (a .ptd file)" if t.external else f"constant data {t.data_buffer_idx}"
                add(Node(names[i], NodeOp.PLACEHOLDER, names[i], outputs=[names[i]], metadata=meta), [i])
                specs.append(InputSpec(names[i], InputKind.CONSTANT_TENSOR, t.fqn or names[i]))
                weights.append(StoredTensor(names[i], meta["constant"], tensor_json(t), False, False, t.nbytes))

        for pc, ins in enumerate(plan.instructions):
            self._check(ins.args, f"instruction {pc}'s arguments")
            written = self._written(ins.kind, ins.args, producer)
            for i in written:
                if plan.values[i].kind in ("tensor_list", "optional_tensor_list"):
                    self._check([x for x in plan.values[i].value if x >= 0], f"instruction {pc}'s outputs")
            outs = self._flat(written)
            inputs = [Argument("", self._argument(a, producer)) for a in ins.args if a not in written]
            metadata = {"instruction": str(pc)}
            if plan.chains > 1:
                metadata["chain"] = str(ins.chain)
            if ins.kind == "kernel":
                if not 0 <= ins.index < len(plan.operators):
                    raise PteError(f"The method '{plan.name}' is damaged: instruction {pc} calls operator "
                                   f"{ins.index}, but the operator table has {len(plan.operators)}.")
                name, overload = plan.operators[ins.index]
                target = operator_target(name, overload)
                metadata["operator"] = operator_text(name, overload)
                label = name.split("::")[-1]
            elif ins.kind == "delegate":
                if not 0 <= ins.index < len(self.delegates):
                    raise PteError(f"The method '{plan.name}' is damaged: instruction {pc} calls delegate "
                                   f"{ins.index}, but it has {len(self.delegates)}.")
                d = self.delegates[ins.index]
                target = f"delegate.{_NOT_NAME.sub('_', d.backend) or 'backend'}"
                label = f"delegate_{d.index}"
                metadata.update({"backend": d.backend, "payload bytes": str(d.nbytes), "payload": d.location})
                metadata.update({f"compile spec {k}": v for k, v in d.compile_specs})
                if d.ops:
                    metadata["delegated ops"] = ", ".join(d.ops)
            else:
                target = CONTROL_TARGETS.get(ins.kind, CONTROL_TARGETS["unknown"])
                label = ins.kind
                if ins.kind == "jump_false":
                    metadata["destination"] = str(ins.index)
            for j in outs:
                metadata.update(self._tensor_metadata(plan.values[j], prefix=f"{names[j]} "))
            if ins.frames:
                metadata["stack_trace"] = "".join(f'  File "{f}", line {line}, in {fn}\n    {code}\n'
                                                  for f, line, fn, code in ins.frames)
            add(Node(f"{label}_{pc}", NodeOp.CALL_FUNCTION, target, inputs, [names[j] for j in outs], metadata),
                written)
            for j in outs:
                if j not in written:
                    value_for(j).producer = f"{label}_{pc}"
                    producer[j] = f"{label}_{pc}"

        out_args = [Argument("", [self._argument(i, producer) for i in plan.outputs])]
        add(Node("output", NodeOp.OUTPUT, "output", inputs=out_args), [])
        for i in plan.outputs:
            value_for(i)
        graph = Graph("", nodes, edges, values, [names[i] for i in plan.inputs], [names[i] for i in plan.outputs])
        signature = Signature(specs, [OutputSpec(names[i], OutputKind.USER_OUTPUT, None) for i in plan.outputs])
        return Program(
            name=plan.name, graph=graph, signature=signature, range_constraints={}, symbols=[],
            module_call_graph=[], weights=weights, constants=[], dialect="EXECUTORCH",
            opset_version={}, schema_version=str(self.version), torch_version="",
            metadata={"format": "ExecuTorch .pte"},
        )

    def _written(self, kind: str, args: tuple[int, ...], producer: dict[int, str]) -> list[int]:
        """The arguments an instruction writes (see the module docstring)."""
        if kind == "move":
            return [args[1]] if len(args) == 2 else []
        if kind not in ("kernel", "delegate") or not args:
            return []
        defined = lambda i: i in producer or self._is_constant(i) or self.plan.values[i].kind not in (  # noqa: E731
            "tensor", "tensor_list", "optional_tensor_list")
        if kind == "delegate":
            out = [a for a in dict.fromkeys(args) if not defined(a)]
            return out or [args[-1]]
        counts: dict[int, int] = {}
        for a in args:
            counts[a] = counts.get(a, 0) + 1
        return [a for a in dict.fromkeys(args) if a == args[-1] or (counts[a] > 1 and not defined(a))]

    def _flat(self, written: list[int]) -> list[int]:
        """Written values, a tensor list as its tensors."""
        out: list[int] = []
        for i in written:
            ev = self.plan.values[i]
            if ev.kind in ("tensor_list", "optional_tensor_list"):
                out.extend(x for x in ev.value if 0 <= x < len(self.plan.values))
            else:
                out.append(i)
        return list(dict.fromkeys(out))

    def _argument(self, i: int, producer: dict[int, str]) -> Any:
        """An argument: a `Ref` to a tensor (or to a value an instruction wrote), else the literal."""
        ev = self.plan.values[i]
        if ev.kind == "tensor" or i in producer:
            return Ref(self.value_names[i])
        if ev.kind in ("tensor_list", "optional_tensor_list"):
            return [None if x < 0 else Ref(self.value_names[x]) if 0 <= x < len(self.plan.values) else f"<bad {x}>"
                    for x in ev.value]
        if ev.kind == "int_list":  # boxed: each item is the index of an Int value
            return [self._int_item(x, producer) for x in ev.value]
        if ev.kind in ("null", "none"):
            return None
        if ev.kind == "unknown":
            return f"<value kind {ev.value}>"
        return ev.value

    def _int_item(self, x: Any, producer: dict[int, str]) -> Any:
        if not isinstance(x, int) or not 0 <= x < len(self.plan.values):
            return f"<bad {x}>"
        ev = self.plan.values[x]
        if x in producer:
            return Ref(self.value_names[x])
        return ev.value if ev.kind == "int" else f"<{ev.kind}>"

    def _tensor_metadata(self, ev: PteValue, prefix: str = "") -> dict[str, str]:
        if ev.kind != "tensor":
            return {}
        t: PteTensor = ev.value
        out = {f"{prefix}dim order": dim_order_text(t)}
        if t.memory_id is not None:
            out[f"{prefix}memory"] = f"buffer {t.memory_id}, offset {t.memory_offset:,}, {t.nbytes:,} bytes"
        if t.dynamism != "static":
            out[f"{prefix}shape dynamism"] = t.dynamism
        return out


def _value(name: str, ev: PteValue) -> Value:
    if ev.kind == "tensor":
        t: PteTensor = ev.value
        v = Value(name, "tensor", meta_json=tensor_json(t))
        if t.dtype not in _SERDE_CODE:  # quantized and bit types torch's schema has no code for
            v.meta = TensorMeta(t.dtype, t.sizes, strides_for(t.sizes, t.dim_order), "cpu", t.requires_grad)
        return v
    kind = {"int": "sym_int", "double": "sym_float", "bool": "sym_bool"}.get(ev.kind, ev.kind)
    return Value(name, kind)
