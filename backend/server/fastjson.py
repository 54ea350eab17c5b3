"""JSON for Socket.IO packets, by orjson.

A backward run of a 1,000-node graph sends thousands of floats in its trace; the json module
takes a quarter of a second to write them, orjson about a hundredth. Anything orjson declines
(integers past 64 bits, which only a hostile message carries) goes through the json module."""

import json

import orjson


def dumps(obj, **_kwargs):
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, separators=(",", ":"))


def loads(s, **_kwargs):
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return json.loads(s)
