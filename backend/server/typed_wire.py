"""Arrays on the wire as typed binary buffers (docs/protocol.md, "Typed arrays").

Every numpy array in a message the server sends (a summary table's previews, stats and
NaN/Inf counts, a tensor page's values) travels as little-endian bytes, not as JSON
numbers: a message is its JSON text, in which each array is a descriptor
`{"$typed": dtype, "shape": [...], "offset": n, "tag": t}`, and one binary buffer, the arrays'
bytes one after another, each at an offset that is a multiple of 8 (so the page reads each as a
typed-array view of the buffer, without a copy). The buffer's first 8 bytes are the message's
tag, drawn at random for each message, and a descriptor counts only when its `tag` is their hex:
an object shaped like a descriptor that came from a user (a room owner's graph param) cannot
name the bytes of a message it has never seen, so it stays the object it was. Over Socket.IO
the buffer is the packet's one binary attachment, handed to the handler as the last argument;
in a notebook (wiregrad/widget.py) it is the custom message's second buffer. One encoding, both
carriers; the page's reader is frontend/src/api/typedWire.ts.

Why: JSON numbers cost 10-25 bytes each and a parse; a float32 costs 4 bytes and no parse.
Arrays are found by orjson's `default` hook (orjson hands it every numpy array when
OPT_SERIALIZE_NUMPY is off), so nothing walks a payload in Python.

Only the server sends binary: a client's binary frame is still refused at the transport
(transport.py), so the limits on what a client may send are those of JSON text."""

import base64
import secrets

import numpy as np
import orjson
import socketio.packet

from ..graph.running.summary import _json_values
from . import fastjson

VERSION = 2  # the wire's version: 1 was JSON numbers; a client announces the one it reads
_ALIGN = 8
# the dtypes the page reads as typed arrays (JavaScript has a typed array for each)
TYPED = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.int32,
        np.uint32,
        np.int64,
        np.uint64,
        np.float32,
        np.float64,
    )
)
_NAMES = {dt: dt.name for dt in TYPED}
_PAD = bytes(_ALIGN)
_CONTAINERS = frozenset((dict, list))  # what decoded JSON holds that may hold a descriptor
_SCALAR = orjson.OPT_SERIALIZE_NUMPY


class _Packer:
    """The arrays of one message, as orjson meets them."""

    def __init__(self):
        tag = secrets.token_bytes(_ALIGN)  # the buffer's head (see the module's docstring)
        self.tag = tag.hex()
        self.parts = [tag]
        self.size = _ALIGN

    def default(self, obj):
        if isinstance(obj, np.ndarray):
            return self.array(obj)
        if isinstance(obj, np.generic):  # a numpy scalar: written as orjson writes it
            return orjson.Fragment(orjson.dumps(obj, option=_SCALAR))
        raise TypeError(f"{type(obj).__name__} is not JSON serializable")

    def array(self, a):
        if a.dtype == np.float16:
            a = a.astype(np.float32)  # exact; JavaScript has no float16 array everywhere yet
        elif a.dtype.kind in "biuf" and a.dtype.newbyteorder("<") != a.dtype:
            a = a.astype(a.dtype.newbyteorder("<"))  # the wire is little-endian
        name = _NAMES.get(a.dtype)
        if name is None:
            return a.tolist()  # (no other dtype reaches the wire today)
        pad = -self.size % _ALIGN
        if pad:
            self.parts.append(_PAD[:pad])
            self.size += pad
        offset = self.size
        data = np.ascontiguousarray(a)
        self.parts.append(data)
        self.size += data.nbytes
        return {"$typed": name, "shape": list(a.shape), "offset": offset, "tag": self.tag}


def encode(obj):
    """(JSON text, the arrays' buffer as bytes, or None when `obj` holds no array)."""
    packer = _Packer()
    try:
        text = orjson.dumps(obj, default=packer.default).decode()
    except TypeError:  # what orjson declines (integers past 64 bits): the JSON module, no arrays
        return fastjson.dumps(obj), None
    if len(packer.parts) == 1:  # (the tag alone: no array)
        return text, None
    return text, b"".join(packer.parts)


