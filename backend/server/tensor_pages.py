"""The `tensor` request's answer: a page of a kept tensor, never more than `max_tensor_page`
elements, with the whole tensor's stats.

A 10M-element tensor sent whole is about 200 MB of JSON and seconds of a core; the editor's
viewer shows at most one 2-D slice of it, so it asks for that slice (a flat, row-major range)
and takes the stats of the whole from here (docs/protocol.md, "tensor"). The values go as a
numpy array, which the wire sends as a typed binary buffer (typed_wire.py): NaN and Inf as
they are, 4 bytes a float32."""

import numpy as np

from ..graph.running.summary import _host, dtype_name, summarize


def tensor_reply(t, request, where, max_page, max_bytes):
    """The reply to `request` (protocol.TensorRequest) for tensor `t`, found at `where`: at
    most `max_page` elements and `max_bytes` bytes of values (one message's limit, whatever
    the dtype's size)."""
    a = _host(t)
    numel = int(a.size)
    max_page = min(max_page, max_bytes // max(a.dtype.itemsize, 1))
    head = {"run_id": request.run_id, "kind": request.kind}
    if request.offset is None and request.count is None:
        if numel > max_page:
            return {
                "error": f"{where} has {numel:,} elements, more than one answer holds "
                f"({max_page:,}); ask for a page: offset and count",
                "code": "too_large",
                "numel": numel,
                "shape": list(a.shape),
            }
        return {
            **head,
            "shape": list(a.shape),
            "dtype": dtype_name(a.dtype),
            "numel": numel,
            "values": np.array(a),  # a copy: the kept tensor's own array is not handed on
        }
    offset = request.offset or 0
    count = max_page if request.count is None else request.count
    if count > max_page:
        return {
            "error": f"count is at most {max_page:,} elements a page of {dtype_name(a.dtype)}",
            "code": "too_large",
        }
    if offset > numel:
        return {"error": f"offset {offset:,} is past the end: {where} has {numel:,} elements"}
    page = a.reshape(-1)[offset : offset + count]
    summary = summarize(t, 0)
    return {
        **head,
        "shape": list(a.shape),
        "dtype": dtype_name(a.dtype),
        "numel": numel,
        "offset": offset,
        "values": np.array(page),
        "stats": summary.get("stats"),
        "nan": summary.get("nan", 0),
        "inf": summary.get("inf", 0),
    }
