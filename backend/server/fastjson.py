"""JSON for Socket.IO packets, by orjson.

A backward run of a 1,000-node graph sends thousands of floats in its trace; the json module
takes a quarter of a second to write them, orjson about a hundredth. Summaries carry their
previews as numpy arrays (see backend/graph/summary.py), which orjson writes as nested lists
straight from memory; the few it declines (arrays that are not C-contiguous) go through
`tolist`. Anything else orjson declines (integers past 64 bits, which only a hostile message
carries) goes through the json module."""

import json

import numpy as np
import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def _default(obj):
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps(obj, **_kwargs):
    try:
        return orjson.dumps(obj, default=_default, option=_OPTIONS).decode()
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), default=_default)


def loads(s, **_kwargs):
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return json.loads(s)
