"""Random tensors and random in-place fills, PyTorch's numbers for PyTorch's calls.

`eg.manual_seed(s)` then any of these gives what `torch.manual_seed(s)` and the same call give on
the CPU: the values come from `_distributions` on the engine's `Generator`, in the order
PyTorch's kernels consume its stream. Draws for a "cuda" tensor are made on the CPU stream and
moved (they equal PyTorch's CPU draws, not its CUDA ones). None of them records autograd history.
"""

import numpy as np

from . import _device, _distributions, _dtype
from ._creation import _require_grad, _size
from ._generator import default_generator
from ._tensor import Tensor, bump_version, wrap


def _gen(generator):
    return default_generator if generator is None else generator


def _target(device):
    return _device.CPU if device is None else _device.device(device)


def _float(dtype, kernel):
    d = _dtype.get(dtype) if dtype is not None else _dtype.DEFAULT_FLOAT
    if not d.is_floating_point:
        raise RuntimeError(f"\"{kernel}\" not implemented for '{d.legacy_name[:-6]}'")
    return d


def _new(values, shape, d, device, requires_grad=False):
    arr = np.asarray(values).astype(d.np, copy=False).reshape(shape)
    t = wrap(_device.move(arr, _target(device)))
    if requires_grad:
        _require_grad(t)
    return t


# -- writing a fill in PyTorch's element order ----------------------------------------------------
def _memory_order(arr):
    """The axes of `arr` outermost first by stride: the order a nullary TensorIterator walks."""
    return sorted(range(arr.ndim), key=lambda a: -abs(arr.strides[a]))


def _contiguous(t):
    d = t._data
    return d.flags.c_contiguous


def _write(t, values):
    """Put `values` (flat, in the order PyTorch's kernel produced them) into `t` in place."""
    d = t._data
    if d.flags.c_contiguous:
        d[...] = _device.move(np.asarray(values, d.dtype).reshape(d.shape), t.device)
    else:
        view = d.transpose(_memory_order(d))
        view[...] = _device.move(np.asarray(values, d.dtype).reshape(view.shape), t.device)
    bump_version(t)
    return t


def _float_tensor(t, kernel):
    if t._data.dtype.kind != "f":
        raise RuntimeError(f"\"{kernel}\" not implemented for '{t.dtype.legacy_name[:-6]}'")
    return t._data.dtype


