"""Which edge labels add information. An edge's label is the type of the value it carries (`f32[s77, 3]`); a node
already prints its first output's type as its second line, so the label of an edge that carries exactly that repeats
it. Such labels are drawn only when zoomed in close; a label that says something new (another output of a
multi-output op, a value leaving a collapsed group, several values bundled) is drawn from the normal label zoom on.
"""
from __future__ import annotations


def label_adds_information(label: str, producer_subtitle: str | None) -> bool:
    """`producer_subtitle`: the second line printed on the producing node; None when the producer is not a node box
    (a collapsed group, whose box prints a count)."""
    if not label:
        return False
    return producer_subtitle is None or label != producer_subtitle
