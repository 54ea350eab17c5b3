"""The fast paths of convolutions and max pools against torch: stride-1 convolutions in the
wide layout (engine/ops/_conv_wide.py: 1-d/2-d/3-d, padding, dilation, groups, channel-last
weight gradient, chunks of samples, helper threads, inf/NaN fall-backs, scratch reuse) and max
pools whose windows tile the input (ties, NaN, -inf, odd sizes, returned indices)."""

import numpy as np
import pytest
import torch
from _torch_compare import Fixed, R, case, compare_with_torch, eg, eg_F, f32

from engine import _threads
from engine.ops import _conv_wide


def _conv(name, **kw):
    return lambda m, F, x, w, *b: getattr(F, name)(x, w, *(b or (None,)), **kw)


CONV_CASES = [
    case("lenet1", _conv("conv2d", padding=2), R(4, 1, 12, 12), R(6, 1, 5, 5), R(6)),
    case("lenet2", _conv("conv2d"), R(4, 6, 9, 9), R(16, 6, 5, 5), R(16)),
    case("f32", _conv("conv2d", padding=1), f32(R(2, 2, 4, 4)), f32(R(4, 2, 2, 2)), f32(R(4))),
    case("wide_out_groups", _conv("conv2d", groups=2, padding=1), R(2, 4, 6, 7), R(32, 2, 3, 3)),
    case(
        "dilated_groups",
        _conv("conv2d", groups=3, padding=(2, 1), dilation=(2, 3)),
        R(2, 6, 9, 8),
        R(6, 2, 3, 2),
        R(6),
    ),
    case("rect_pad", _conv("conv2d", padding=(0, 3)), R(3, 2, 5, 4), R(17, 2, 4, 2), R(17)),
    case("conv1d", _conv("conv1d", padding=2, dilation=2), R(3, 4, 9), R(5, 4, 3), R(5)),
    case("conv1d_wide_out", _conv("conv1d", padding=1), R(2, 3, 9), R(16, 3, 3)),
    case("conv3d", _conv("conv3d", padding=(1, 0, 1)), R(2, 2, 4, 5, 4), R(3, 2, 2, 3, 2), R(3)),
    case(
        "conv3d_wide_out",
        _conv("conv3d", dilation=(1, 2, 1)),
        R(2, 2, 4, 6, 4),
        R(16, 2, 2, 2, 3),
        R(16),
    ),
    case("transpose", _conv("conv_transpose2d", padding=1), R(2, 4, 5, 6), R(4, 3, 3, 3), R(3)),
    case(
        "transpose_groups",
        _conv("conv_transpose2d", groups=2, dilation=2),
        R(2, 4, 5, 5),
        R(4, 3, 2, 3),
        R(6),
    ),
    case("only_input_grad", _conv("conv2d"), R(2, 3, 6, 6), R(16, 3, 3, 3, grad=False)),
    case("no_input_grad", _conv("conv2d", padding=1), R(2, 3, 6, 6, grad=False), R(4, 3, 3, 3)),
    case("one_sample", _conv("conv2d", padding=1), R(1, 2, 5, 5), R(3, 2, 3, 3), R(3)),
]


@pytest.mark.parametrize("name, fn, specs", CONV_CASES)
def test_wide_conv_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


@pytest.mark.parametrize("name, fn, specs", CONV_CASES[:6] + CONV_CASES[10:11])
def test_wide_conv_in_chunks_and_threads(name, fn, specs, monkeypatch):
    """Tiny scratch limits force one share a sample; a forced thread count spreads the shares."""
    monkeypatch.setattr(_conv_wide, "_CHUNK_BYTES", 1)
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    compare_with_torch(name, fn, specs)


@pytest.mark.parametrize("where", ["x", "w", "g"])
@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_wide_conv_non_finite(where, value):
    """Zeros between output rows must not meet an inf or NaN of x or w (inf * 0 = NaN)."""
    rng = np.random.default_rng(1)
    xa, wa, ba = (
        rng.standard_normal((2, 3, 7, 7)),
        rng.standard_normal((16, 3, 3, 3)),
        rng.standard_normal(16),
    )
    ga = rng.standard_normal((2, 16, 7, 7))
    {"x": xa, "w": wa, "g": ga}[where][(0, 1, 0, 2)] = value
    grads = {}
    for m, F in ((torch, torch.nn.functional), (eg, eg_F)):
        ins = [m.tensor(a, requires_grad=True) for a in (xa, wa, ba)]
        F.conv2d(*ins, padding=1).backward(m.tensor(ga))
        grads[m.__name__] = [i.grad.numpy() for i in ins]
    for e, t in zip(grads["engine"], grads["torch"]):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-9)


