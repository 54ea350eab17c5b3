"""Stride-1 convolutions in the "wide" layout: the raw kernels conv.py uses when every stride is 1.

Flatten each zero-padded input plane to one row of P cells. An output cell at spatial position q
reads the input cell at flat(q) + off(tap) for each kernel tap, where flat() uses the padded
plane's strides. So if outputs are indexed by flat(q) too ("wide" positions, L of them a plane:
the Q real cells plus a few between rows that belong to no output), each tap reads ONE contiguous
run of L cells of every plane. Then:

- im2col is a single copy whose inner runs are L cells long (not one output row), giving the
  (N, G, Cg*taps, L) columns; the forward is a matmul and a strided read of the real cells;
- the weight's gradient is a matmul of the same columns against the upstream gradient spread
  onto the wide positions (zeros between rows);
- the input's gradient is a matmul W^T @ g_wide and a col2im of one add a tap, each adding
  contiguous runs of L cells: the wide positions that are no output carry zero gradient, so
  adding them is exact as long as the weight is finite (conv.py checks).

Every matmul is batched over the samples, one small product a sample: OpenBLAS (numpy's BLAS)
runs products of under about 10^6 multiply-adds through kernels that reach roughly its peak
rate on one core, where the single large products of these skinny shapes (few channels, long
rows) reach a third to two thirds of it, and its threads help them little.

The columns and other large temporaries live in scratch buffers (_conv_scratch) reused from call
to call, so the forward keeps no columns for the backward, which rebuilds them from x (a copy);
batches whose columns exceed _CHUNK_BYTES go through in chunks of samples, which bounds the
scratch memory. No scratch array is ever returned: every result is a fresh array.

Every function takes and returns raw arrays (numpy or cupy through xp); none records a graph.
"""

from .. import _threads
from ._common import xp
from ._conv_scratch import scratch as _scratch

_CHUNK_BYTES = 8 << 20
# from this many output channels a group, the weight's gradient reads the upstream gradient in
# a channel-last copy: OpenBLAS's small products run (Cg*taps, L) @ (L, O/G) with both operands
# row-major much faster than with the second one transposed, and the copy (one scattered write
# every O/G cells) is cheap enough only when O/G is not small
_CHANNEL_LAST_FROM = 16


def _prod(t):
    n = 1
    for v in t:
        n *= v
    return n


def usable(geo):
    """Whether the wide kernels apply: every stride 1 and no empty dim."""
    return all(s == 1 for s in geo.stride) and all(geo.S) and all(geo.Q)


def _layout(geo):
    """Padded spatial sizes, their flat strides (cells), P (cells a plane) and L (wide outputs)."""
    sp = tuple(s + a + b for s, a, b in zip(geo.S, geo.lo, geo.hi))
    fs = [1] * len(sp)
    for d in range(len(sp) - 2, -1, -1):
        fs[d] = fs[d + 1] * sp[d + 1]
    length = 1 + sum((q - 1) * f for q, f in zip(geo.Q, fs))
    return sp, tuple(fs), _prod(sp), length


def _inner(geo):
    return (Ellipsis, *(slice(a, a + s) for a, s in zip(geo.lo, geo.S)))


def _padded_flat(x, geo, sp):
    """x zero-padded, as a contiguous (N, C, P) array (scratch when padding is needed)."""
    m = xp(x)
    n, c = x.shape[:2]
    if not any(geo.lo) and not any(geo.hi):
        return m.ascontiguousarray(x).reshape(n, c, -1)
    out = _scratch(m, "pad", (n, c) + sp, x.dtype)
    out.fill(0)
    out[_inner(geo)] = x
    return out.reshape(n, c, -1)


