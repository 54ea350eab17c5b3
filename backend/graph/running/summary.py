"""Tensor summaries for the page: shape, dtype, stats, NaN/Inf counts and, for small tensors,
the values themselves. JSON-safe: non-finite numbers become the strings "nan", "inf", "-inf".

A run summarises thousands of small tensors, so summaries are made and sent as tables, column
by column: one table per shape and dtype, row k one tensor (docs/protocol.md, "Summary
tables"). The per-tensor work (grouping, one stacked copy that is also the previews, the
stats) runs in C (_tables.c) or, where that is not built, as a few numpy calls per table; a
record names its row instead of carrying a dict of a dozen objects: building those dicts cost
more than the ops being traced. `row_summary` writes one row out as the summary dict
that readers of single records (tests, the CLI, training snapshots) use."""

import math
from itertools import count, repeat
from operator import attrgetter, is_, itemgetter

import numpy as np

from engine.watch import array_of, requires_grad_of

try:  # the per-tensor loops in C (_tables.c, built by `pip install`; optional)
    from .. import _tables
except ImportError:  # not built: the numpy path below does the same, slower
    _tables = None

STATS = ("min", "max", "mean", "std", "norm")  # the columns of a table's `stats`
_BIG = 4096  # tensors with more elements are summarised one by one, never stacked
# Rows are reduced in chunks of at most this many elements (256 KiB of float64 temporaries):
# fewer numpy calls than smaller chunks, and still cache-sized (measured: 8,192 elements took
# a third longer, the whole table at once twice as long).
_CHUNK_ELEMENTS = 32768


def _host(t):
    a = array_of(t)
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


_C_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what _tables.stats() takes
_DTYPE_NAMES = {}  # numpy's dtype.name is a slow Python property: look each one up once


def dtype_name(dt):
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


# per-tensor getters, for map(): C calls instead of a Python loop body per tensor
_data_of = array_of  # (a C getter, see engine.watch)
_shape_of = attrgetter("shape")
_dtype_of = attrgetter("dtype")
_grad_fn_of = attrgetter("grad_fn")
_requires_grad_of = requires_grad_of


def summary_tables(tensors, preview_elements=1024, first=0):
    """Tables of the tensors' summaries: (tables, where), where[i] = the row of tensors[i],
    counting across the tables in order (table 0's rows first) from `first` (a run numbers
    its rows across its batches), or None where tensors[i] is None. The same tensor object
    twice is one row. Tables are `summaries` records without their `first` row number, which
    the run gives them as it sends them."""
    scanned = _tables.scan(tensors, first) if _tables is not None else None
    if scanned is None:  # not built, or values on a GPU
        present = [t for t in tensors if t is not None]
        tables, where = _summary_tables_numpy(present, preview_elements)
        rows = iter(where)
        return tables, [None if t is None else first + next(rows) for t in tensors]
    where, groups = scanned  # deduped and grouped by dtype and shape, rows in order
    tables = [_table(ts, arrays, preview_elements, (rg, gf)) for arrays, ts, rg, gf in groups]
    return tables, where


