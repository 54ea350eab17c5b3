"""JSON for Socket.IO packets, by orjson.

A backward run of a 1,000-node graph sends thousands of floats in its trace; the json module
takes a quarter of a second to write them, orjson about a hundredth. Summaries carry their
previews as numpy arrays (see backend/graph/running/summary.py), which orjson writes as nested lists
straight from memory; the few it declines (arrays that are not C-contiguous) go through
`tolist`. Anything else orjson declines goes through the json module: integers past 64 bits
to write, strings with lone surrogates to read (only a hostile message carries either); what
the json module reads is held to what orjson accepts (strict_loads)."""

import json
import math

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


def encoded_size(obj):
    """Bytes of `obj` as compact JSON (a message's size, checked against its cap): orjson's
    UTF-8, or the json module's ASCII where orjson declines."""
    try:
        return len(orjson.dumps(obj, default=_default, option=_OPTIONS))
    except TypeError:
        return len(json.dumps(obj, separators=(",", ":"), default=_default))


def loads(s, **_kwargs):
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return strict_loads(s)  # lone surrogates; or the error, in the json module's words


def strict_loads(s):
    """JSON by the json module, as strict as orjson: no NaN or Infinity, no number past a
    double's range (1e999 would be inf, which JSON cannot write back: a store would keep null
    in its place), and nesting too deep is a ValueError, not a RecursionError."""
    try:
        return json.loads(s, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number (at most about 1.8e308)")
    return value
