"""The cyclic GC paused around layout rounds (core/util/gc_pause.py): no collection inside, the previous state after,
a big allocation frozen out of later collections and a small one not, and young garbage collected before a freeze."""
from __future__ import annotations

import gc

from pt2_viewer.core.util.gc_pause import FREEZE_ABOVE, gc_paused


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_collection_waits_and_big_allocations_are_frozen() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused(freeze=True):
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled(), "an inner pause leaves collection paused"
            kept = [[i] for i in range(FREEZE_ABOVE * 2)]
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(kept)
        before = gc.get_freeze_count()
        with gc_paused(freeze=True):
            small = [[i] for i in range(10)]
        assert gc.get_freeze_count() == before and small, "small work is not frozen"

        garbage = Cycle()
        del garbage  # a cycle: only the collector frees it
        with gc_paused(freeze=True):
            assert not any(isinstance(o, Cycle) for o in gc.get_objects()), "collected before the pause"
    finally:
        gc.unfreeze()
    assert gc.isenabled()
