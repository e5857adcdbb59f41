"""Inductor's output code linked to its nodes (core/trace/kernel_code.py) on traces real torch wrote: with provenance
on (tests/trace_provenance_programs.py, as `pt2-viewer trace SCRIPT.py` runs a script), every call of the code is
found at its line with provenance's own nodes; a trace without it (tests/trace_programs.py, torch's default) links
nothing. No Qt."""
from __future__ import annotations

from pt2_viewer.core.trace.kernel_code import code_links
from pt2_viewer.core.trace.provenance import NODE_MAPPINGS, kernels_of
from pt2_viewer.core.trace.reader import read_trace
from tests.trace_programs import compile_trace
from tests.trace_provenance_programs import provenance_trace


def test_every_kernel_call_is_at_its_line_with_provenances_nodes_and_their_ops() -> None:
    trace = read_trace(provenance_trace())
    mlp, cnn = trace.compiles
    for compile_ in (mlp, cnn):
        links = code_links(compile_)
        assert links is not None
        lines = compile_.artifact("inductor_output_code").text().splitlines()  # type: ignore[union-attr]
        answer = kernels_of(compile_.artifact(NODE_MAPPINGS))  # type: ignore[arg-type]
        assert [(s.kernel, s.handle) for s in links.calls()] == [(k.kernel, k.handle) for k in answer]
        for site in links.calls():
            assert lines[site.line - 1].strip() == f"# [Provenance debug handles] {site.kernel}:{site.handle}"
            assert site.kernel.rsplit(".", 1)[-1] + "(" in lines[site.end - 1]
        for site in (s for s in links.sites if s.handle is None):  # each fused kernel's definition, whole
            assert lines[site.line - 1].startswith(f"{site.kernel} = async_compile.")
            assert lines[site.end - 1].startswith("'''") and site.end > site.line
            inside = links.at_line((site.line + site.end) // 2)
            assert inside is not None and inside.kernel == site.kernel
    fused = next(s for s in code_links(mlp).sites if s.handle is None)  # type: ignore[union-attr]
    kernel = code_links(mlp).linked(fused)  # type: ignore[union-attr]
    assert (kernel.kernel, kernel.handles) == ("cpp_fused_mul_relu_0", (2,))
    assert kernel.post_grad_ops == {"mul": "aten.mul.Tensor", "relu": "aten.relu.default"}
    assert kernel.pre_grad_ops == {"relu": "torch.relu"}  # Dynamo's `mul` is `relu * 2`: no call names its op
    assert [s.handle for s in code_links(mlp).sites_of("linear_1", "dynamo")] == [3]  # type: ignore[union-attr]
    assert code_links(cnn, 1) is None  # torch maps none of the backward's kernels


def test_a_trace_without_provenance_links_nothing() -> None:
    trace = read_trace(compile_trace())
    assert all(code_links(c, i) is None for c in trace.compiles for i in range(2))
