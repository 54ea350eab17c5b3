"""The garbage collector of a server process.

A run's request is a graph document read into tens of thousands of small objects (a
1,000-node graph's dicts, then its pydantic models), and its records are more. CPython's
cyclic collector, at its default thresholds, looks at the young objects every 700 allocations
and at everything the process holds every 70,000 or so: on such a request it ran about a
hundred times, some of them over the whole heap (the app, the modules, every client's kept
runs), and doubled the mean time of reading and running a graph (bench/server.py). Nothing
of a run is garbage only through a cycle often enough to need collecting that soon: the
young generation is looked at every YOUNG allocations instead, and what the process holds
once started (modules, the app, its tables) is frozen out of every collection.
"""

import gc

YOUNG = 20_000  # allocations between collections of the young generation (CPython's: 700)


def settle():
    """Call once, when the server has started and before it serves."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
