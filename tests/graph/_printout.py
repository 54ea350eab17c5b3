"""What an exported script prints when it runs: one line per value and gradient, `value <node>
<json>` and `grad <parameter> <json>` (the values, or past 10,000 elements a shape-and-stats
object), read back for the tests to compare with the editor's run."""

import json

import numpy as np


def printed(stdout):
    """{("value" | "grad", key): an array, or the stats dict of a big tensor}; a key printed
    twice or a line of another kind fails."""
    out = {}
    for line in stdout.splitlines():
        kind, key, data = line.split(" ", 2)
        assert kind in ("value", "grad"), line
        assert (kind, key) not in out, f"{kind} {key} printed twice"
        data = json.loads(data)
        out[(kind, key)] = data if isinstance(data, dict) else np.array(data)
    return out


def values_and_grads(stdout):
    """The printout as two dicts by key: the values, the gradients."""
    lines = printed(stdout)
    values = {key: v for (kind, key), v in lines.items() if kind == "value"}
    grads = {key: g for (kind, key), g in lines.items() if kind == "grad"}
    return values, grads
