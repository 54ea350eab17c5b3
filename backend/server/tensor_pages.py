"""The `tensor` request's answer: a page of a kept tensor, never more than `max_tensor_page`
elements, with the whole tensor's stats.

A 10M-element tensor sent whole is about 200 MB of JSON and seconds of a core; the editor's
viewer shows at most one 2-D slice of it, so it asks for that slice (a flat, row-major range)
and takes the stats of the whole from here (docs/protocol.md, "tensor")."""

import numpy as np

from ..graph.running.summary import _host, _json_values, dtype_name, summarize


def tensor_reply(t, request, where, max_page):
    """The reply to `request` (protocol.TensorRequest) for tensor `t`, found at `where`."""
    a = _host(t)
    numel = int(a.size)
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
            "values": _json_values(a, a.dtype.kind != "f" or bool(_finite(a))),
        }
    offset = request.offset or 0
    count = max_page if request.count is None else request.count
    if count > max_page:
        return {"error": f"count is at most {max_page:,} elements a page", "code": "too_large"}
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
        "values": _json_values(page, page.dtype.kind != "f" or bool(_finite(page))),
        "stats": summary.get("stats"),
        "nan": summary.get("nan", 0),
        "inf": summary.get("inf", 0),
    }


def _finite(a):
    return np.isfinite(a).all()
