"""F.max_pool3d / F.avg_pool3d and nn.MaxPool3d / nn.AvgPool3d against PyTorch on random
geometries (kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor_override,
return_indices): outputs, indices, input gradients, grad_fn names, the argument messages."""

import numpy as np
import pytest
import torch
from _module_pairs import assert_close, backward_both, leaves, same_error
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg


@st.composite
def geometries(draw, dilate):
    k = tuple(draw(st.integers(1, 3)) for _ in range(3))
    s = tuple(draw(st.integers(1, 3)) for _ in range(3))
    d = tuple(draw(st.integers(1, 2)) for _ in range(3)) if dilate else (1, 1, 1)
    p = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    size = tuple(draw(st.integers(dd * (kk - 1) + 1, dd * (kk - 1) + 5)) for kk, dd in
                 zip(k, d))  # fmt: skip
    batched = draw(st.booleans())
    shape = ((2,) if batched else ()) + (2,) + size
    return k, s, p, d, shape


def _form(v):
    """A tuple, or an int where all three agree (both spellings reach the op)."""
    return v[0] if len(set(v)) == 1 else v


@settings(max_examples=40, deadline=None)
@given(geo=geometries(True), ceil=st.booleans(), seed=st.integers(0, 2**16))
def test_max_pool3d(geo, ceil, seed):
    k, s, p, d, shape = geo
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    (tx,), (ex,) = leaves(x)
    args = (_form(k), _form(s), _form(p), _form(d), ceil, True)
    t_out, t_idx = torch.nn.functional.max_pool3d(tx, *args)
    e_out, e_idx = eg.nn.functional.max_pool3d(ex, *args)
    assert_close(e_out, t_out, what="output")
    np.testing.assert_array_equal(e_idx.numpy(), t_idx.numpy())
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    backward_both(t_out, e_out, seed)
    assert_close(ex.grad, tx.grad, what="input grad")


@settings(max_examples=40, deadline=None)
@given(
    geo=geometries(False),
    ceil=st.booleans(),
    include=st.booleans(),
    divisor=st.sampled_from([None, None, 3]),
    seed=st.integers(0, 2**16),
)
def test_avg_pool3d(geo, ceil, include, divisor, seed):
    k, s, p, _, shape = geo
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    (tx,), (ex,) = leaves(x)
    args = (_form(k), _form(s), _form(p), ceil, include, divisor)
    t_out = torch.nn.functional.avg_pool3d(tx, *args)
    e_out = eg.nn.functional.avg_pool3d(ex, *args)
    assert_close(e_out, t_out, what="output")
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    backward_both(t_out, e_out, seed)
    assert_close(ex.grad, tx.grad, what="input grad")


def test_layers_and_double_backward():
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 4, 6))
    for name, kwargs in (("MaxPool3d", {"stride": 1, "padding": 1}), ("AvgPool3d", {})):
        res = []
        for m in (torch, eg):
            layer = getattr(m.nn, name)(2, **kwargs)
            xt = m.tensor(x, requires_grad=True)
            out = layer(xt)
            (g,) = m.autograd.grad((out * out).sum(), xt, create_graph=True)
            (gg,) = m.autograd.grad(g.sum(), xt)
            res.append((repr(layer), out.detach().numpy(), g.detach().numpy(), gg.numpy()))
        assert res[0][0] == res[1][0]
        for a, b in zip(res[1][1:], res[0][1:]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", ["max_pool3d", "avg_pool3d"])
@pytest.mark.parametrize(
    "shape, args",
    [
        ((2, 3, 4), (2,)),
        ((1, 2, 3, 4, 5), (4,)),
        ((1, 2, 3, 4, 5), (2, None, 2)),
        ((1, 2, 3, 4, 5), (2, 0)),
        ((1, 2, 3, 4, 5), ((2, 2),)),
        ((1, 2, 3, 4, 5), (2, (1, 2))),
        ((1, 2, 3, 4, 5), (2, 2, (1, 1))),
        ((1, 2, 6, 6, 6), ((1, 3, 2), 1, (0, 2, 0))),
        ((1, 2, 6, 6, 6), ((1, 3, 2), 1, (1, 0, 0))),
        ((1, 2, 0, 4, 5), (2,)),
    ],
)
def test_errors_as_torch(op, shape, args):
    x = np.zeros(shape, np.float32)
    same_error(
        lambda: getattr(torch.nn.functional, op)(torch.tensor(x), *args),
        lambda: getattr(eg.nn.functional, op)(eg.tensor(x), *args),
    )


def test_max_pool3d_padding_against_the_undilated_kernel():
    x = np.zeros((1, 2, 6, 6, 6), np.float32)
    args = ((1, 3, 2), 1, (0, 2, 0), (1, 2, 1))
    same_error(
        lambda: torch.nn.functional.max_pool3d(torch.tensor(x), *args),
        lambda: eg.nn.functional.max_pool3d(eg.tensor(x), *args),
    )
