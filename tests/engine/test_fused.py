"""engine/_fused.c gives the bits of the numpy steps it replaces (GELU's CDF and value, its
derivative, float32 erf, softmax's row maxima, relu and its gradient, AdamW's step, a max pool's
gradient put back), special values included, and the engine without it runs them."""

import numpy as np
import pytest
import torch

import engine as eg
from engine.ops import _fused_kernels, _special, activations

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 4.0, -4.0, 5.656854, -5.6568546, 1e-30, 1e30, -10.0]


def test_the_kernels_are_built():
    # `pip install` builds engine._fused (setup.py); the tests below hold it to the numpy path,
    # so an install without it fails here instead of leaving them nothing to compare
    assert _fused_kernels.kernels is not None, "engine._fused is not built: pip install -e ."


def _inputs():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(70_001) * 4).astype(np.float32)  # above the threads' split size
    x[: len(SPECIAL)] = SPECIAL
    return x


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


def _both(fn, monkeypatch):
    got = fn()
    with monkeypatch.context() as m:
        m.setattr(_fused_kernels, "kernels", None)
        want = fn()
    return got, want


@pytest.mark.parametrize("threads", [1, 2])
def test_gelu_value_cdf_and_derivative_are_numpys_bits(monkeypatch, threads):
    x = _inputs()
    prev = eg.get_num_threads()
    eg.set_num_threads(threads)
    try:

        def run():
            value, cdf = _special.gelu_parts(x)
            deriv = activations._gelu_derivative(x, "none", cdf)
            return value, cdf, deriv

        got, want = _both(run, monkeypatch)
    finally:
        eg.set_num_threads(prev)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_bits(g), _bits(w))


def test_erf_and_normal_cdf_are_numpys_bits(monkeypatch):
    x = _inputs()
    for fn in (_special.erf, _special.normal_cdf):
        got, want = _both(lambda fn=fn: fn(x), monkeypatch)
        np.testing.assert_array_equal(_bits(got), _bits(want))


def test_gelu_on_a_strided_input_and_its_gradient_match_torch():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((64, 96)).astype(np.float32) * 3
    x = eg.tensor(base, requires_grad=True)
    tx = torch.tensor(base, requires_grad=True)
    y = eg.nn.functional.gelu(x.t())  # a transposed view: copied to contiguous first
    ty = torch.nn.functional.gelu(tx.t())
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal((96, 64)).astype(np.float32)
    y.backward(eg.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("width", [64, 5, 37])
def test_softmax_and_its_gradient_are_the_numpy_steps_bits(monkeypatch, threads, width):
    rng = np.random.default_rng(2)
    d = rng.standard_normal((2048, width)).astype(np.float32) * 5
    d[0, width // 2] = np.nan
    d[1] = -np.inf
    d[2, 3] = np.inf
    d[3, :4] = -0.0  # a row whose maximum is a zero of either sign
    d[3, 4:] = 0.0
    d[3, 4 + (width - 4) // 2 :] = -1.0
    g = rng.standard_normal(d.shape).astype(np.float32)

    def run():
        x = eg.tensor(d, requires_grad=True)
        y = eg.nn.functional.softmax(x, -1)
        y.backward(eg.tensor(g))
        return y.detach().numpy().copy(), x.grad.numpy().copy()

    prev = eg.get_num_threads()
    eg.set_num_threads(threads)
    try:
        got, want = _both(run, monkeypatch)
    finally:
        eg.set_num_threads(prev)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    y = got[0]  # the backward's formula, as engine ops compute it
    np.testing.assert_array_equal(_bits(got[1]), _bits(y * (g - (g * y).sum(-1, keepdims=True))))
    t = torch.softmax(torch.tensor(d[4:]), -1).numpy()
    np.testing.assert_allclose(got[0][4:], t, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(64, 6, 28, 28), (7, 3), ()])
def test_relu_and_its_gradient_are_numpys_bits(monkeypatch, shape):
    rng = np.random.default_rng(3)
    d = rng.standard_normal(shape).astype(np.float32)
    flat = d.reshape(-1)
    flat[: min(flat.size, 8)] = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, -1e-45][
        : flat.size
    ]
    g = rng.standard_normal(shape).astype(np.float32)
    g.reshape(-1)[: min(g.size, 4)] = [np.inf, -np.inf, np.nan, -0.0][: g.size]

    def run():
        x = eg.tensor(d, requires_grad=True)
        y = eg.nn.functional.relu(x)
        y.backward(eg.tensor(g))
        return y.detach().numpy().copy(), x.grad.numpy().copy()

    got, want = _both(run, monkeypatch)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    np.testing.assert_array_equal(_bits(got[0]), _bits(np.maximum(d, 0)))
    np.testing.assert_array_equal(_bits(got[1]), _bits(g * (got[0] != 0)))


@pytest.mark.parametrize("weight_decay", [1e-2, 0.0])
def test_adamw_steps_are_the_numpy_steps_bits(monkeypatch, weight_decay):
    def run():
        rng = np.random.default_rng(4)
        p = eg.tensor(rng.standard_normal((64, 48)).astype(np.float32), requires_grad=True)
        b = eg.tensor(rng.standard_normal(48).astype(np.float32), requires_grad=True)
        opt = eg.optim.AdamW([p, b], lr=3e-3, weight_decay=weight_decay)
        for i in range(4):
            g = rng.standard_normal((64, 48)).astype(np.float32) * 10.0 ** (i - 2)
            g[0, :3] = [np.inf, np.nan, -0.0]
            p.grad = eg.tensor(g)
            b.grad = eg.tensor(rng.standard_normal(48).astype(np.float32))
            opt.step()
        st = opt.state[p]
        return [
            p.detach().numpy().copy(),
            b.detach().numpy().copy(),
            st["exp_avg"],
            st["exp_avg_sq"],
        ]

    got, want = _both(run, monkeypatch)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(np.asarray(a)), _bits(np.asarray(b)))


def test_max_pool_gradient_and_unpool_are_numpys_bits(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3, 12, 12)).astype(np.float32)
    g = rng.standard_normal((8, 3, 6, 6)).astype(np.float32)
    g.reshape(-1)[:3] = [np.nan, -0.0, np.inf]

    def run():
        t = eg.tensor(x, requires_grad=True)
        y, idx = eg.nn.functional.max_pool2d(t, 2, return_indices=True)
        y.backward(eg.tensor(g))
        un = eg.nn.functional.max_unpool2d(eg.tensor(g), idx, 2)
        return t.grad.numpy().copy(), un.numpy().copy()

    got, want = _both(run, monkeypatch)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(a), _bits(b))