def test_scratch_is_never_returned():
    """Results are fresh arrays: later calls (other shapes too) leave earlier results intact."""
    rng = np.random.default_rng(2)
    x1, x2 = (
        eg.tensor(rng.standard_normal(s), requires_grad=True) for s in ((2, 3, 8, 8), (3, 3, 6, 6))
    )
    w = eg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    y1 = eg_F.conv2d(x1, w, padding=1)
    keep = y1.detach().numpy().copy()
    y2 = eg_F.conv2d(x2, w, padding=2)
    (y1.sum() + y2.sum()).backward()
    gx1 = x1.grad.numpy().copy()
    eg_F.conv2d(x2, w).sum().backward()
    np.testing.assert_array_equal(y1.detach().numpy(), keep)
    np.testing.assert_array_equal(x1.grad.numpy(), gx1)


def test_wide_gradcheck_and_double_backward():
    rng = np.random.default_rng(3)
    x, w, b = (
        eg.tensor(rng.standard_normal(s), requires_grad=True)
        for s in ((2, 2, 5, 4), (16, 1, 3, 2), (16,))
    )

    def f(x, w, b):
        return eg_F.conv2d(x, w, b, padding=(1, 2), dilation=(1, 2), groups=2)

    assert eg.autograd.gradcheck(f, (x, w, b)) is True

    def grad_of(x, w):
        with eg.enable_grad():
            y = eg_F.conv2d(x, w, padding=1, groups=2)
            gx, gw = eg.autograd.grad((y * y).sum(), (x, w), create_graph=True)
            return (gx * gx).sum() + (gw * gw).sum()

    assert eg.autograd.gradcheck(grad_of, (x, w)) is True


# -- max pools whose windows tile the input --------------------------------------------------------
def _pool(**kw):
    return lambda m, F, x: F.max_pool2d(x, **kw)


def _pool_idx(**kw):
    return lambda m, F, x: F.max_pool2d(x, return_indices=True, **kw)[1].to(m.float64)


_TIES = Fixed(np.array([[[[0, 0, 1, 3], [0, 0, 3, 1], [2, 2, 0, 0], [2, 2, 0, -1.0]]]]))
_rng = np.random.default_rng(4)
_SMALL = Fixed(_rng.integers(-1, 2, (2, 3, 9, 7)).astype(float))
_NAN = _rng.standard_normal((2, 2, 6, 6))
_NAN[0, 0, 0, 1] = _NAN[0, 0, 1, 0] = _NAN[1, 1, 3, 3] = np.nan
_INF = np.full((1, 2, 4, 6), -np.inf)
_INF[0, 1, 1, 1] = np.inf

POOL_CASES = [
    case("ties", _pool(kernel_size=2), _TIES),
    case("ties_idx", _pool_idx(kernel_size=2), _TIES),
    case("small_ints", _pool(kernel_size=2), _SMALL),
    case("small_ints_idx", _pool_idx(kernel_size=(3, 2)), _SMALL),
    case("small_ints_ceil", _pool(kernel_size=3, ceil_mode=True), _SMALL),
    case("unbatched", _pool(kernel_size=2), Fixed(_rng.integers(0, 3, (3, 5, 6)).astype(float))),
    case("nan", _pool(kernel_size=2), Fixed(_NAN)),
    case("nan_idx", _pool_idx(kernel_size=2), Fixed(_NAN)),
    case("inf", _pool(kernel_size=2), Fixed(_INF)),
    case("inf_idx", _pool_idx(kernel_size=(2, 3)), Fixed(_INF)),
    case("f32", _pool(kernel_size=2), f32(R(2, 3, 8, 6))),
]


@pytest.mark.parametrize("name, fn, specs", POOL_CASES)
def test_tiled_max_pool_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


def test_tiled_max_pool_non_contiguous_and_double_backward():
    rng = np.random.default_rng(5)
    xa = rng.integers(0, 3, (2, 3, 6, 8)).astype(float)
    out = {}
    for m, F in ((torch, torch.nn.functional), (eg, eg_F)):
        x = m.tensor(xa, requires_grad=True)
        y, idx = F.max_pool2d(x.transpose(2, 3), 2, return_indices=True)
        (g,) = m.autograd.grad((y * y).sum(), (x,), create_graph=True)
        (g * g).sum().backward()
        out[m.__name__] = (y.detach().numpy(), idx.numpy(), x.grad.numpy())
    for e, t in zip(out["engine"], out["torch"]):
        np.testing.assert_array_equal(e, t)