def _summary_tables_numpy(tensors, preview_elements):
    """summary_tables without _tables.c."""
    # A batch holds thousands of small tensors: every per-tensor step below is a C-level
    # map/zip/dict/list call or numpy, not a Python loop body.
    ids = list(map(id, tensors))
    # id -> tensor, one entry per object, in order of first appearance (a repeat sets the
    # entry again, to the same object, and does not move it)
    unique = dict(zip(ids, tensors))
    kept = list(unique.values())
    m = len(kept)
    if not m:
        return [], []
    arrays = list(map(_data_of, kept))
    if set(map(type, arrays)) - {np.ndarray}:  # some cupy arrays: copy those to the host
        arrays = [a if a.__class__ is np.ndarray else _host(t) for t, a in zip(kept, arrays)]
    shapes = list(map(_shape_of, arrays))
    d0 = arrays[0].dtype
    # one dtype object throughout (the usual case) groups by shape alone, sparing numpy's slow
    # dtype hash; list.count compares each shape tuple without hashing it
    one_dtype = all(map(is_, map(_dtype_of, arrays), repeat(d0)))
    if one_dtype and shapes.count(shapes[0]) == m:  # one shape and dtype: rows in order
        tables = [_table(kept, arrays, preview_elements)]
        rows = list(range(m))
    else:
        # each tensor's group code: the index of the first tensor with its (shape, dtype), so
        # codes sort in order of first appearance
        code_of = {}  # (shape, dtype), or shape alone -> its code
        keys = shapes if one_dtype else zip(shapes, map(_dtype_of, arrays))
        codes = np.fromiter(map(code_of.setdefault, keys, count()), np.intp, m)
        # a stable sort lines the groups up, each in order: row r is tensor order[r]
        order = np.argsort(codes, kind="stable")
        ends = np.cumsum(np.bincount(codes)[list(code_of.values())]).tolist()  # groups' ends
        row_of_kept = np.empty(m, np.intp)
        row_of_kept[order] = np.arange(m)
        rows = row_of_kept.tolist()
        order = order.tolist()
        tables, start = [], 0
        for end in ends:
            idx = order[start:end]
            tables.append(_table(_take(kept, idx), _take(arrays, idx), preview_elements))
            start = end
    if m == len(ids):
        return tables, rows
    row_of = dict(zip(unique, rows))  # id -> its row; repeats get the row of the first
    return tables, list(map(row_of.__getitem__, ids))


def _take(seq, idx):
    """The items of seq at the indices idx, as a tuple: itemgetter fetches them in one C call
    (but gives a lone item bare)."""
    return itemgetter(*idx)(seq) if len(idx) > 1 else (seq[idx[0]],)


class _ClassNames(dict):
    """Class -> its name, read once per class on its first lookup: a batch has a few grad_fn
    classes and thousands of tensors, each looked up in C."""

    def __missing__(self, cls):
        name = self[cls] = cls.__name__
        return name


def _table(ts, arrays, preview_elements, columns=None):
    """The table of tensors that share one shape and dtype (ts: the tensors, arrays: their
    values on the host; lists or tuples). `columns`: their requires_grad and grad_fn columns,
    when scan() has made them."""
    a0 = arrays[0]
    n, numel = len(arrays), a0.size
    if columns is None:
        names = _ClassNames({type(None): None})  # grad_fn class -> the grad_fn column's value
        columns = (
            list(map(_requires_grad_of, ts)),
            list(map(names.__getitem__, map(type, map(_grad_fn_of, ts)))),
        )
    table = {
        "kind": "summaries",
        "rows": n,
        "shape": list(a0.shape),
        "dtype": dtype_name(a0.dtype),
        "numel": numel,
        "requires_grad": columns[0],
        "grad_fn": columns[1],
    }
    numeric = a0.dtype.kind in "fiub"
    if numel <= _BIG and numel and _tables is not None and a0.dtype in _C_DTYPES:
        # the copy and the stats in C, one pass per tensor
        stacked = np.empty((n, numel), a0.dtype)
        stats = np.empty((n, 5))
        again = _tables.stats(list(arrays), np.ascontiguousarray, stacked, stats)
        nan, inf = np.zeros(n, np.int64), np.zeros(n, np.int64)
        bad = _redo_rows(stacked, again, stats, nan, inf)
        preview = stacked.reshape(n, *a0.shape) if numel <= preview_elements else None
    elif numel <= _BIG:
        # one copy of every value (never the tensor's own array: a leaf's .grad changes in
        # place later), which is also the previews: row k is tensor k
        stacked = _stacked(arrays, a0, n, numel)
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


