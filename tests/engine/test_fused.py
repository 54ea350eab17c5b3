"""engine/_fused.c gives the bits of the numpy steps it replaces (GELU's CDF and value, its
derivative, float32 erf), special values included, and the engine without it runs them."""

import numpy as np
import pytest
import torch

import engine as eg
from engine.ops import _special, activations

pytestmark = pytest.mark.skipif(_special._fused is None, reason="engine._fused is not built")

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 4.0, -4.0, 5.656854, -5.6568546, 1e-30, 1e30, -10.0]


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
        m.setattr(_special, "_fused", None)
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
