"""The cyclic garbage collector paused around work that allocates many long-lived objects at once.

Reading a 10k-node program allocates about a million objects, and Expand all of it some hundred thousand more
(layouts, scene records, scene items); Python's cyclic collector walks them again and again as they pile up, holding
the GIL for 100+ ms each time (window stalls: 0.6 s of a 135-layer Expand all went to it). None of this work makes
garbage cycles worth collecting on the way, so collection waits until it is done, and what it allocated is then
frozen out of later collections (`gc.freeze`): re-enabled as it was, the collector's next pass would walk all of it
at once. Frozen objects are still freed when their last reference goes; only a garbage cycle among them would stay
(so small work, a group toggled, is not frozen: its collection costs little).
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_ABOVE = 10_000  # objects allocated (net) inside: above, they are frozen


@contextmanager
def gc_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside; `freeze`: what was allocated is then moved out of later collections for good, if
    it is a lot (a program's model, an expansion's layouts and items). Nests: an inner pause leaves collection
    paused."""
    was_enabled = gc.isenabled()
    if freeze and was_enabled:
        gc.collect(1)  # the young garbage first (a tab just closed): cheap, and it is not frozen with the rest
    gc.disable()
    try:
        yield
    finally:
        if freeze and gc.get_count()[0] > FREEZE_ABOVE:
            gc.freeze()
        if was_enabled:
            gc.enable()
