"""Which nodes of one program became which nodes of another: the node mapping and its JSON file.

A decomposition knows exactly where each new node came from (torch's provenance metadata; see
`core/decompose/provenance.py`), and writes that as a mapping file beside the new `.pt2`. Two arbitrary programs (say,
the same model exported twice) carry no such record: the structural diff's matcher pairs them (core/diff/matcher.py,
`ProgramDiff.node_mapping`). Both give a `NodeMapping`, and every link records the method that made it, so the GUI can
show how sure a link is. Torch-free.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pt2_viewer.core.util.files import write_atomically

MAPPING_FORMAT = "pt2-viewer/node-mapping"
MAPPING_VERSION = 1

# Methods, most trusted first. `from_node` and `stack_trace` come from torch's metadata (decomposition only).
METHODS = ("from_node", "name+target", "name", "stack_trace", "module_path+op", "module_path")


@dataclass(frozen=True)
class Link:
    before: str  # node name in the first program
    after: str  # node name in the second program
    method: str  # one of METHODS


@dataclass
class NodeMapping:
    """Links between the nodes of two programs: one before node may become many after nodes, and the reverse."""

    before_nodes: list[str]
    after_nodes: list[str]
    links: list[Link] = field(default_factory=list)
    before_label: str = ""  # where the programs came from, for the file ("model.pt2 / model")
    after_label: str = ""

    def after_of(self, before: str) -> list[Link]:
        return [k for k in self.links if k.before == before]

    def before_of(self, after: str) -> list[Link]:
        return [k for k in self.links if k.after == after]

    @property
    def unmapped_before(self) -> list[str]:
        seen = {k.before for k in self.links}
        return [n for n in self.before_nodes if n not in seen]

    @property
    def unmapped_after(self) -> list[str]:
        seen = {k.after for k in self.links}
        return [n for n in self.after_nodes if n not in seen]

    def method_counts(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for k in self.links:
            counts[k.method] += 1
        return dict(counts)

    def to_json(self) -> dict[str, Any]:
        forward: dict[str, list[dict[str, str]]] = defaultdict(list)
        backward: dict[str, list[dict[str, str]]] = defaultdict(list)
        for k in self.links:
            forward[k.before].append({"node": k.after, "method": k.method})
            backward[k.after].append({"node": k.before, "method": k.method})
        return {
            "format": MAPPING_FORMAT,
            "version": MAPPING_VERSION,
            "before": {"label": self.before_label, "nodes": self.before_nodes},
            "after": {"label": self.after_label, "nodes": self.after_nodes},
            "before_to_after": dict(forward),
            "after_to_before": dict(backward),
            "unmapped_before": self.unmapped_before,
            "unmapped_after": self.unmapped_after,
            "method_counts": self.method_counts(),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> NodeMapping:
        if doc.get("format") != MAPPING_FORMAT:
            raise ValueError(f"not a node mapping file (format is {doc.get('format')!r}, expected {MAPPING_FORMAT!r})")
        if int(doc.get("version", 0)) > MAPPING_VERSION:
            raise ValueError(f"node mapping version {doc.get('version')} is newer than this viewer reads "
                             f"({MAPPING_VERSION}); update PT2 Viewer")
        links = [Link(before=b, after=e["node"], method=e["method"])
                 for b, entries in doc.get("before_to_after", {}).items() for e in entries]
        return cls(before_nodes=list(doc["before"]["nodes"]), after_nodes=list(doc["after"]["nodes"]), links=links,
                   before_label=doc["before"].get("label", ""), after_label=doc["after"].get("label", ""))


def write_mapping(mapping: NodeMapping, path: str | os.PathLike[str]) -> None:
    """Write the mapping JSON atomically (a temp file beside it, then os.replace)."""
    text = json.dumps(mapping.to_json(), indent=1)
    write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_mapping(path: str | os.PathLike[str]) -> NodeMapping:
    with open(path, encoding="utf-8") as f:
        return NodeMapping.from_json(json.load(f))


def op_stem(target: str) -> str:
    """'torch.ops.aten.add_.Tensor' -> 'add': the op without namespace, overload or in-place underscore."""
    parts = target.split(".")
    name = parts[3] if target.startswith("torch.ops.") and len(parts) > 3 else parts[-1]
    return name.rstrip("_") or name