# -- factories -----------------------------------------------------------------------------------
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    shape = _size(size)
    d = _float(dtype, "check_uniform_bounds")
    n = int(np.prod(shape))
    return _new(_distributions.unit(_gen(generator), n, d.np), shape, d, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    shape = _size(size)
    d = _float(dtype, "normal_kernel_cpu")
    n = int(np.prod(shape))
    return _new(_distributions.normal(_gen(generator), n, d.np), shape, d, device, requires_grad)


def randint(low, high=None, size=(), generator=None, dtype=None, device=None,
            requires_grad=False):  # fmt: skip
    if isinstance(high, (tuple, list)) and size == ():  # randint(high, size)
        high, size = None, high
    if high is None:
        low, high = 0, low
    if isinstance(size, int):
        raise TypeError("randint(): argument 'size' must be tuple of ints, but found element int")
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    shape = _size(size)
    d = _dtype.get(dtype) if dtype is not None else _dtype.int64
    n = int(np.prod(shape))
    values = _distributions.int_from_to(_gen(generator), n, low, high)
    return _new(values, shape, d, device, requires_grad)


def randperm(n, generator=None, dtype=None, device=None, requires_grad=False):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    d = _dtype.get(dtype) if dtype is not None else _dtype.int64
    return _new(_distributions.randperm(_gen(generator), int(n)), (int(n),), d, device,
                requires_grad)  # fmt: skip


def _like(input, dtype, device):
    return (input.dtype if dtype is None else dtype), (input.device if device is None else device)


def rand_like(input, generator=None, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return rand(input._data.shape, generator=generator, dtype=dtype, device=device,
                requires_grad=requires_grad)  # fmt: skip


def randn_like(input, generator=None, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(input, dtype, device)
    return randn(input._data.shape, generator=generator, dtype=dtype, device=device,
                 requires_grad=requires_grad)  # fmt: skip


def randint_like(input, low=0, high=None, generator=None, dtype=None, device=None,
                 requires_grad=False):  # fmt: skip
    dtype, device = _like(input, dtype, device)
    return randint(low, high, input._data.shape, generator=generator, dtype=dtype,
                   device=device, requires_grad=requires_grad)  # fmt: skip


# -- normal with tensor mean / std -------------------------------------------------------------
def normal(mean, std=1.0, size=None, generator=None, dtype=None, device=None,
           requires_grad=False):  # fmt: skip
    """PyTorch's four forms. With a tensor argument the output (the broadcast shape, the tensor's
    dtype) is filled with N(0, 1) (N(0, std) for a number std), then multiplied by a tensor std
    and `mean` added, in two roundings as PyTorch's `mul_` then `add_`."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() missing required argument 'size'")
        out = _new(np.zeros(_size((size,) if isinstance(size, int) else tuple(size))),
                   _size((size,) if isinstance(size, int) else tuple(size)),
                   _float(dtype, "normal_kernel_cpu"), device, requires_grad)  # fmt: skip
        return normal_(out, mean, std, generator)
    like = mean if mt else std
    if st and bool((std._data < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(mean._data.shape if mt else (), std._data.shape if st else ())
    out = _new(np.zeros(shape), shape, like.dtype, like.device)
    if mt and not st:
        normal_(out, 0.0, std, generator)
        out._data += mean._data.astype(out._data.dtype, copy=False)
    else:
        normal_(out, 0.0, 1.0, generator)
        out._data *= std._data.astype(out._data.dtype, copy=False)
        out._data += mean._data.astype(out._data.dtype, copy=False) if mt else mean
    return out


def bernoulli(input, p=None, generator=None):
    """`torch.bernoulli(input)`: 1 with probability input[i] (input's dtype); with a number `p`,
    every element with probability p."""
    out = _new(np.zeros(input._data.shape), input._data.shape, input.dtype, input.device)
    return bernoulli_(out, input if p is None else p, generator)


def multinomial(input, num_samples, replacement=False, generator=None):
    probs = input._data
    probs = probs if type(probs) is np.ndarray else probs.get()
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.legacy_name[:-6]}")  # fmt: skip
    n_cat = probs.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if (probs < 0).any() or not np.isfinite(probs).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = probs.reshape(-1, n_cat)
    if (rows.sum(1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and ((rows > 0).sum(1) < num_samples).any():
        raise RuntimeError(
            "invalid multinomial distribution (with replacement=False, not enough non-negative "
            "category to sample)"
        )
    idx = _distributions.multinomial(_gen(generator), probs, int(num_samples), replacement)
    shape = (num_samples,) if probs.ndim == 1 else (probs.shape[0], num_samples)
    return _new(idx, shape, _dtype.int64, input.device)


# -- in-place fills --------------------------------------------------------------------------------
def uniform_(t, a=0.0, b=1.0, generator=None):
    dt = _float_tensor(t, "uniform_kernel_cpu")
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    g = _gen(generator)
    if _distributions.uniform_into(g, t._data, a, b):  # straight into the tensor's memory
        bump_version(t)
        return t
    return _write(t, _distributions.uniform(g, t._data.size, dt, a, b))


def normal_(t, mean=0.0, std=1.0, generator=None):
    dt = _float_tensor(t, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    g = _gen(generator)
    if _distributions.normal_into(g, t._data, mean, std):  # straight into the tensor's memory
        bump_version(t)
        return t
    values = _distributions.normal(g, t._data.size, dt, mean, std, _contiguous(t))
    return _write(t, values)


def bernoulli_(t, p=0.5, generator=None):
    g = _gen(generator)
    if isinstance(p, Tensor):
        pd = p._data if type(p._data) is np.ndarray else p._data.get()
        if ((pd < 0) | (pd > 1)).any():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        d = t._data
        order = _memory_order(d) if not d.flags.c_contiguous else list(range(d.ndim))
        pb = np.broadcast_to(pd, d.shape).transpose(order)
        return _write(t, _distributions.bernoulli_tensor(g, pb))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _write(t, _distributions.bernoulli_scalar(g, t._data.size, p))


def exponential_(t, lambd=1.0, generator=None):
    _float_tensor(t, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _write(t, _distributions.exponential(_gen(generator), t._data.size, lambd))


def random_(t, from_=None, to=None, generator=None):
    """`random_()`, `random_(to)`, `random_(from, to)` as PyTorch spells them."""
    g = _gen(generator)
    n = t._data.size
    if from_ is None and to is None:
        return _write(t, _distributions.random_full(g, n, t._data.dtype))
    if to is None:
        from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
        )
    return _write(t, _distributions.int_from_to(g, n, int(from_), int(to)))
