"""Tensor summaries for the page: shape, dtype, stats, NaN/Inf counts and, for small tensors,
the values themselves. JSON-safe: non-finite numbers become the strings "nan", "inf", "-inf".

A run makes thousands of summaries of small tensors, so `summarize_many` computes the stats of a
whole batch with a handful of numpy calls over one concatenated array (reduceat per segment)
instead of a dozen calls per tensor."""

import math

import numpy as np

_BATCH_MAX_ELEMENTS = 4096  # bigger tensors are summarised one by one
# A batch's elements at most: its float64 temporaries stay under glibc's mmap threshold (128
# KiB), past which every temporary is fresh pages from the kernel, which costs twice the math.
_CHUNK_ELEMENTS = 8192


def _host(t):
    a = t._data
    return a if isinstance(a, np.ndarray) else a.get()


def _json_number(x):
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _json_values(a, finite=True):
    """Nested lists of the values; non-finite ones spelled out, since JSON has no NaN."""
    if finite or a.dtype.kind != "f":
        return a.tolist()
    if a.ndim == 0:
        return _json_number(float(a))
    return np.vectorize(_json_number, otypes=[object])(a).tolist()


_DTYPE_NAMES = {}  # numpy's dtype.name is a slow Python property: look each one up once


def dtype_name(dt):
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


def _head(t, a):
    return {
        "shape": list(a.shape),
        "dtype": dtype_name(a.dtype),
        "numel": int(a.size),
        "requires_grad": bool(t._requires_grad),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
    }


def summarize(t, preview_elements=1024):
    """The summary of one tensor."""
    return summarize_many([t], preview_elements)[0]


def summarize_many(tensors, preview_elements=1024):
    """Summaries of many tensors, in order; the same tensor object is summarised once."""
    out = [None] * len(tensors)
    seen = {}
    small, small_idx, size = [], [], 0
    for i, t in enumerate(tensors):
        j = seen.get(id(t))
        if j is not None:
            out[i] = j
            continue
        seen[id(t)] = i
        a = t._data
        if not isinstance(a, np.ndarray):
            a = a.get()  # a cupy array (what _host does, inline: this loop sees every record)
        n = a.size
        if 0 < n <= _BATCH_MAX_ELEMENTS and a.dtype.kind in "fiub":
            if size + n > _CHUNK_ELEMENTS:
                _batch(tensors, small, small_idx, out, preview_elements)
                small, small_idx, size = [], [], 0
            small.append(a)
            small_idx.append(i)
            size += n
        else:
            out[i] = _one(t, a, preview_elements)
    if small:
        _batch(tensors, small, small_idx, out, preview_elements)
    for i, v in enumerate(out):  # repeats point at their first summary's index: resolve them
        if isinstance(v, int):
            out[i] = out[v]
    return out


def _one(t, a, preview_elements):
    s = _head(t, a)
    n = s["numel"]
    finite = True
    if n and a.dtype.kind in "fiub":
        f = a.astype(np.float64, copy=False).ravel()
        ok = np.isfinite(f)
        n_ok = int(ok.sum())
        finite = n_ok == n
        s["nan"] = 0 if finite else int(np.isnan(f).sum())
        s["inf"] = n - n_ok - s["nan"]
        v = f if finite else f[ok]
        s["stats"] = _stats_of(v) if v.size else None
    if n <= preview_elements:
        s["preview"] = _json_values(a, finite)
    return s


def _stats_of(v):
    """min, max, mean, std (population) and L2 norm of finite float64 values. Deviations are
    taken from the mean (two passes) and both std and norm are scaled by the largest magnitude,
    so neither an offset like 1e8 nor values near 1e200 spoil them."""
    lo, hi = float(v.min()), float(v.max())
    scale = max(abs(lo), abs(hi)) or 1.0
    w = v / scale
    mean_w = float(w.mean())
    dev = w - mean_w
    return _stats_dict(
        lo,
        hi,
        mean_w * scale,
        scale * math.sqrt(float(dev @ dev) / v.size),
        scale * math.sqrt(float(w @ w)),
    )


def _stats_dict(lo, hi, mean, std, norm):
    return {
        "min": _json_number(lo),
        "max": _json_number(hi),
        "mean": _json_number(mean),
        "std": _json_number(std),
        "norm": _json_number(norm),
    }


