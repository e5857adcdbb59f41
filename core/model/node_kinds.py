"""Sort nodes into the kinds the graph colours them by: inputs by signature kind, ops by family.

Families are chosen for what a reader scans for: where the heavy math is (matmul, conv), where shapes change (views),
normalisation, reductions, control flow (HOPs), custom ops (outside torch's namespaces), and runtime asserts.
"""
from __future__ import annotations

from functools import lru_cache

from pt2_viewer.core.model.program import InputKind, Node, NodeOp, Program

KINDS = (
    "user_input", "parameter", "buffer", "constant", "token", "output", "subgraph",
    "matmul", "conv", "norm", "activation", "reduction", "view", "elementwise", "creation", "hop", "custom",
    "symbolic", "assert", "other",
)
_TORCH_NAMESPACES = {"aten", "prims", "higher_order", "_operator", "operator", "builtins", "math", "torch",
                     "quantized_decomposed", "_c10d_functional", "c10d_functional", "inductor", "_inductor"}
_FAMILIES: list[tuple[str, tuple[str, ...]]] = [
    ("matmul", ("linear", "mm", "bmm", "addmm", "matmul", "baddbmm", "einsum", "scaled_dot_product", "_scaled_mm",
                "_flash_attention", "_efficient_attention", "attention")),
    ("conv", ("conv", "convolution")),
    ("norm", ("norm", "batch_norm", "layer_norm", "group_norm", "rms_norm", "instance_norm")),
    ("activation", ("relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "hardtanh", "elu", "mish",
                    "hardswish", "leaky_relu", "dropout", "softplus")),
    ("reduction", ("sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var", "std", "topk",
                   "cumsum", "any", "all", "logsumexp", "sort")),
    ("view", ("view", "reshape", "permute", "transpose", "expand", "squeeze", "unsqueeze", "flatten", "slice",
              "select", "index", "cat", "stack", "split", "chunk", "t", "contiguous", "clone", "alias", "narrow",
              "unbind", "repeat", "gather", "scatter", "getitem", "_unsafe_view", "as_strided", "unflatten",
              "copy", "_to_copy", "to", "detach", "lift_fresh_copy", "embedding", "pad", "roll", "flip")),
    ("creation", ("zeros", "ones", "full", "empty", "arange", "rand", "randn", "tensor", "scalar_tensor",
                  "new_zeros", "new_ones", "new_full", "new_empty", "zeros_like", "ones_like", "full_like",
                  "empty_like", "randn_like", "rand_like", "eye", "linspace", "tril", "triu")),
    ("symbolic", ("sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "sym_constrain_range",
                  "sym_constrain_range_for_size", "sym_not", "sym_float", "sym_int", "sym_max", "sym_min",
                  "sym_sum", "item", "_local_scalar_dense")),
]


def node_kind(node: Node, input_kinds: dict[str, InputKind] | None = None) -> str:
    if node.op is NodeOp.CALL_FUNCTION and not node.subgraphs:
        return _op_kind(node.namespace, node.op_name)
    if node.op is NodeOp.PLACEHOLDER:
        k = (input_kinds or {}).get(node.name, InputKind.USER_INPUT)
        return {InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer", InputKind.CONSTANT_TENSOR: "constant",
                InputKind.CUSTOM_OBJ: "constant", InputKind.TOKEN: "token"}.get(k, "user_input")
    if node.op is NodeOp.OUTPUT:
        return "output"
    if node.op is NodeOp.GET_ATTR:
        return "subgraph"
    return "hop" if node.subgraphs else _op_kind(node.namespace, node.op_name)


@lru_cache(maxsize=4096)
def _op_kind(ns: str, op_name: str) -> str:
    """The family of an operator (a program has few distinct ops, so this is cached)."""
    if ns == "higher_order":
        return "hop"
    name = op_name.rstrip("_")
    if "assert" in name:
        return "assert"
    if ns and ns not in _TORCH_NAMESPACES:
        return "custom"
    if ns in ("_operator", "operator", "builtins", "math"):
        return "symbolic"
    # then the op under torch's private and native spellings: native_layer_norm is a norm as layer_norm is, and
    # _native_batch_norm_legit_functional a batch norm
    bare = name.lstrip("_")
    bare = bare[len("native_"):] if bare.startswith("native_") else bare
    for candidate in dict.fromkeys((name, bare)):
        for family, names in _FAMILIES:
            if candidate in names or any(candidate.startswith(n) for n in names if len(n) > 3):
                return family
    return "elementwise"


def input_kinds(program: Program) -> dict[str, InputKind]:
    return {s.name: s.kind for s in program.signature.inputs}
