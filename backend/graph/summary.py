"""Tensor summaries for the page: shape, dtype, stats, NaN/Inf counts and, for small tensors,
the values themselves. JSON-safe: non-finite numbers become the strings "nan", "inf", "-inf".

A run summarises thousands of small tensors, so summaries are made and sent as tables, column
by column: one table per shape and dtype, row k one tensor (docs/protocol.md, "Summary
tables"). Its stats are a few numpy calls over the stacked values, its previews one stacked
copy, and a record names its row instead of carrying a dict of a dozen objects: building those
dicts cost more than the ops being traced. `row_summary` writes one row out as the summary dict
that readers of single records (tests, the CLI, training snapshots) use."""

import math

import numpy as np

STATS = ("min", "max", "mean", "std", "norm")  # the columns of a table's `stats`
_BIG = 4096  # tensors with more elements are summarised one by one, never stacked
# Rows are reduced in chunks of at most this many elements (256 KiB of float64 temporaries):
# fewer numpy calls than smaller chunks, and still cache-sized (measured: 8,192 elements took
# a third longer, the whole table at once twice as long).
_CHUNK_ELEMENTS = 32768


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


def summary_tables(tensors, preview_elements=1024):
    """Tables of the tensors' summaries: (tables, where), where[i] = the row of tensors[i],
    counting across the tables in order (table 0's rows first). The same tensor object twice
    is one row. Tables are `summaries` records without their `first` row number, which the
    run gives them as it sends them."""
    n = len(tensors)
    ids = list(map(id, tensors))
    first = dict(zip(reversed(ids), range(n - 1, -1, -1)))  # id(tensor) -> its first index
    keep = sorted(first.values()) if len(first) < n else range(n)
    groups = {}  # (shape, dtype) -> [tensors, host arrays, their indices in `tensors`]
    for i in keep:
        t = tensors[i]
        a = t._data
        if a.__class__ is not np.ndarray:
            a = _host(t)  # a cupy array
        key = (a.shape, a.dtype)
        g = groups.get(key)
        if g is None:
            g = groups[key] = ([], [], [])
        g[0].append(t)
        g[1].append(a)
        g[2].append(i)
    where = [None] * n
    tables, row = [], 0
    for ts, arrays, idx in groups.values():
        tables.append(_table(ts, arrays, preview_elements))
        for i in idx:
            where[i] = row
            row += 1
    if len(first) < n:  # repeats: the row of the first
        where = [where[first[x]] for x in ids]
    return tables, where


def _table(ts, arrays, preview_elements):
    """The table of tensors that share one shape and dtype."""
    a0 = arrays[0]
    n, numel = len(arrays), a0.size
    names = {}  # grad_fn class -> its name
    grad_fn = []
    for t in ts:
        gf = t.grad_fn
        if gf is None:
            grad_fn.append(None)
        else:
            name = names.get(gf.__class__)
            if name is None:
                name = names[gf.__class__] = gf.__class__.__name__
            grad_fn.append(name)
    table = {
        "kind": "summaries",
        "rows": n,
        "shape": list(a0.shape),
        "dtype": dtype_name(a0.dtype),
        "numel": numel,
        "requires_grad": [t._requires_grad for t in ts],
        "grad_fn": grad_fn,
    }
    numeric = a0.dtype.kind in "fiub"
    if numel <= _BIG:
        # one copy of every value (never the tensor's own array: a leaf's .grad changes in
        # place later), which is also the previews: row k is tensor k
        stacked = np.concatenate(arrays, axis=None).reshape(n, numel)
        stats, nan, inf, bad = _stats_rows(stacked) if numeric and numel else (None, None, None, ())
        preview = stacked.reshape(n, *a0.shape) if numel <= preview_elements else None
    else:
        stats = nan = inf = None
        bad = []
        if numeric:  # row by row: stacking big tensors would copy them for nothing
            parts = [_stats_rows(a.reshape(1, numel)) for a in arrays]
            stats = np.concatenate([p[0] for p in parts])
            nan = np.concatenate([p[1] for p in parts])
            inf = np.concatenate([p[2] for p in parts])
            bad = [k for k, p in enumerate(parts) if p[3]]
        preview = np.stack(arrays) if numel <= preview_elements else None
    if stats is None:  # no numbers to take stats of: empty tensors, other dtypes
        zeros = np.zeros(n, np.int64)
        table.update(nan=zeros, inf=zeros, stats=[None] * n, preview=preview)
        return table
    if len(bad) or not np.isfinite(stats).all():
        # JSON has no NaN: spell out the stats and the previews of rows with non-finite numbers
        # (rare: the usual table goes out as numpy arrays, written straight from memory)
        counted = nan + inf
        stats = [
            None if c == numel else [_json_number(x) for x in row]
            for row, c in zip(stats.tolist(), counted.tolist())
        ]
        if preview is not None and len(bad):
            preview = list(preview)
            for k in bad:
                preview[k] = _json_values(preview[k], False)
    table.update(nan=nan, inf=inf, stats=stats, preview=preview)
    return table