def _batch(tensors, arrays, idx, out, preview_elements):
    """Stats of many small tensors at once, segment by segment of one concatenated array."""
    sizes = np.fromiter((a.size for a in arrays), np.int64, len(arrays))
    starts = np.zeros(len(arrays), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    cat = np.concatenate(arrays, axis=None)  # a copy of every value, each tensor flattened
    flat = cat.astype(np.float64, copy=False)
    ok = np.isfinite(flat)
    all_ok = bool(ok.all())
    if all_ok:
        v, lo_v, hi_v, n_ok = flat, flat, flat, sizes
        nan = bad = None
    else:
        v = np.where(ok, flat, 0.0)
        lo_v = np.where(ok, flat, np.inf)
        hi_v = np.where(ok, flat, -np.inf)
        n_ok = np.add.reduceat(ok, starts)
        nan = np.add.reduceat(np.isnan(flat), starts)
        bad = sizes - n_ok
    lo = np.minimum.reduceat(lo_v, starts)
    hi = np.maximum.reduceat(hi_v, starts)
    scale = np.maximum(np.abs(lo), np.abs(hi))
    scale[~np.isfinite(scale) | (scale == 0)] = 1.0  # all-non-finite or all-zero segments
    w = v / np.repeat(scale, sizes)
    count = np.maximum(n_ok, 1)
    mean_w = np.add.reduceat(w, starts) / count
    dev = w - np.repeat(mean_w, sizes)
    if not all_ok:
        dev *= ok
    var_w = np.add.reduceat(dev * dev, starts) / count
    norm_w = np.sqrt(np.add.reduceat(w * w, starts))
    mean, std, norm = mean_w * scale, np.sqrt(var_w) * scale, norm_w * scale
    # non-finite stats (all values nan, or sums past 1e308) need spelling out for JSON
    spell = not (
        np.isfinite(lo).all()
        and np.isfinite(hi).all()
        and np.isfinite(std).all()
        and np.isfinite(norm).all()
        and np.isfinite(mean).all()
    )
    columns = zip(lo.tolist(), hi.tolist(), mean.tolist(), std.tolist(), norm.tolist())
    n_ok = n_ok.tolist() if not all_ok else None
    nan = nan.tolist() if nan is not None else None
    bad = bad.tolist() if bad is not None else None
    sizes = sizes.tolist()
    starts = starts.tolist()
    # Previews stay numpy arrays, views of `cat`, the batch's own copy of the values in their
    # own dtype (never the tensor's array: a leaf's .grad changes in place later). The server's
    # JSON encoder (orjson) writes them as nested lists straight from memory, each number as the
    # shortest decimal that reads back as the same value of its dtype (float32's 0.1 as 0.1, not
    # 0.10000000149011612), at a small fraction of the cost of nested Python lists; and they
    # leave the garbage collector nothing to scan. When every tensor of the batch has one shape
    # and dtype (the usual case), `cat` seen as (tensors, *shape) gives each preview in one
    # index: a view, or a numpy scalar for a 0-d tensor. Only previews with non-finite values
    # become lists now, to spell those out.
    shape0, dtype0 = arrays[0].shape, arrays[0].dtype
    uniform = all(a.shape == shape0 and a.dtype == dtype0 for a in arrays)
    stacked = cat.reshape(len(arrays), *shape0) if uniform else None
    dname0 = dtype_name(dtype0)
    names = {}  # grad_fn class -> its name
    for k, (i, a, (lo_k, hi_k, mean_k, std_k, norm_k)) in enumerate(zip(idx, arrays, columns)):
        t = tensors[i]
        gf = t.grad_fn
        if gf is None:
            gf_name = None
        else:
            gf_name = names.get(gf.__class__)
            if gf_name is None:
                gf_name = names[gf.__class__] = gf.__class__.__name__
        n = sizes[k]
        if all_ok:
            c, nan_k, inf_k = n, 0, 0
        else:
            c, nan_k = n_ok[k], nan[k]
            inf_k = bad[k] - nan_k
        if not c:
            stats = None
        elif spell:
            stats = _stats_dict(lo_k, hi_k, mean_k, std_k, norm_k)
        else:
            stats = {"min": lo_k, "max": hi_k, "mean": mean_k, "std": std_k, "norm": norm_k}
        # built at once: a dict literal costs half of one filled in key by key
        s = {
            "shape": list(a.shape),  # every summary its own list: no two records share one
            "dtype": dname0 if uniform else dtype_name(a.dtype),
            "numel": n,
            "requires_grad": t._requires_grad,
            "grad_fn": gf_name,
            "nan": nan_k,
            "inf": inf_k,
            "stats": stats,
        }
        if n <= preview_elements:
            if c != n:
                s["preview"] = _json_values(a, False)
            elif uniform:
                s["preview"] = stacked[k]
            else:
                s["preview"] = a.copy() if a.ndim else a[()]
        out[i] = s


def full_values(t):
    """The whole tensor as JSON-safe nested lists (the `tensor` request of the protocol)."""
    a = _host(t)
    return {
        "shape": list(a.shape),
        "dtype": dtype_name(a.dtype),
        "values": _json_values(a, a.dtype.kind != "f" or bool(np.isfinite(a).all())),
    }