def _shares(m, n, per_sample, itemsize):
    """Shares (start, count) of n samples (per_sample cells each), and the work to tell
    _threads.run (none for device arrays, which stay on the calling thread): two a thread for
    balance when the work is worth threads, each needing at most _CHUNK_BYTES of scratch."""
    work = n * per_sample if m.__name__ == "numpy" else 0
    cap = max(1, _CHUNK_BYTES // max(per_sample * itemsize, 1))
    want = -(-n // (2 * _threads.get_num_threads())) if _threads.worth(work) else n
    step = max(1, min(cap, want))
    return [(s0, min(step, n - s0)) for s0 in range(0, n, step)], work


def _cols(flat, geo, fs, length, s0, k):
    """im2col of samples s0..s0+k in the wide layout, into scratch: (k, G, Cg*taps, L), rows
    ordered (channel, tap)."""
    m = xp(flat)
    c = flat.shape[1]
    sn, sc, item = flat.strides[0], flat.strides[1], flat.itemsize
    shape = (k, c, *geo.K, length)
    strides = (sn, sc, *(f * d * item for f, d in zip(fs, geo.dilation)), item)
    # every read stays inside its plane: the last tap's offset plus L - 1 is P - 1
    view = m.lib.stride_tricks.as_strided(flat[s0:], shape, strides)
    out = _scratch(m, "cols", shape, flat.dtype)
    out[...] = view
    g = geo.groups
    return out.reshape(k, g, (c // g) * _prod(geo.K), length)


def _real(wide, geo, fs):
    """The (N, O, *Q) view of the real output cells of a contiguous (N, O, L) array."""
    item = wide.itemsize
    strides = wide.strides[:2] + tuple(f * item for f in fs)
    return xp(wide).lib.stride_tricks.as_strided(wide, wide.shape[:2] + tuple(geo.Q), strides)


def spread(y, geo, margin=0):
    """y (N, O, *Q) written onto the wide positions of a zero (N, O, margin + L + margin) array
    (scratch); the margins of zeros let input_ read each row shifted by up to margin cells."""
    _, fs, _, length = _layout(geo)
    wide = _scratch(xp(y), "spread", y.shape[:2] + (length + 2 * margin,), y.dtype)
    wide.fill(0)
    _real(wide[:, :, margin:], geo, fs)[...] = y
    return wide


def margin_of(geo):
    return (geo.K[-1] - 1) * geo.dilation[-1]


def _spread_last(y, geo):
    """y (N, O, *Q) written onto the wide positions of a zero (N, G, L, O/G) array (scratch)."""
    _, fs, _, length = _layout(geo)
    n, o = y.shape[:2]
    g = geo.groups
    wide = _scratch(xp(y), "spread_last", (n, g, length, o // g), y.dtype)
    wide.fill(0)
    item = wide.itemsize
    strides = (wide.strides[0], item, *(f * o // g * item for f in fs))
    view = xp(y).lib.stride_tricks.as_strided(wide, (n, o, *geo.Q), strides)
    if g > 1:  # channel o = (group, channel in group): a group steps over L * O/G cells
        view = xp(y).lib.stride_tricks.as_strided(
            wide,
            (n, g, o // g, *geo.Q),
            (wide.strides[0], wide.strides[1], item, *strides[2:]),
        )
        view[...] = y.reshape((n, g, o // g) + tuple(geo.Q))
    else:
        view[...] = y
    return wide


def conv(x, w, geo, bias=None):
    """conv(x, w) (+ bias): x (N, C, *S), w (O, C/G, *K) -> (N, O, *Q)."""
    sp, fs, _, length = _layout(geo)
    m = xp(x)
    flat = _padded_flat(x, geo, sp)
    n, c = flat.shape[:2]
    g, o = geo.groups, w.shape[0]
    wg = w.reshape(g, o // g, -1)
    out = m.empty((n, o) + tuple(geo.Q), x.dtype)
    shares, work = _shares(m, n, c * _prod(geo.K) * length, x.itemsize)

    def share(i):
        s0, k = shares[i]
        cols = _cols(flat, geo, fs, length, s0, k)
        y = _scratch(m, "y", (k, g, o // g, length), x.dtype)
        m.matmul(wg, cols, out=y)
        y = y.reshape(k, o, length)
        if bias is not None:  # along rows of L cells, not the output's short rows
            y += bias[:, None]
        out[s0 : s0 + k] = _real(y, geo, fs)

    _threads.run(share, len(shares), work)
    return out


def weight(x, g, geo, wshape, g_wide=None):
    """The weight's gradient (O, C/G, *K) from x and the upstream gradient g (N, O, *Q);
    g_wide is spread(g, geo) when the caller has it."""
    sp, fs, _, length = _layout(geo)
    m = xp(x)
    flat = _padded_flat(x, geo, sp)
    n, c = flat.shape[:2]
    grp = geo.groups
    o = g.shape[1]
    if o // grp >= _CHANNEL_LAST_FROM:
        gl = _spread_last(g, geo)  # (N, G, L, O/G)
    else:
        if g_wide is None:
            g_wide = spread(g, geo)
        gl = g_wide.reshape(n, grp, o // grp, length).transpose(0, 1, 3, 2)
    shares, work = _shares(m, n, c * _prod(geo.K) * length, x.itemsize)

    def share(i):
        s0, k = shares[i]
        cols = _cols(flat, geo, fs, length, s0, k)
        part = _scratch(m, "wgrad", (k, grp, cols.shape[2], o // grp), x.dtype)
        m.matmul(cols, gl[s0 : s0 + k], out=part)
        return part.sum(0)  # (G, Cg*taps, O/G)

    parts = _threads.run(share, len(shares), work)
    total = parts[0]
    for part in parts[1:]:  # in share order, whichever thread ran each
        total += part
    return m.ascontiguousarray(total.transpose(0, 2, 1)).reshape(wshape)


def weight_raw(x, y, geo):
    """The adjoint in w: x (N, C, *S), y (N, O, *Q) -> (O, C/G, *K)."""
    w_shape = (y.shape[1], x.shape[1] // geo.groups, *geo.K)
    return weight(x, y, geo, w_shape)


def input_(gz, w, geo):
    """The adjoint in x, from the upstream gradient spread with margins margin_of(geo):
    gz = spread(g, geo, margin_of(geo)) (N, O, L + 2 * margin). Result (N, C, *S).

    The taps along the last dim are folded into the matmul: copies of each row shifted by
    b * dilation for every last-dim tap b are stacked under each other (the margins supply the
    zeros shifted in), so one product per sample gives, for each of the other taps, the sum
    over the last-dim taps, and the col2im adds only prod(K[:-1]) runs of L + margin cells."""
    sp, fs, p, length = _layout(geo)
    m = xp(gz)
    n, o = gz.shape[:2]
    cg = w.shape[1]
    grp, og = geo.groups, o // geo.groups
    c = grp * cg
    kw, dw = geo.K[-1], geo.dilation[-1]
    rest = _prod(geo.K[:-1])
    margin = margin_of(geo)
    lz = length + margin
    # a[g][(c, rest tap), (o, b)] = w[g * O/G + o, c, rest tap, b]
    a = w.reshape(grp, og, cg, rest, kw).transpose(0, 2, 3, 1, 4).reshape(grp, cg * rest, og * kw)
    item = gz.itemsize
    sn, so = gz.strides[:2]
    padded = any(geo.lo) or any(geo.hi)
    if padded:
        buf = _scratch(m, "pad", (n, c, p), gz.dtype)
        buf.fill(0)
    else:
        buf = m.zeros((n, c, p), gz.dtype)
    kst = [1] * (len(geo.K) - 1)
    for d in range(len(kst) - 2, -1, -1):
        kst[d] = kst[d + 1] * geo.K[d + 1]
    offs = [
        sum(((r // s) % kk) * dl * f for s, kk, dl, f in zip(kst, geo.K, geo.dilation, fs))
        for r in range(rest)
    ]
    shares, work = _shares(m, n, max(o * kw, c * rest) * lz, item)

    def share(i):
        s0, k = shares[i]
        # shifted[i, g, (o, b), j] = gz[s0 + i, g * O/G + o, margin - b * dw + j], j < L + margin
        shifted = m.lib.stride_tricks.as_strided(
            gz[s0:, :, margin:], (k, grp, og, kw, lz), (sn, og * so, so, -dw * item, item)
        )
        stack = _scratch(m, "cols", (k, grp, og, kw, lz), gz.dtype)
        stack[...] = shifted
        rows = _scratch(m, "y", (k, grp, cg * rest, lz), gz.dtype)
        m.matmul(a, stack.reshape(k, grp, og * kw, lz), out=rows)
        rows = rows.reshape(k, c, rest, lz)
        d = buf[s0 : s0 + k]
        for r, off in enumerate(offs):
            d[:, :, off : off + lz] += rows[:, :, r]

    _threads.run(share, len(shares), work)
    buf = buf.reshape((n, c) + sp)
    return buf[_inner(geo)].copy() if padded else buf


def input_raw(y, w, geo):
    """The adjoint in x: y (N, O, *Q), w (O, C/G, *K) -> (N, C, *S) (conv_transpose)."""
    return input_(spread(y, geo, margin_of(geo)), w, geo)
