"""F.max_unpool1d/2d/3d and nn.MaxUnpool1d/2d/3d against PyTorch, fed by the engine's own max
pools' indices: outputs (with and without output_size), input gradients, grad_fn names, the
layers' reprs and the argument messages."""

import numpy as np
import pytest
import torch
from _module_pairs import assert_close, backward_both, leaves, same_error
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import engine as eg


@settings(max_examples=40, deadline=None)
@given(
    nd=st.integers(1, 3),
    k=st.integers(1, 3),
    s=st.integers(1, 3),
    pad=st.integers(0, 1),
    extra=st.integers(0, 3),
    with_size=st.booleans(),
    batched=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_unpool_matches_torch(nd, k, s, pad, extra, with_size, batched, seed):
    pad = min(pad, k // 2)
    rng = np.random.default_rng(seed)
    shape = ((2,) if batched else ()) + (3,) + tuple(k + int(rng.integers(0, 5)) for _ in
                                                     range(nd))  # fmt: skip
    x = rng.standard_normal(shape).astype(np.float32)
    pool, unpool = f"max_pool{nd}d", f"max_unpool{nd}d"
    outs = {}
    for m in (torch, eg):
        _, idx = getattr(m.nn.functional, pool)(m.tensor(x), k, s, pad, return_indices=True)
        outs[m] = idx
    np.testing.assert_array_equal(outs[eg].numpy(), outs[torch].numpy())
    pooled = rng.standard_normal(tuple(outs[torch].shape)).astype(np.float32)
    # the unpooled size must hold every index: the original size, given as output_size
    # where the default differs from it (PyTorch accepts it within a stride of the default)
    original = list(shape[-nd:])
    default = [(n - 1) * s + k - 2 * pad for n in pooled.shape[-nd:]]
    size = None
    if with_size or default != original:
        assume(all(d - s < o < d + s for d, o in zip(default, original)))
        size = list(pooled.shape[:-nd]) + original if extra % 2 and batched else original
    (tp,), (ep,) = leaves(pooled)
    layer_args = (k, s, pad)
    t_layer = getattr(torch.nn, f"MaxUnpool{nd}d")(*layer_args)
    e_layer = getattr(eg.nn, f"MaxUnpool{nd}d")(*layer_args)
    assert repr(e_layer) == repr(t_layer)
    t_out = t_layer(tp, outs[torch], size)
    e_out = e_layer(ep, outs[eg], size)
    if s >= k:  # overlapping windows may pick one cell twice: which write wins is unspecified
        assert_close(e_out, t_out, what="output")
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    backward_both(t_out, e_out, seed)
    assert_close(ep.grad, tp.grad, what="input grad")
    f_out = getattr(eg.nn.functional, unpool)(ep, outs[eg], k, s, pad, size)
    assert tuple(f_out.shape) == tuple(t_out.shape)


def test_unpool_double_backward():
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 6))
    res = []
    for m in (torch, eg):
        y, idx = m.nn.functional.max_pool2d(m.tensor(x), 2, return_indices=True)
        yt = m.tensor(y.numpy(), requires_grad=True)
        out = m.nn.functional.max_unpool2d(yt, idx, 2)
        (g,) = m.autograd.grad((out * out).sum(), yt, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), yt)
        res.append((out.detach().numpy(), g.detach().numpy(), gg.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b)


def _pooled(m, shape=(1, 2, 4, 4)):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return m.nn.functional.max_pool2d(m.tensor(x), 2, return_indices=True)


@pytest.mark.parametrize(
    "case",
    [
        lambda m, y, i: m.nn.functional.max_unpool2d(y, i[..., :1], 2),
        lambda m, y, i: m.nn.functional.max_unpool2d(y, i + 100, 2),
        lambda m, y, i: m.nn.functional.max_unpool2d(y, i.int(), 2),
        lambda m, y, i: m.nn.functional.max_unpool2d(y, i, 2, output_size=(9, 9)),
        lambda m, y, i: m.nn.functional.max_unpool2d(y, i, 2, output_size=(5,)),
        lambda m, y, i: m.nn.functional.max_unpool2d(y[0, 0], i[0, 0], 2),
        lambda m, y, i: m.nn.functional.max_unpool1d(y[0], i[0] + 50, 2),
    ],
)
def test_errors_as_torch(case):
    same_error(lambda: case(torch, *_pooled(torch)), lambda: case(eg, *_pooled(eg)))