def _stacked(arrays, a0, n, numel):
    """One copy of all the arrays' values, row k = arrays[k]. bytes.join copies each array's
    buffer as it is, three times faster than np.concatenate, which checks and converts each
    array first; ascontiguousarray hands a contiguous array back as it is and copies a
    strided view (a broadcast gradient, a transpose), which has no such buffer."""
    data = b"".join(map(np.ascontiguousarray, arrays))
    return np.frombuffer(data, a0.dtype).reshape(n, numel)


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
        c = m[s : s + step]
        o = out[s : s + step]
        # NaN or Inf in a row shows in its min or max, a sum past 1e308 in its std or norm:
        # such rows (rare) are done again one by one, the careful way
        o[:, 0], o[:, 1] = c.min(axis=1), c.max(axis=1)  # exact in the values' own dtype
        # the sums in float64, cast chunk by chunk inside the ufuncs (no float64 copy of c)
        mean = np.add.reduce(c, axis=1, dtype=np.float64) / numel
        # rows of one value: that value, exactly, and no spread (the sum does not give it back)
        np.copyto(mean, o[:, 0], where=o[:, 0] == o[:, 1])
        dev = np.subtract(c, mean[:, None], dtype=np.float64)  # deviations from the mean (two
        squares = np.einsum("ij,ij->i", dev, dev)  # passes): an offset like 1e8 does not spoil
        o[:, 2] = mean  # the std
        o[:, 3] = np.sqrt(squares / numel)
        # the sum of squares is that of the deviations plus numel * mean^2: two sums of
        # terms that are never negative, so nothing cancels, and one pass fewer
        o[:, 4] = np.sqrt(squares + numel * mean * mean)
        if not np.isfinite(o).all():
            again = np.flatnonzero(~np.isfinite(o).all(axis=1)).tolist()
            bad += [s + r for r in _redo_rows(c, again, o, nan[s : s + step], inf[s : s + step])]
    return out, nan, inf, bad


def _redo_rows(m, rows, out, nan, inf):
    """Take the stats of the rows `rows` of m again, the careful way: they hold NaN or Inf, or
    their sums overflowed. Writes their stats (of the finite values), NaN and Inf counts into
    out, nan and inf; returns the rows that hold NaN or Inf."""
    numel = m.shape[1]
    bad = []
    for r in rows:
        row = m[r].astype(np.float64)
        ok = np.isfinite(row)
        v = row if ok.all() else row[ok]
        if v.size < numel:
            bad.append(r)
            nan[r] = int(np.isnan(row).sum())
            inf[r] = numel - v.size - nan[r]
        out[r] = _scaled_stats(v) if v.size else np.nan  # no finite value: no stats
    return bad


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


_ROW_COLUMNS = ("requires_grad", "grad_fn", "nan", "inf", "stats", "preview")


def take_rows(table, rows):
    """A table of some rows of `table` (a cached node's summary, sent again in a later run)."""
    return gather_rows([(table, rows)])


def gather_rows(parts):
    """One table of the rows `rows` of each (table, rows) of `parts`, in that order: tables of
    one shape and dtype (the cached values of a run, whose rows were first sent in several
    earlier runs, sent again as one table)."""
    picked = [_pick_rows(table, rows) for table, rows in parts]
    out = {k: v for k, v in parts[0][0].items() if k != "first"}
    out["rows"] = sum(len(rows) for _, rows in parts)
    for col in _ROW_COLUMNS:
        pieces = [p[col] for p in picked]
        if len(pieces) == 1:
            out[col] = pieces[0]
        elif any(c is None for c in pieces):  # previews: a shape has them in every table or,
            out[col] = None  # where runs had other limits, in none
        elif all(isinstance(c, np.ndarray) for c in pieces):
            out[col] = np.concatenate(pieces)
        else:  # lists, or a mix (rows with non-finite numbers are spelled out in lists)
            out[col] = [x for c in pieces for x in (c.tolist() if isinstance(c, np.ndarray) else c)]
    return out


def _pick_rows(table, rows):
    idx = np.asarray(rows, np.intp)
    n = table["rows"]
    if idx.size == n and (idx == np.arange(n)).all():
        # every row in order (a run after an edit takes the same rows as the one before):
        # the columns as they are, never changed once made
        return {col: table[col] for col in _ROW_COLUMNS}
    listed = idx.tolist()  # plain ints: a list column is picked from in C
    picked = {}
    for col in _ROW_COLUMNS:
        c = table[col]
        if c is None:
            picked[col] = None
        elif isinstance(c, np.ndarray):
            picked[col] = c[idx]
        else:
            picked[col] = list(map(c.__getitem__, listed))
    return picked


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
