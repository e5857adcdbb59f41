"""The cyclic GC paused around layout rounds (core/util/gc_pause.py): no collection inside, the previous state after,
a big allocation frozen out of later collections and a small one not, and young garbage collected before a freeze."""
from __future__ import annotations

import gc

from pt2_viewer.core.util.gc_pause import FREEZE_ABOVE, gc_paused


def collectable(obj: object) -> bool:
    """Whether the collector still walks `obj`: frozen objects leave every generation `gc.get_objects` lists. (The
    process-wide freeze count is no witness: a frozen object freed by another thread lowers it at any moment.)"""
    return any(o is obj for o in gc.get_objects())


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_collection_waits_and_big_allocations_are_frozen() -> None:
    assert gc.isenabled()
    try:
        with gc_paused(freeze=True):
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled(), "an inner pause leaves collection paused"
            kept = [[i] for i in range(FREEZE_ABOVE * 2)]
        assert gc.isenabled() and not collectable(kept[0]) and not collectable(kept[-1]), "big work is frozen"
        with gc_paused(freeze=True):
            small = [[i] for i in range(10)]
        assert collectable(small[0]) and collectable(small[-1]), "small work is not frozen"

        garbage = Cycle()
        del garbage  # a cycle: only the collector frees it
        with gc_paused(freeze=True):
            assert not any(isinstance(o, Cycle) for o in gc.get_objects()), "collected before the pause"
    finally:
        gc.unfreeze()
    assert gc.isenabled()
