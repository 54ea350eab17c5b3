"""Tensor summaries for the page: shape, dtype, stats, NaN/Inf counts and, for small tensors,
the values themselves. JSON-safe: non-finite numbers become the strings "nan", "inf", "-inf"."""

import math

import numpy as np


def _host(t):
    a = t._data
    return a if isinstance(a, np.ndarray) else a.get()


def _json_number(x):
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _json_values(a):
    """Nested lists of the values; non-finite ones spelled out, since JSON has no NaN."""
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        return (
            np.vectorize(_json_number, otypes=[object])(a).tolist()
            if a.ndim
            else _json_number(float(a))
        )
    return a.tolist()


def summarize(t, preview_elements=1024):
    a = _host(t)
    n = int(a.size)
    out = {
        "shape": list(a.shape),
        "dtype": str(t.dtype).removeprefix("engine."),
        "numel": n,
        "requires_grad": bool(t.requires_grad),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
    }
    if n and a.dtype.kind in "fiub":
        f = a.astype(np.float64, copy=False).ravel()
        finite = np.isfinite(f)
        n_finite = int(finite.sum())
        out["nan"] = int(np.isnan(f).sum()) if n_finite != n else 0
        out["inf"] = n - n_finite - out["nan"]
        v = f if n_finite == n else f[finite]
        if v.size:
            out["stats"] = {
                "min": float(v.min()),
                "max": float(v.max()),
                "mean": float(v.mean()),
                "std": float(v.std()),
                "norm": float(math.sqrt(float(v @ v))),
            }
        else:
            out["stats"] = None
    if n <= preview_elements:
        out["preview"] = _json_values(a)
    return out


def full_values(t):
    """The whole tensor as JSON-safe nested lists (the `tensor` request of the protocol)."""
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("engine."),
        "values": _json_values(_host(t)),
    }
