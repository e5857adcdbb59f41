"""Why an op stayed outside the delegate: the verdict of every support check ExecuTorch's partitioner makes, recorded
while it makes them, never guessed from op names.

A config-based partitioner (`ConfigerationBasedPartitioner`, which `XnnpackPartitioner` is) decides in two places:
- `ops_to_not_decompose`: for an ATen op a config could take whole (linear, sdpa...), its `check_constraints` says
  whether to keep it from decomposing (phase `keep`);
- `partition`: for every call_function node of the edge program, no config for its target means "not supported";
  else the config's `check_constraints` decides (phase `partition`), and the nodes it accepts are grouped and tagged.
The checks explain themselves through `WhyNoPartition` (executorch.exir.backend.utils), which logs itself at DEBUG
level on the config module's logger: `SupportRecorder` wraps each config's `check_constraints` on this partitioner
instance (nothing global is patched), collects the `WhyNoPartition` records logged during the call, and reads the
tags `partition` set. A node's reason is then its config's own words.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pt2_viewer.core.deploy.provenance import call_nodes, source_names, target_text

NO_PARTITIONER = "lowered to portable: no partitioner was asked, so it runs on ExecuTorch's portable kernels"
REMOVED = ("removed while lowering: no op of the lowered program traces back to it (torch's from_node provenance; "
           "a no-op view or a folded constant)")


@dataclass
class Check:
    """One call of a config's `check_constraints`."""

    node: str  # the node checked (edge program, or the ATen program in phase "keep")
    target: str
    config: str  # the config class that checked it
    phase: str  # "keep" (ops_to_not_decompose) or "partition"
    verdict: bool
    reasons: list[str] = field(default_factory=list)  # what its WhyNoPartition calls said

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "target": self.target, "config": self.config, "phase": self.phase,
                "verdict": self.verdict, "reasons": self.reasons}


@dataclass
class EdgeNode:
    """A call_function node of the program `partition` was given, as it left it."""

    name: str
    target: str
    sources: list[str]  # the source program's nodes it came from
    tagged: bool  # in a partition: it goes to the delegate
    has_config: bool  # the partitioner has a config for its target


class _WhyHandler(logging.Handler):
    def __init__(self, sink: list[tuple[str, str]]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.msg
        if type(msg).__name__ == "WhyNoPartition":
            self.sink.append((str(getattr(getattr(msg, "node", None), "name", "")), str(getattr(msg, "reason", ""))))


class SupportRecorder:
    """Records the checks of one config-based partitioner instance; `install()` before lowering, inside `logs()`."""

    def __init__(self, partitioner: Any, source: dict[str, str]) -> None:
        self.partitioner = partitioner
        self.source = source  # core/deploy/provenance.source_index of the program lowered
        self.checks: list[Check] = []
        self.edge_nodes: list[EdgeNode] = []
        self._why: list[tuple[str, str]] = []
        self._phase = "keep"

    def install(self) -> None:
        configs = getattr(self.partitioner, "target_partitioner_configs", {})
        for config in configs.values():
            config.check_constraints = self._wrapped_check(config, config.check_constraints)
        original = self.partitioner.partition

        def partition(exported_program: Any) -> Any:
            self._phase = "partition"
            try:
                result = original(exported_program)
            finally:
                self._phase = "keep"
            self._read_tags(result.tagged_exported_program)
            return result

        self.partitioner.partition = partition

    def _wrapped_check(self, config: Any, check: Any) -> Any:
        def checked(node: Any, ep: Any) -> bool:
            start = len(self._why)
            verdict = bool(check(node, ep))
            reasons = list(dict.fromkeys(r if n in ("", node.name) else f"{n}: {r}" for n, r in self._why[start:]))
            self.checks.append(Check(node.name, target_text(node.target), type(config).__name__, self._phase,
                                     verdict, reasons))
            return verdict

        return checked

    def _read_tags(self, ep: Any) -> None:
        from executorch.exir.backend.canonical_partitioners.config_partitioner import format_target_name

        configs = getattr(self.partitioner, "target_partitioner_configs", {})
        self.edge_nodes = []
        for node in call_nodes(ep.graph):
            short = format_target_name(getattr(node.target, "__name__", str(node.target)))
            self.edge_nodes.append(EdgeNode(node.name, target_text(node.target), source_names(node, self.source),
                                            "delegation_tag" in node.meta, short in configs))

    @contextmanager
    def logs(self) -> Iterator[None]:
        """Collect the WhyNoPartition records ExecuTorch's loggers write at DEBUG level, without letting the rest of
        its DEBUG output reach the root logger's handlers."""
        logger = logging.getLogger("executorch")
        handler = _WhyHandler(self._why)
        saved = (logger.level, logger.propagate)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(handler)
        try:
            yield
        finally:
            logger.removeHandler(handler)
            logger.setLevel(saved[0])
            logger.propagate = saved[1]

    def reason_for(self, edge: EdgeNode) -> str:
        """Why the partitioner left this edge node out, in its own words."""
        if not edge.has_config:
            return f"{edge.target}: the partitioner has no config for this op (not supported)"
        mine = [c for c in self.checks if c.phase == "partition" and c.node == edge.name]
        failed = [c for c in mine if not c.verdict]
        if failed:
            c = failed[-1]
            why = "; ".join(c.reasons) or "check_constraints returned False without logging a reason"
            return f"{edge.target}: {c.config} refused it ({why})"
        if mine:
            return f"{edge.target}: {mine[-1].config} accepted it, but no partition kept it"
        return f"{edge.target}: never checked by the partitioner"


@dataclass
class Verdict:
    node: str
    target: str
    delegated: bool
    reason: str = ""


def verdicts(source_calls: list[tuple[str, str]], recorder: SupportRecorder | None) -> list[Verdict]:
    """For every call_function node of the source (`(name, target)` in order): delegated, or why not."""
    out: list[Verdict] = []
    if recorder is None:
        return [Verdict(name, target, False, NO_PARTITIONER) for name, target in source_calls]
    by_source: dict[str, list[EdgeNode]] = {}
    for edge in recorder.edge_nodes:
        for s in edge.sources:
            by_source.setdefault(s, []).append(edge)
    for name, target in source_calls:
        edges = by_source.get(name, [])
        outside = [e for e in edges if not e.tagged]
        if not edges:
            out.append(Verdict(name, target, False, REMOVED))
        elif not outside:
            out.append(Verdict(name, target, True))
        else:
            reasons = list(dict.fromkeys(recorder.reason_for(e) for e in outside))
            prefix = "partly delegated; " if len(outside) < len(edges) else ""
            out.append(Verdict(name, target, False, prefix + " | ".join(reasons)))
    return out
