"""Inductor's output code of one compile with its kernels linked to the FX nodes they compute (issue 40 §2), for the
trace view: a place in the code (a kernel's definition or one of its calls) gives its nodes, and a node gives the
kernels that compute it.

The output code (`inductor_output_code`) is the Python wrapper Inductor generated. Each kernel is defined at the top
(`cpp_fused_relu_0 = async_compile.cpp_pybinding([...], r'''...''')`, `triton_poi_fused_add_0 =
async_compile.triton(...)`) and `call(args)` runs the kernels and the extern calls (`extern_kernels.addmm(...)`,
`torch.ops.aten.convolution_backward.default(...)`) in order; with provenance on, each call follows its handle,
`# [Provenance debug handles] NAME:HANDLE`. The provenance artifact Inductor logs after the code maps `NAME:HANDLE` to
the post-grad nodes and those to Dynamo's (core/trace/provenance.py reads it, as it does for a compiled profile and
for an AOTInductor package). A compile with a backward pass logs the post-grad graph, the code and the artifact twice,
forward then backward: the i-th artifact is the i-th code's, and the i-th post-grad graph holds its nodes.

Each node is said with its op as the graph's printed code names it (`relu: "f32[2, 4]" = torch.ops.aten.relu.default(`
gives `aten.relu.default`), so a reader sees what a kernel computes without opening the graph. Nothing is run."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pt2_viewer.core.trace.envelope import TraceError
from pt2_viewer.core.trace.model import Artifact, Compile
from pt2_viewer.core.trace.provenance import (
    DYNAMO_GRAPH,
    MAX_CODE_BYTES,
    NODE_MAPPINGS,
    OUTPUT_CODE,
    KernelNodes,
    kernels_of,
)

POST_GRAD_GRAPH = "inductor_post_grad_graph"
_HANDLE = re.compile(r"^\s*#\s*\[Provenance debug handles\]\s*(\S+):(\d+)\s*$")
_DEFINITION = re.compile(r"^(\w+) = async_compile\.\w+\(")
_DEFINITION_END = re.compile(r"^'''")  # the kernel's source string closes at the start of a line
_ASSIGNED_CALL = re.compile(r'^\s+(\w+)(?:: "[^"\n]*")? = ((?:torch|operator|aten|prims)\.[\w.]+)\(', re.MULTILINE)
CALL_LOOKAHEAD = 8  # lines after a handle where its call is looked for


@dataclass(frozen=True)
class KernelSite:
    """A place in the output code that names a kernel: one of its calls (its provenance `handle`), or its definition
    (handle None), lines `line` to `end` (1-based; a definition spans its source)."""

    kernel: str
    handle: int | None
    line: int
    end: int


@dataclass(frozen=True)
class LinkedKernel:
    """What a kernel computes, from one place in the code: its name, the calls it stands for (a definition stands for
    every call of it), and its nodes: post-grad and Dynamo's, each with its op where the graph's code names one."""

    kernel: str
    handles: tuple[int, ...]
    post_grad: tuple[str, ...]
    pre_grad: tuple[str, ...]
    post_grad_ops: dict[str, str] = field(default_factory=dict)
    pre_grad_ops: dict[str, str] = field(default_factory=dict)

    def nodes(self, graph: str) -> tuple[str, ...]:
        """The nodes of `graph` ("post_grad" or "dynamo") it computes."""
        return self.post_grad if graph == "post_grad" else self.pre_grad

    def text(self, most: int | None = None) -> str:
        """For a person: the kernel, its calls, and its nodes with their ops, post-grad then Dynamo's (the `most`
        first of each, and how many more)."""
        calls = ", ".join(str(h) for h in self.handles)
        lines = [f"{self.kernel}" + (f" (call {calls})" if len(self.handles) == 1 else
                                     f" (calls {calls})" if self.handles else " (never called)")]
        for title, nodes, ops in (("Post-grad nodes", self.post_grad, self.post_grad_ops),
                                  ("Dynamo nodes", self.pre_grad, self.pre_grad_ops)):
            shown = nodes if most is None else nodes[:most]
            said = ", ".join(f"{n} ({ops[n]})" if n in ops else n for n in shown) or "none"
            more = len(nodes) - len(shown)
            lines.append(f"{title} ({len(nodes)}): {said}" + (f", and {more} more" if more else ""))
        return "\n".join(lines)


@dataclass
class CodeLinks:
    """One output code's kernels: every place that names one, and what each call computes (`kernels`, provenance's
    own answer, in the order the wrapper calls them)."""

    index: int  # which of the compile's output codes (1: the backward's)
    sites: list[KernelSite]
    kernels: list[KernelNodes]
    post_grad_ops: dict[str, str]
    pre_grad_ops: dict[str, str]

    def at_line(self, line: int) -> LinkedKernel | None:
        """The kernel named at 1-based `line` (a call, or anywhere in a kernel's definition); None elsewhere."""
        site = next((s for s in self.sites if s.line <= line <= s.end), None)
        return self.linked(site) if site is not None else None

    def linked(self, site: KernelSite) -> LinkedKernel:
        calls = [k for k in self.kernels if k.kernel == site.kernel
                 and (site.handle is None or k.handle == site.handle)]
        post = tuple(dict.fromkeys(n for k in calls for n in k.post_grad))
        pre = tuple(dict.fromkeys(n for k in calls for n in k.pre_grad))
        return LinkedKernel(site.kernel, tuple(k.handle for k in calls if k.handle is not None), post, pre,
                            {n: self.post_grad_ops[n] for n in post if n in self.post_grad_ops},
                            {n: self.pre_grad_ops[n] for n in pre if n in self.pre_grad_ops})

    def spans(self, kernel: LinkedKernel) -> list[tuple[int, int]]:
        """Where `kernel` is in the code, first and last line of each place: its definition and its calls."""
        return [(s.line, s.end) for s in self.sites if s.kernel == kernel.kernel
                and (s.handle is None or s.handle in kernel.handles)]

    def calls(self) -> list[KernelSite]:
        """The kernel calls, in the order they run."""
        return [s for s in self.sites if s.handle is not None]

    def sites_of(self, node: str, graph: str) -> list[KernelSite]:
        """The calls of kernels that compute `node` of `graph` ("post_grad" or "dynamo"), in the order they run."""
        handles = {k.handle for k in self.kernels if node in (k.post_grad if graph == "post_grad" else k.pre_grad)}
        return [s for s in self.calls() if s.handle in handles]


def code_links(compile_: Compile, index: int = 0) -> CodeLinks | None:
    """The links of `compile_`'s `index`-th output code; None when the trace has no provenance for it (torch records
    none by default, and maps no kernel of a backward's code) or the code is too big to read. TraceError, one line,
    for an artifact torch did not write."""
    code = _nth(compile_, OUTPUT_CODE, index)
    mappings = _nth(compile_, NODE_MAPPINGS, index)
    if code is None or mappings is None or mappings.size == 0 or code.size > MAX_CODE_BYTES:
        return None
    try:
        text = code.text()
    except OSError as e:
        raise TraceError(f"{code.log}: cannot read it ({e.strerror or e})") from None
    kernels = kernels_of(mappings)
    if not kernels:  # torch 2.13 logs `{"version": 2.0}` alone for a backward's code
        return None
    post = _nth(compile_, POST_GRAD_GRAPH, index)
    dynamo = _nth(compile_, DYNAMO_GRAPH, 0)
    return CodeLinks(index, kernel_sites(text), kernels, _ops(post), _ops(dynamo))


def kernel_sites(text: str) -> list[KernelSite]:
    """Every kernel's definition and every call marked with its provenance handle, in the code's order."""
    lines = text.splitlines()
    sites: list[KernelSite] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if definition := _DEFINITION.match(line):
            end = next((j for j in range(i + 1, len(lines)) if _DEFINITION_END.match(lines[j])), i)
            sites.append(KernelSite(definition.group(1), None, i + 1, end + 1))
            i = end + 1
            continue
        if handle := _HANDLE.match(line):
            name = handle.group(1)
            short = name.rsplit(".", 1)[-1] if name.startswith("extern_kernels.") else name
            call = next((j for j in range(i + 1, min(len(lines), i + 1 + CALL_LOOKAHEAD))
                         if short in lines[j] and not lines[j].lstrip().startswith("#")), i)
            sites.append(KernelSite(name, int(handle.group(2)), i + 1, call + 1))
        i += 1
    return sites


def _nth(compile_: Compile, name: str, index: int) -> Artifact | None:
    found = [a for a in compile_.artifacts if a.name == name]
    return found[index] if index < len(found) else None


def _ops(graph: Artifact | None) -> dict[str, str]:
    """Each node of a printed graph with the op its line calls (`aten.relu.default`, `torch.conv2d`); {} when the
    graph is missing or unreadable (the nodes are still listed, without their ops)."""
    if graph is None or graph.size > MAX_CODE_BYTES:
        return {}
    try:
        text = graph.text()
    except OSError:
        return {}
    return {m.group(1): m.group(2).removeprefix("torch.ops.") for m in _ASSIGNED_CALL.finditer(text)}