def _stats_rows(m):
    """Per row of m: min, max, mean, std (population) and L2 norm of its finite values, as an
    (rows, 5) float64 array, with the rows' NaN and Inf counts and the rows that had any."""
    rows, numel = m.shape
    out = np.empty((rows, 5))
    nan = np.zeros(rows, np.int64)
    inf = np.zeros(rows, np.int64)
    bad = []
    step = max(1, _CHUNK_ELEMENTS // numel)
    for s in range(0, rows, step):
        f = m[s : s + step].astype(np.float64, copy=False)
        o = out[s : s + step]
        # NaN or Inf in a row shows in its min or max, a sum past 1e308 in its std or norm:
        # such rows (rare) are done again one by one, the careful way
        o[:, 0], o[:, 1] = f.min(axis=1), f.max(axis=1)
        mean = f.sum(axis=1) / numel
        dev = f - mean[:, None]  # deviations from the mean (two passes): an offset like 1e8
        o[:, 2] = mean  # does not spoil the std
        o[:, 3] = np.sqrt(np.einsum("ij,ij->i", dev, dev) / numel)
        o[:, 4] = np.sqrt(np.einsum("ij,ij->i", f, f))
        if np.isfinite(o).all():
            continue
        for r in np.flatnonzero(~np.isfinite(o).all(axis=1)):
            k = s + int(r)
            row = f[r]
            ok = np.isfinite(row)
            v = row if ok.all() else row[ok]
            if v.size < numel:
                bad.append(k)
                nan[k] = int(np.isnan(row).sum())
                inf[k] = numel - v.size - nan[k]
            out[k] = _scaled_stats(v) if v.size else np.nan  # no finite value: no stats
    return out, nan, inf, bad


def _scaled_stats(v):
    """The stats of finite values with std and norm scaled by the largest magnitude, so that
    values near 1e200 do not overflow their squares."""
    lo, hi = float(v.min()), float(v.max())
    scale = max(abs(lo), abs(hi)) or 1.0
    w = v / scale
    mean_w = float(w.mean())
    dev = w - mean_w
    std = scale * math.sqrt(float(dev @ dev) / v.size)
    return lo, hi, mean_w * scale, std, scale * math.sqrt(float(w @ w))


def take_rows(table, rows):
    """A table of some rows of `table` (a cached node's summary, sent again in a later run)."""
    idx = np.asarray(rows, np.intp)

    def pick(col):
        if col is None:
            return None
        if isinstance(col, np.ndarray):
            return col[idx]
        return [col[k] for k in rows]

    out = {k: v for k, v in table.items() if k != "first"}
    out["rows"] = len(rows)
    for col in ("requires_grad", "grad_fn", "nan", "inf", "stats", "preview"):
        out[col] = pick(table[col])
    return out


def row_summary(table, k):
    """Row k of a table (as made here, or read back from JSON) as one summary dict:
    {shape, dtype, numel, requires_grad, grad_fn, nan, inf, stats: {min, max, mean, std, norm}
    or None, and preview when the table has previews}."""
    row = table["stats"][k]
    s = {
        "shape": list(table["shape"]),
        "dtype": table["dtype"],
        "numel": table["numel"],
        "requires_grad": table["requires_grad"][k],
        "grad_fn": table["grad_fn"][k],
        "nan": int(table["nan"][k]),
        "inf": int(table["inf"][k]),
        "stats": None
        if row is None
        else {name: x if isinstance(x, str) else float(x) for name, x in zip(STATS, row)},
    }
    if table["preview"] is not None:
        s["preview"] = table["preview"][k]
    return s


def expand_records(records):
    """Records as single dicts: each `summary` row number replaced by its summary, and the
    `summaries` tables left out. For readers of a run's records one by one; the page does the
    same (frontend/src/api/summaryRows.ts)."""
    rows = {}  # row number -> (table, row in it)
    out = []
    for rec in records:
        kind = rec["kind"]
        if kind == "summaries":
            first = rec["first"]
            for k in range(rec["rows"]):
                rows[first + k] = (rec, k)
            continue
        s = rec.get("summary")
        if isinstance(s, int):
            rec = dict(rec, summary=row_summary(*rows[s]))
        out.append(rec)
    return out


def table_of_row(tables, row):
    """(table, row in it) of a row numbered across `tables` (as summary_tables numbers them)."""
    for table in tables:
        if row < table["rows"]:
            return table, row
        row -= table["rows"]
    raise IndexError(row)


def summarize_many(tensors, preview_elements=1024):
    """The summary dicts of many tensors, in order."""
    tables, where = summary_tables(tensors, preview_elements)
    return [row_summary(*table_of_row(tables, row)) for row in where]


def summarize(t, preview_elements=1024):
    """The summary of one tensor."""
    return summarize_many([t], preview_elements)[0]


def full_values(t):
    """The whole tensor as JSON-safe nested lists (the `tensor` request of the protocol)."""
    a = _host(t)
    return {
        "shape": list(a.shape),
        "dtype": dtype_name(a.dtype),
        "values": _json_values(a, a.dtype.kind != "f" or bool(np.isfinite(a).all())),
    }
