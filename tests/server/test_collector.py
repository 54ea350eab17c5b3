"""The server's garbage collector (collector.py): what the process holds at start is frozen
out of collections, and the young generation is collected every YOUNG allocations."""

import gc
import weakref

from backend.server import collector


class _Node:
    pass


def test_settle_freezes_the_started_process_and_raises_the_young_threshold():
    before = gc.get_threshold()
    try:
        collector.settle()
        assert gc.get_freeze_count() > 1000  # (a test process holds far more than that)
        assert gc.get_threshold() == (collector.YOUNG, before[1], before[2])
        # what is made after settling is still collected: a cycle goes at the next collection
        cycle = _Node()
        cycle.me = cycle
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
