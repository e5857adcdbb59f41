"""Which FX nodes each kernel of a torch.compile run computes, from the trace's provenance (issue 41).

With `torch._inductor.config.trace.provenance_tracking_level = 1`, Inductor logs per compile an artifact
`inductor_provenance_tracking_node_mappings` (JSON): `cppCodeToPost` maps each kernel call of the generated code,
`NAME:HANDLE` (`cpp_fused_relu_0:3`, `triton_poi_fused_add_1:5`, `extern_kernels.convolution:2`), to the post-grad
nodes it computes; `postToPre` maps those to the pre-grad (Dynamo) graph's nodes. HANDLE counts the wrapper's
kernel calls in the order they run. Dynamo's graph (`dynamo_output_graph`, printed code) gives each pre-grad node's
target (`conv2d: "f32[...]" = torch.ops.aten.conv2d.default(...)`), so a caller can check a node of the same name
is the same op. The output code (`inductor_output_code`) names the graph the kernels belong to
where the CPU kernels record themselves (`cpp.enable_kernel_profile`: `"graph_0_cpp_fused_relu_0"`).

The artifact is JSON from anywhere: a payload over `MAX_MAPPING_BYTES` is refused before it is read, and it is decoded
by msgspec into the four maps of lists of names it should be (anything deeper or of another shape is refused, in one
line: `TraceError`). Nothing in it is run."""
from __future__ import annotations

import re
from dataclasses import dataclass

import msgspec

from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.model import Artifact, Compile, CompileId, Trace

NODE_MAPPINGS = "inductor_provenance_tracking_node_mappings"
OUTPUT_CODE = "inductor_output_code"
DYNAMO_GRAPH = "dynamo_output_graph"
MAX_MAPPING_BYTES = 256 * 1024**2  # a large model's mappings are a few MB
MAX_CODE_BYTES = 256 * 1024**2
_GRAPH_OF_KERNEL = re.compile(r'"graph_(\d+)_((?:cpp|triton)_\w+)"')
_DYNAMO_CALL = re.compile(r'^\s+(\w+): "[^"\n]*" = (torch\.ops\.[\w.]+)\(', re.MULTILINE)


class _Mappings(msgspec.Struct):
    """The artifact as torch writes it (version 2.0); `preToPost` and `postToCppCode` are the same maps inverted."""

    cppCodeToPost: dict[str, list[str]] = {}  # noqa: N815 (torch's own names)
    postToPre: dict[str, list[str]] = {}  # noqa: N815
    version: float | None = None


@dataclass(frozen=True)
class KernelNodes:
    """One kernel call of the compiled code and the FX nodes it computes, post-grad and pre-grad (Dynamo's)."""

    kernel: str  # as the generated code names it: cpp_fused_relu_0, triton_poi_fused_add_1, extern_kernels.addmm
    handle: int | None  # its place among the wrapper's kernel calls (the order they run); None when torch gave none
    post_grad: tuple[str, ...]
    pre_grad: tuple[str, ...]


@dataclass
class CompiledKernels:
    """The kernels of one compile, in the order its wrapper calls them; `graph_id` is the N the CPU kernels record
    themselves under in a profile (`graph_N_cpp_fused_...`), when the output code says."""

    compile_id: CompileId | None  # None for an AOTInductor package's model (core/profile/package_kernels.py)
    rank: int | None
    graph_id: int | None
    kernels: list[KernelNodes]
    pre_grad_targets: dict[str, str]  # Dynamo's node -> its op (torch.ops.aten.conv2d.default), where printed


def kernel_provenance(trace: Trace) -> list[CompiledKernels]:
    """Every compile's kernels with their FX nodes; empty when the run was not traced with provenance on."""
    out: list[CompiledKernels] = []
    for compile_ in trace.compiles:
        artifact = compile_.artifact(NODE_MAPPINGS)
        if artifact is None:
            continue
        out.append(CompiledKernels(compile_.id, compile_.rank, _graph_id(compile_),
                                   _kernels(_mappings(artifact)), _targets(compile_)))
    return out


def kernels_of(artifact: Artifact) -> list[KernelNodes]:
    """The kernels one provenance artifact maps, in the order the wrapper calls them (a compile with a backward pass
    logs one artifact per output code: core/trace/kernel_code.py pairs them); TraceError for one torch did not write."""
    return _kernels(_mappings(artifact))


def _payload(artifact: Artifact, limit: int) -> str:
    if artifact.size > limit:
        raise TraceError(f"{artifact.log}: the {artifact.name} artifact is {artifact.size:,} bytes, over the "
                         f"{limit // 1024**2} MiB it may be; this is not a log torch wrote")
    try:
        return artifact.text()
    except OSError as e:
        raise TraceError(f"{artifact.log}: cannot read it ({e.strerror or e})") from None


def _mappings(artifact: Artifact) -> _Mappings:
    text = _payload(artifact, MAX_MAPPING_BYTES)
    try:
        return msgspec.json.decode(text, type=_Mappings)
    except msgspec.ValidationError as e:
        raise TraceError(f"{artifact.log}: the {NODE_MAPPINGS} artifact is not the map of kernels to nodes torch "
                         f"writes ({e})") from None
    except msgspec.DecodeError as e:
        raise TraceError(f"{artifact.log}: the {NODE_MAPPINGS} artifact is not valid JSON ({e})") from None


def _kernels(mappings: _Mappings) -> list[KernelNodes]:
    kernels: list[KernelNodes] = []
    for key, post in mappings.cppCodeToPost.items():
        name, _, handle = key.rpartition(":")
        if not name or not handle.isdigit():
            name, handle = key, ""
        pre = tuple(dict.fromkeys(p for node in post for p in mappings.postToPre.get(node, ())))
        kernels.append(KernelNodes(name, int(handle) if handle else None, tuple(post), pre))
    kernels.sort(key=lambda k: -1 if k.handle is None else k.handle)
    return kernels


def _code(compile_: Compile, name: str) -> str:
    """A code artifact's text; "" when it is missing, unreadable or over `MAX_CODE_BYTES` (what it adds is a check
    and a name, not the attribution itself)."""
    code = compile_.artifact(name)
    if code is None or code.size > MAX_CODE_BYTES:
        return ""
    try:
        return code.text()
    except OSError:
        return ""


def _graph_id(compile_: Compile) -> int | None:
    """The graph id the output code's CPU kernels record themselves under; None when they do not record."""
    found = _GRAPH_OF_KERNEL.search(_code(compile_, OUTPUT_CODE))
    return int(found.group(1)) if found else None


def _targets(compile_: Compile) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _DYNAMO_CALL.finditer(_code(compile_, DYNAMO_GRAPH))}
