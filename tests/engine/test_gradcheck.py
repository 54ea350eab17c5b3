"""float64 finite-difference checks of every differentiable op with eg.autograd.gradcheck.

Only float inputs are handed to gradcheck; integer index / target tensors and bool masks
are sampled once and closed over.
"""

import numpy as np
import pytest
from _torch_compare import (
    NZ,
    ClampSafe,
    D,
    Idx,
    Mask,
    P,
    Prob,
    R,
    case,
    eg,
    gradcheck_case,
)

GRADCHECK = [
    # elementwise
    case("neg", lambda m, F, x: -x, R(3, 4)),
    case("exp", lambda m, F, x: m.exp(x), R(3, 4)),
    case("log", lambda m, F, x: m.log(x), P(3, 4)),
    case("sqrt", lambda m, F, x: m.sqrt(x), P(3, 4)),
    case("abs", lambda m, F, x: m.abs(x), NZ(3, 4)),
    case("sin", lambda m, F, x: m.sin(x), R(3, 4)),
    case("cos", lambda m, F, x: m.cos(x), R(3, 4)),
    case("tanh", lambda m, F, x: m.tanh(x), R(3, 4)),
    case("sigmoid", lambda m, F, x: m.sigmoid(x), R(3, 4)),
    case("relu", lambda m, F, x: m.relu(x), NZ(3, 4)),
    case("leaky_relu", lambda m, F, x: F.leaky_relu(x, 0.1), NZ(3, 4)),
    case("clamp", lambda m, F, x: m.clamp(x, min=-0.5, max=0.5), ClampSafe(3, 4)),
    case("clamp_min", lambda m, F, x: m.clamp(x, min=-0.5), ClampSafe(3, 4)),
    case("clamp_max", lambda m, F, x: m.clamp(x, max=0.5), ClampSafe(3, 4)),
    case("pow_scalar", lambda m, F, x: x**3, R(3, 4)),
    case("pow_fractional", lambda m, F, x: x**1.5, P(3, 4)),
    case("rpow", lambda m, F, x: 2.0**x, R(3, 4)),
    case("scalar_arith", lambda m, F, x: (2.0 - x) * 3 + 1.5 / (x + 3.0), P(3, 4)),
    # broadcasting binaries
    case("add", lambda m, F, x, y: x + y, R(3, 1), R(1, 4)),
    case("sub", lambda m, F, x, y: x - y, R(2, 1, 3), R(4, 1)),
    case("mul", lambda m, F, x, y: x * y, R(3, 1), R(1, 4)),
    case("div", lambda m, F, x, y: x / y, R(2, 1, 3), NZ(4, 1)),
    case("pow_tensor", lambda m, F, x, y: x**y, P(3, 1), R(1, 4)),
    case("maximum", lambda m, F, x, y: m.maximum(x, y), D(3, 4), D(1, 4)),
    case("minimum", lambda m, F, x, y: m.minimum(x, y), D(3, 1), D(3, 4)),
    case("scalar_tensor_bcast", lambda m, F, x, y: x * y + y, R(), R(3, 4)),
    case("where", lambda m, F, x, y: m.where(x > 0, x, y), NZ(3, 1), R(1, 4)),
    # reductions
    case("sum", lambda m, F, x: x.sum(), R(2, 3, 4)),
    case("sum_dim", lambda m, F, x: x.sum(dim=(0, 2), keepdim=True), R(2, 3, 4)),
    case("mean", lambda m, F, x: x.mean(-1), R(2, 3, 4)),
    case("max", lambda m, F, x: x.max(), D(3, 4)),
    case("max_dim", lambda m, F, x: x.max(dim=1).values, D(3, 4)),
    case("min_dim", lambda m, F, x: x.min(dim=0, keepdim=True).values, D(3, 4)),
    case("amax", lambda m, F, x: x.amax(dim=(0, 2)), D(2, 3, 4)),
    case("amin", lambda m, F, x: x.amin(-1), D(2, 3, 4)),
    case("var", lambda m, F, x: x.var(dim=1), R(3, 4)),
    case("var_correction0", lambda m, F, x: x.var(correction=0), R(3, 4)),
    case("std", lambda m, F, x: x.std(dim=0, unbiased=False), R(3, 4)),
    # softmax family
    case("softmax", lambda m, F, x: m.softmax(x, 1), R(3, 4)),
    case("softmax_dim0", lambda m, F, x: m.softmax(x, 0), R(2, 3, 4)),
    case("log_softmax", lambda m, F, x: m.log_softmax(x, -1), R(3, 4)),
    case("F.softmax", lambda m, F, x: F.softmax(x, dim=0), R(3, 4)),
    case("F.log_softmax", lambda m, F, x: F.log_softmax(x, dim=1), R(2, 3, 4)),
    # matmul variants
    case("mm", lambda m, F, x, y: x @ y, R(3, 4), R(4, 2)),
    case("bmm", lambda m, F, x, y: x @ y, R(2, 3, 4), R(2, 4, 2)),
    case("batched_bcast", lambda m, F, x, y: m.matmul(x, y), R(2, 3, 4), R(4, 2)),
    case("vec_batched", lambda m, F, x, y: x @ y, R(4), R(2, 4, 2)),
    case("dot", lambda m, F, x, y: x @ y, R(4), R(4)),
    case("mv", lambda m, F, x, y: x @ y, R(3, 4), R(4)),
    case("vm", lambda m, F, x, y: x @ y, R(4), R(4, 3)),
    # shape ops
    case("reshape", lambda m, F, x: x.reshape(4, -1), R(2, 3, 4)),
    case("view", lambda m, F, x: x.view(6, 4), R(2, 3, 4)),
    case("transpose", lambda m, F, x: x.transpose(0, 2), R(2, 3, 4)),
    case("T", lambda m, F, x: x.T, R(3, 4)),
    case("permute", lambda m, F, x: x.permute(2, 0, 1), R(2, 3, 4)),
    case("unsqueeze", lambda m, F, x: x.unsqueeze(1), R(3, 4)),
    case("squeeze", lambda m, F, x: x.squeeze(), R(1, 3, 1)),
    case("flatten", lambda m, F, x: x.flatten(1), R(2, 3, 4)),
    case("expand", lambda m, F, x: x.expand(2, -1, 4), R(3, 1)),
    case("cat", lambda m, F, a, b, c: m.cat([a, b, c], dim=1), R(2, 1), R(2, 3), R(2, 2)),
    case("stack", lambda m, F, a, b, c: m.stack([a, b, c], dim=-1), R(3, 2), R(3, 2), R(3, 2)),
    # indexing
    case("index_basic", lambda m, F, x: x[1:, None, ::2], R(4, 5)),
    case("index_int_ellipsis", lambda m, F, x: x[..., 1], R(2, 3, 4)),
    case("index_list_dup", lambda m, F, x: x[[0, 2, 0]], R(4, 5)),
    case("index_tensor", lambda m, F, x, i: x[i], R(4, 5), Idx((6,), 4)),
    case("index_tensor_pair", lambda m, F, x, i, j: x[i, j], R(4, 5), Idx((6,), 4), Idx((6,), 5)),
    case("index_mask", lambda m, F, x, k: x[k], R(4, 5), Mask(4, 5)),
    # losses
    case("mse_mean", lambda m, F, x, y: F.mse_loss(x, y), R(4, 3), R(4, 3)),
    case("mse_none", lambda m, F, x, y: F.mse_loss(x, y, reduction="none"), R(4, 3), R(4, 3)),
    case("l1_sum", lambda m, F, x, y: F.l1_loss(x, y, reduction="sum"), R(4, 3), R(4, 3)),
    case("cross_entropy", lambda m, F, x, t: F.cross_entropy(x, t), R(5, 4), Idx((5,), 4)),
    case(
        "cross_entropy_none",
        lambda m, F, x, t: F.cross_entropy(x, t, reduction="none"),
        R(5, 4),
        Idx((5,), 4),
    ),
    case(
        "binary_cross_entropy",
        lambda m, F, p, t: F.binary_cross_entropy(p, t, reduction="sum"),
        Prob(4, 3),
        Prob(4, 3, grad=False),
    ),
    case("linear", lambda m, F, x, w, b: F.linear(x, w, b), R(5, 3), R(4, 3), R(4)),
    case(
        "composite",
        lambda m, F, x, w, t: F.cross_entropy(m.tanh(x @ w).softmax(-1) * 3.0, t),
        R(5, 3),
        R(3, 4),
        Idx((5,), 4),
    ),
]


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_gradcheck(name, fn, specs):
    assert gradcheck_case(name, fn, specs) is True


def _square_function(m, correct):
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2.0 * x if correct else g * x

    return Square


def _input():
    a = np.random.default_rng(0).standard_normal((3, 4))
    return eg.tensor(a, dtype=eg.float64, requires_grad=True)


def test_custom_function_correct_backward_passes():
    square = _square_function(eg, correct=True)
    assert eg.autograd.gradcheck(square.apply, (_input(),)) is True


def test_custom_function_wrong_backward_raises():
    square = _square_function(eg, correct=False)
    with pytest.raises(RuntimeError):
        eg.autograd.gradcheck(square.apply, (_input(),))


def test_custom_function_forward_and_grad():
    square = _square_function(eg, correct=True)
    x = _input()
    out = square.apply(x)
    out.backward(eg.tensor(np.ones((3, 4)), dtype=eg.float64))
    xv = x.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), xv * xv, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * xv, rtol=1e-12)


def test_gradcheck_tolerates_keyword_args():
    x = _input()
    assert eg.autograd.gradcheck(lambda t: t.exp(), (x,), eps=1e-6, atol=1e-5, rtol=1e-3) is True
