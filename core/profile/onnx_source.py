"""ONNX Runtime's profile of a `.onnx` put on the `.pt2` it was exported from (`profile SOURCE.pt2 PROFILE.json
--onnx MODEL.onnx`): each ONNX node's time (core/profile/onnx_runtime.py) goes to the source nodes it links to, the
links the ONNX tab draws (core/onnx/viewer_links.py: the viewer's own exact ones where it exported the file, else
torch's metadata, some approximate). An ONNX node linked to several source nodes (a Conv that took in its BatchNorm)
shares its time between them equally; a source node reached from several ONNX nodes (a linear exported as MatMul and
Add) sums them, its `calls` the most any of them ran. Time of ONNX nodes that link to no source node is unattributed.
"""
from __future__ import annotations

import dataclasses

from pt2_viewer.core.model.program import NodeOp, Program
from pt2_viewer.core.onnx.viewer_links import links_to_source
from pt2_viewer.core.profile.errors import ProfileError
from pt2_viewer.core.profile.model import Attribution, NodeTime

_SHOWN = 3


def attribute_to_source(source: Program, onnx_program: Program, onnx_result: Attribution, onnx_path: str,
                        source_label: str = "") -> Attribution:
    """`onnx_result` (times on `onnx_program`'s nodes) moved onto `source`'s nodes; `ProfileError` where the
    `.onnx` links to none of them (it was exported from another program)."""
    label = source_label or source.name
    links = links_to_source(onnx_program.graph, source.graph)
    targets = {onnx: [link.node for link in found if link.node] for onnx, found in links.items()}
    if not any(targets.values()):
        raise ProfileError(f"{onnx_path}: none of its nodes links to a node of {label}: it was not exported from "
                           "this program; give the .pt2 it came from (the ONNX tab's Details names it)")
    nodes = {n.name: NodeTime(n.name, n.whole_target) for n in source.graph.nodes if n.op is NodeOp.CALL_FUNCTION}
    unattributed = onnx_result.unattributed_us
    unlinked: list[str] = []
    for timed in (n for n in onnx_result.nodes if n.calls):
        names = [name for name in targets.get(timed.node, []) if name in nodes]
        if not names:
            unattributed += timed.us
            unlinked.append(timed.node)
            continue
        for name in names:
            node = nodes[name]
            node.calls = max(node.calls, timed.calls)
            node.us += timed.us / len(names)
            node.device = timed.device
            node.events += [e if len(names) == 1 else dataclasses.replace(e, dur=e.dur / len(names),
                                                                           shared_by=len(names) * max(e.shared_by, 1))
                            for e in timed.events]
    notes = [*onnx_result.notes, f"through the links of {onnx_path} to {label}"]
    if unlinked:
        notes.append(f"{len(unlinked)} ONNX node{'s' if len(unlinked) != 1 else ''} with time link to no source "
                     f"node ({', '.join(unlinked[:_SHOWN])}{', ...' if len(unlinked) > _SHOWN else ''})")
    return Attribution(label, onnx_result.trace, onnx_result.device, onnx_result.calls, list(nodes.values()),
                       unattributed, notes)