def as_json(obj):
    """`obj` with its arrays written out as nested JSON numbers (a float32 as its shortest
    decimal, non-finite numbers spelled "nan", "inf", "-inf"): wire 1, for a client that reads
    no typed arrays (client_version.py); `obj` itself where it holds none."""
    text, blob = encode(obj)
    if blob is None:
        return obj
    return decode(orjson.loads(text), blob, materialize=True)


def decode(obj, blob, materialize=False):
    """`obj` (decoded JSON, changed in place) with its descriptors replaced by numpy arrays read
    from `blob` (read-only views; with `materialize`, nested lists of the numbers the JSON wire
    wrote: a float32 as its shortest decimal, non-finite numbers spelled "nan", "inf", "-inf").
    For Python clients: tests, benches."""
    if blob is None:
        return obj
    view = memoryview(blob)
    tag = bytes(view[:_ALIGN]).hex() if len(view) >= _ALIGN else None

    def walk(x):
        if type(x) is dict:
            if "$typed" in x and tag is not None and x.get("tag") == tag:
                return _read(x, view, materialize)
            items = x.items()
        elif _CONTAINERS.isdisjoint(map(type, x)):
            return x  # a list of numbers, strings or flags (most are): looked over in C
        else:
            items = enumerate(x)
        for k, v in items:
            t = type(v)
            if t is dict or t is list:
                x[k] = walk(v)  # (a key's value replaced: the dict's size does not change)
        return x

    return walk(obj) if type(obj) in (dict, list) else obj


def _read(desc, view, materialize):
    dt = np.dtype(desc["$typed"])
    if dt not in TYPED:
        raise ValueError(f"unknown typed array dtype {desc['$typed']!r}")
    shape = tuple(desc["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    offset = desc["offset"]
    if offset % _ALIGN or offset + count * dt.itemsize > len(view):
        raise ValueError(f"typed array at {offset} of {count} {dt.name} is past the buffer")
    a = np.frombuffer(view, dt, count, offset).reshape(shape)
    if not materialize:
        return a
    if dt.kind == "f" and not np.isfinite(a).all():
        return _json_values(a, False)
    # each number as the JSON wire wrote it (a float32 as its shortest decimal, 0.1); orjson
    # writes a 0-d array's number only as a numpy scalar
    return orjson.loads(orjson.dumps(a[()] if a.ndim == 0 else a, option=_SCALAR))


_PLACEHOLDER = ',{"_placeholder":true,"num":0}]'


class SocketPacket(socketio.packet.Packet):
    """Socket.IO packets whose arrays go as one binary attachment. python-socketio's own
    packets walk every outgoing payload for bytes to attach, which on a trace packet of
    thousands of records cost more than encoding it; here orjson finds the arrays as it writes
    (encode above), and a message with any goes as a binary event (or ack) of exactly one
    attachment, its placeholder the last argument."""

    uses_binary_events = False  # (no walk; encode decides)
    json = fastjson

    def encode(self):
        if self.packet_type not in (socketio.packet.EVENT, socketio.packet.ACK) or not self.data:
            return super().encode()
        text, blob = encode(self.data)  # data: [event, *args] or the ack's [*args], a list
        kind = self.packet_type
        head = ""
        if blob is not None:
            kind += socketio.packet.BINARY_EVENT - socketio.packet.EVENT
            head = "1-"
            text = text[:-1] + _PLACEHOLDER
        if self.namespace is not None and self.namespace != "/":
            head += self.namespace + ","
        if self.id is not None:
            head += str(self.id)
        frame = f"{kind}{head}{text}"
        return frame if blob is None else [frame, blob]


class QueueJson:
    """The JSON of the message queue between processes (room_delivery.py, Redis): a message
    with arrays is its text and its buffer in base64, read back into arrays on the other side,
    so that every process sends a room's followers the same typed packets."""

    @staticmethod
    def dumps(obj, **_kwargs):
        text, blob = encode(obj)
        if blob is None:
            return text
        return orjson.dumps({"$wire": text, "$buffer": base64.b64encode(blob).decode()}).decode()

    @staticmethod
    def loads(s, **_kwargs):
        obj = fastjson.loads(s)
        if isinstance(obj, dict) and obj.keys() == {"$wire", "$buffer"}:
            return decode(fastjson.loads(obj["$wire"]), base64.b64decode(obj["$buffer"]))
        return obj
