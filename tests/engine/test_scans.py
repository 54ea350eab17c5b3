"""reduce.py / scans.py / sorting.py against torch: reductions (prod, all/any, logsumexp, norm,
std_mean, var_mean, count_nonzero, aminmax), scans (cumsum, cumprod, cummax/cummin,
logcumsumexp) and the sorting ops (sort, argsort, topk, kthvalue, median, mode); float64 inputs,
random upstream gradients, every leaf's .grad, grad_fn names, errors word for word, gradcheck."""

import numpy as np
import pytest
import torch
from _torch_compare import (
    NZ,
    D,
    Fixed,
    R,
    assert_same_error,
    case,
    compare_with_torch,
    eg,
    f32,
    grad_fn_name,
    make_tensor,
    sample,
    seed_for,
)

ZEROS = Fixed([[1.5, 0.0, -2.0, 0.5], [0.0, 3.0, 0.0, -1.0], [0.7, -1.2, 2.0, 1.1]])


def _vals(t):
    return t.values if hasattr(t, "values") else t[0]


CASES = [
    # prod
    case("prod_all", lambda m, F, x: x.prod(), NZ(3, 4)),
    case("prod_dim", lambda m, F, x: m.prod(x, 1), NZ(3, 4)),
    case("prod_dim_neg_keep", lambda m, F, x: x.prod(-2, keepdim=True), NZ(2, 3, 4)),
    case("prod_zeros_all", lambda m, F, x: x.prod(), ZEROS),
    case("prod_zeros_dim0", lambda m, F, x: x.prod(0), ZEROS),
    case("prod_zeros_dim1", lambda m, F, x: x.prod(1), ZEROS),
    case("prod_scalar", lambda m, F, x: x.prod(), R()),
    case("prod_scalar_dim", lambda m, F, x: x.prod(0), R()),
    case("prod_dtype", lambda m, F, x: x.prod(1, dtype=m.float64), f32(NZ(3, 4))),
    case("prod_empty", lambda m, F, x: x.prod(1), R(3, 0)),
    # logsumexp
    case("logsumexp", lambda m, F, x: m.logsumexp(x, 1), R(3, 4)),
    case("logsumexp_tuple_keep", lambda m, F, x: x.logsumexp((0, -1), keepdim=True), R(2, 3, 4)),
    case("logsumexp_scalar", lambda m, F, x: x.logsumexp(0), R()),
    case("logsumexp_big", lambda m, F, x: (x * 800).logsumexp(-1), R(3, 4)),
    # norm
    case("norm_default", lambda m, F, x: x.norm(), R(3, 4)),
    case("norm_fro_dim", lambda m, F, x: m.norm(x, "fro", dim=1), R(3, 4)),
    case("norm_1", lambda m, F, x: x.norm(1, dim=-1, keepdim=True), NZ(3, 4)),
    case("norm_inf", lambda m, F, x: x.norm(float("inf"), dim=0), D(3, 4)),
    case("norm_ninf", lambda m, F, x: x.norm(float("-inf")), D(3, 4)),
    case("norm_0", lambda m, F, x: x.norm(0, dim=1), ZEROS),
    case("norm_3", lambda m, F, x: x.norm(3, dim=(0, 1)), NZ(3, 4)),
    case("norm_half", lambda m, F, x: x.norm(0.5, dim=1), NZ(3, 4)),
    case("norm_2_dims", lambda m, F, x: x.norm(2, dim=(0, 2)), R(2, 3, 4)),
    case("norm_scalar", lambda m, F, x: x.norm(), NZ()),
    case(
        "norm_zero_row",
        lambda m, F, x: (x * m.tensor([[0.0], [1.0], [1.0]], dtype=m.float64)).norm(dim=1),
        R(3, 4),
    ),
    case("norm_dtype", lambda m, F, x: x.norm(dtype=m.float64), f32(R(3, 4))),
    # std_mean / var_mean (both outputs get a gradient)
    case("std_mean", lambda m, F, x: _both(m.std_mean(x)), R(3, 4)),
    case("std_mean_dim", lambda m, F, x: _both(m.std_mean(x, 1, keepdim=True)), R(3, 4)),
    case("std_mean_unbiased", lambda m, F, x: _both(m.std_mean(x, -1, unbiased=False)), R(2, 3, 4)),
    case("var_mean", lambda m, F, x: _both(m.var_mean(x, dim=(0, 2))), R(2, 3, 4)),
    case("var_mean_corr", lambda m, F, x: _both(m.var_mean(x, 0, correction=2)), R(4, 3)),
    case("var_mean_only_var", lambda m, F, x: m.var_mean(x, 1)[0], R(3, 4)),
    case("std_mean_only_mean", lambda m, F, x: m.std_mean(x, 1)[1], R(3, 4)),
    # aminmax
    case("aminmax", lambda m, F, x: _both(m.aminmax(x)), D(3, 4)),
    case("aminmax_dim", lambda m, F, x: _both(x.aminmax(dim=-1, keepdim=True)), D(3, 4)),
    case("aminmax_max", lambda m, F, x: x.aminmax(dim=0).max, D(3, 4)),
    case(
        "aminmax_ties",
        lambda m, F, x: _both(x.aminmax()),
        Fixed([[1.0, 2.0, 2.0], [1.0, 0.5, 0.0]]),
    ),
    # cumsum / cumprod
    case("cumsum", lambda m, F, x: x.cumsum(1), R(3, 4)),
    case("cumsum_neg", lambda m, F, x: m.cumsum(x, -3), R(2, 3, 4)),
    case("cumsum_scalar", lambda m, F, x: x.cumsum(0), R()),
    case("cumsum_dtype", lambda m, F, x: x.cumsum(0, dtype=m.float64), f32(R(3, 4))),
    case("cumprod", lambda m, F, x: x.cumprod(1), NZ(3, 4)),
    case("cumprod_zeros", lambda m, F, x: x.cumprod(1), ZEROS),
    case("cumprod_zeros_dim0", lambda m, F, x: m.cumprod(x, 0), ZEROS),
    case("cumprod_scalar", lambda m, F, x: x.cumprod(-1), R()),
    # cummax / cummin
    case("cummax", lambda m, F, x: x.cummax(1).values, D(3, 5)),
    case("cummax_idx", lambda m, F, x: x.cummax(0).indices, D(4, 3)),
    case("cummin", lambda m, F, x: m.cummin(x, -1)[0], D(2, 3, 4)),
    case("cummin_idx", lambda m, F, x: x.cummin(1)[1], D(3, 5)),
    case(
        "cummax_ties_idx",
        lambda m, F, x: x.cummax(1).indices,
        Fixed([[1.0, 1.0, 0.0, 1.0], [2.0, 1.0, 2.0, 3.0]]),
    ),
    case(
        "cummin_ties_idx",
        lambda m, F, x: x.cummin(1).indices,
        Fixed([[1.0, 1.0, 0.0, 0.0], [2.0, 1.0, 2.0, 1.0]]),
    ),
    case("cummax_scalar", lambda m, F, x: x.cummax(0).values, R()),
    # logcumsumexp
    case("logcumsumexp", lambda m, F, x: x.logcumsumexp(1), R(3, 4)),
    case("logcumsumexp_neg", lambda m, F, x: m.logcumsumexp(x, -3), R(2, 3, 4)),
    case("logcumsumexp_scalar", lambda m, F, x: x.logcumsumexp(0), R()),
    # a large spread: shifting by the slice's max gave 0.0169 for [0, 100] and an inf gradient
    case("logcumsumexp_spread", lambda m, F, x: x.logcumsumexp(0), Fixed([0.0, 100.0])),
    case("logcumsumexp_wide", lambda m, F, x: (x * 40).logcumsumexp(1), R(3, 6)),
    case(
        "logcumsumexp_neg_inf",
        lambda m, F, x: (x + m.tensor([0.0, -float("inf"), 0.0], dtype=m.float64)).logcumsumexp(0),
        Fixed([-300.0, 5.0, 400.0]),
    ),
    # sort family
    case("sort", lambda m, F, x: x.sort().values, D(3, 5)),
    case("sort_idx", lambda m, F, x: x.sort(0)[1], D(3, 5)),
    case("sort_desc", lambda m, F, x: m.sort(x, dim=-2, descending=True).values, D(2, 4, 3)),
    case(
        "sort_stable_ties",
        lambda m, F, x: x.sort(stable=True).indices,
        Fixed([[3.0, 1.0, 3.0, 2.0, 1.0]]),
    ),
    case(
        "sort_desc_stable_ties",
        lambda m, F, x: x.sort(descending=True, stable=True).indices,
        Fixed([[3.0, 1.0, 3.0, 2.0, 1.0]]),
    ),
    case("sort_scalar", lambda m, F, x: x.sort().values, R()),
    case("argsort", lambda m, F, x: x.argsort(), D(3, 5)),
    case("argsort_desc", lambda m, F, x: m.argsort(x, 0, descending=True), D(3, 5)),
    case("topk", lambda m, F, x: x.topk(2).values, D(3, 5)),
    case("topk_idx", lambda m, F, x: x.topk(3, dim=0).indices, D(4, 5)),
    case("topk_smallest", lambda m, F, x: m.topk(x, 2, -2, largest=False).values, D(2, 4, 3)),
    case("topk_unsorted", lambda m, F, x: x.topk(3, sorted=False).values.sort().values, D(3, 5)),
    case("topk_zero", lambda m, F, x: x.topk(0).values, D(3, 5)),
    case("topk_scalar", lambda m, F, x: x.topk(1).values, R()),
    case("kthvalue", lambda m, F, x: x.kthvalue(2).values, D(3, 5)),
    case("kthvalue_keep", lambda m, F, x: _both(m.kthvalue(x, 3, 0, keepdim=True)), D(4, 3)),
    case("kthvalue_scalar", lambda m, F, x: x.kthvalue(1).values, R()),
    case("median", lambda m, F, x: x.median(), D(3, 5)),
    case("median_even", lambda m, F, x: x.median(), D(2, 4)),
    case("median_ties", lambda m, F, x: x.median(), Fixed([1.0, 2.0, 2.0, 3.0, 2.0])),
    case("median_dim", lambda m, F, x: x.median(1).values, D(3, 4)),
    case("median_dim_idx", lambda m, F, x: m.median(x, 0, keepdim=True).indices, D(4, 3)),
    case(
        "mode",
        lambda m, F, x: x.mode().values,
        Fixed([[3.0, 1.0, 3.0, 1.0, 2.0], [1.0, 2.0, 2.0, 5.0, 2.0]]),
    ),
    case(
        "mode_idx",
        lambda m, F, x: x.mode(1).indices,
        Fixed([[3.0, 1.0, 3.0, 1.0, 2.0], [1.0, 2.0, 2.0, 5.0, 2.0]]),
    ),
    case(
        "mode_dim0_keep",
        lambda m, F, x: _both(m.mode(x, 0, keepdim=True)),
        Fixed([[3.0, 1.0], [1.0, 1.0], [3.0, 4.0]]),
    ),
]


def _both(pair):
    """Differentiable outputs of a pair, joined so one upstream gradient covers both (an
    integer second output is only compared through the first)."""
    a, b = pair
    if not b.dtype.is_floating_point:
        return a * 1.0 + b.to(a.dtype) * 0.0 if a.requires_grad else a
    return a * 2.0 + b * 3.0 if a.shape == b.shape else a.sum() * 2.0 + b.sum() * 3.0


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


NAMES = [
    ("x.prod()", "ProdBackward0"),
    ("x.prod(1)", "ProdBackward1"),
    ("x.logsumexp(1)", "LogsumexpBackward0"),
    ("x.norm()", "LinalgVectorNormBackward0"),
    ("x.norm(1, dim=0)", "LinalgVectorNormBackward0"),
    ("m.std_mean(x)[0]", "StdMeanBackward0"),
    ("m.std_mean(x)[1]", "StdMeanBackward0"),
    ("m.var_mean(x, 1)[1]", "VarMeanBackward0"),
    ("x.aminmax().min", "AminmaxBackward0"),
    ("x.cumsum(0)", "CumsumBackward0"),
    ("x.cumprod(0)", "CumprodBackward0"),
    ("x.cummax(0).values", "CummaxBackward0"),
    ("x.cummin(0).values", "CumminBackward0"),
    ("x.logcumsumexp(0)", "LogcumsumexpBackward0"),
    ("x.sort().values", "SortBackward0"),
    ("x.topk(2).values", "TopkBackward0"),
    ("x.kthvalue(2).values", "KthvalueBackward0"),
    ("x.median()", "MedianBackward0"),
    ("x.median(0).values", "MedianBackward1"),
    ("x.mode(0).values", "ModeBackward0"),
]


@pytest.mark.parametrize("expr, expected", NAMES, ids=[e for e, _ in NAMES])
def test_grad_fn_names(expr, expected):
    for m in (torch, eg):
        x = m.tensor(np.arange(12.0).reshape(3, 4) - 5.5, dtype=m.float64, requires_grad=True)
        assert grad_fn_name(eval(expr, {"m": m, "x": x})) == expected


def test_output_nr_of_pairs():
    for m in (torch, eg):
        x = m.tensor([[1.0, 2.0], [4.0, 3.0]], dtype=m.float64, requires_grad=True)
        s, mu = m.std_mean(x, 0)
        assert mu.output_nr == 1 and s.output_nr == 0
        lo, hi = x.aminmax()
        assert hi.output_nr == 1


DTYPES = [
    "m.tensor([[1, 2], [3, 4]]).prod()",
    "m.tensor([[1, 2], [3, 4]]).prod(1)",
    "m.tensor([True, True]).prod()",
    "m.tensor([[1, 2], [3, 4]]).prod(dtype=m.float64)",
    "m.tensor([[1, 0], [3, 4]]).all()",
    "m.tensor([[1, 0], [3, 4]]).any(1, keepdim=True)",
    "m.tensor([[1.0, 0.0], [3.0, 4.0]]).all(dim=(0, 1))",
    "m.tensor([[1, 0], [3, 4]], dtype=m.uint8).all()",
    "m.tensor([]).all()",
    "m.tensor([]).any()",
    "m.tensor(2.0).all(0)",
    "m.tensor([[1, 2], [3, 4]]).logsumexp(1)",
    "m.tensor([[1, 2], [3, 4]]).cumsum(0)",
    "m.tensor([True, False, True]).cumsum(0)",
    "m.tensor([[1, 2], [3, 4]]).cumprod(1)",
    "m.tensor([[1, 2], [3, 4]]).cumsum(0, dtype=m.float32)",
    "m.tensor([[0, 1], [2, 0]]).count_nonzero()",
    "m.tensor([[0, 1], [2, 0]]).count_nonzero((0, 1))",
    "m.count_nonzero(m.tensor([[0, 1], [2, 0.5]]), dim=-1)",
    "m.tensor(3.0).count_nonzero()",
    "m.tensor([3, 1, 3, 2]).sort(stable=True).indices",
    "m.tensor([3, 1, 3, 2]).argsort(descending=True, stable=True)",
    "m.tensor([3.0, float('nan'), 1.0]).sort().indices",
    "m.tensor([3.0, float('nan'), 1.0]).sort(descending=True).indices",
    "m.tensor([2, 1, 2, 0]).cummin(0).indices",
    "m.tensor([1, 1, 1]).cummax(0).indices",
    "m.tensor([3.0, 1.0, 3.0, 2.0]).median()",
    "m.tensor([]).median()",
    "m.tensor([3, 1, 3, 1, 2]).mode().indices",
    "m.tensor([3, 1, 3, 1, 2]).mode().values",
    "m.tensor([[1, 5], [4, 2]]).topk(1).indices",
    "m.tensor([[1.0, 5.0], [4.0, 2.0]]).aminmax(dim=0).min",
    "m.tensor(2.0).aminmax().max",
    "m.tensor([-0.0, 0.0, 2.0]).norm(0)",
    "m.tensor([[1.0, 2.0]]).norm(p=2, dim=())",
    "m.std_mean(m.tensor([1.0, 2.0]))[0]",
    "m.var_mean(m.tensor([1.0, 2.0, 4.0]), True)[0]",
    "m.var_mean(m.tensor([1.0]))[0]",
    "m.tensor([[1.0, float('-inf')]]).logsumexp(1)",
    "m.tensor([[float('-inf'), float('-inf')]]).logsumexp(1)",
    "m.tensor([3, 1, 2]).kthvalue(2).values",
]


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@pytest.mark.parametrize("expr", DTYPES)
def test_values_and_dtypes(expr):
    want = eval(expr, {"m": torch})
    got = eval(expr, {"m": eg})
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, equal_nan=True)


def test_return_types():
    x = eg.tensor([[3.0, 1.0, 2.0]])
    for r in (x.sort(), x.topk(2), x.kthvalue(1), x.cummax(1), x.cummin(1), x.median(1), x.mode(1)):
        values, indices = r
        assert values is r.values and indices is r.indices and r[0] is values
        assert indices.dtype == eg.int64
    assert type(x.sort()).__name__ == "sort" and type(x.topk(1)).__name__ == "topk"
    lo, hi = x.aminmax()
    assert lo is x.aminmax().min or float(lo) == 1.0 and float(hi) == 3.0
    s, mu = eg.std_mean(x)
    assert isinstance(eg.std_mean(x), tuple)


ERRORS = [
    "x.prod(5)",
    "x.sort(5)",
    "x.cumsum(-3)",
    "xi.norm()",
    "x.norm(dtype=m.float32)",
    "m.tensor([]).norm(float('inf'))",
    "m.tensor([]).norm(-float('inf'))",
    "m.std_mean(xi)",
    "m.var_mean(xi)",
    "x.topk(5)",
    "x.topk(-1)",
    "x.kthvalue(5)",
    "x.kthvalue(0, 0)",
    "xi.logcumsumexp(0)",
    "m.tensor([]).aminmax()",
    "m.zeros(2, 0).median(1)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors(expr):
    assert_same_error(
        expr,
        lambda m: {"m": m, "x": m.ones(3, 4, dtype=m.float64), "xi": m.ones(3, 4, dtype=m.int64)},
    )


def test_prod_double_backward_with_zero():
    outs = []
    for m in (torch, eg):
        x = m.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, -2.0]], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(x.prod(1).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        outs.append(gg.detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)


def test_cumprod_double_backward_with_zero():
    outs = []
    for m in (torch, eg):
        x = m.tensor(
            [[2.0, 0.0, 3.0, 0.5], [1.0, 4.0, -2.0, 0.0]], dtype=m.float64, requires_grad=True
        )
        (g,) = m.autograd.grad(
            (x.cumprod(1) * m.tensor([1.0, -2.0, 0.5, 3.0], dtype=m.float64)).sum(),
            x,
            create_graph=True,
        )
        (gg,) = m.autograd.grad((g * g).sum(), x)
        outs.append((g.detach().numpy(), gg.detach().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-12)


def test_cumsum_inplace():
    for m in (torch, eg):
        x = m.tensor([1.0, 2.0, 3.0])
        x.cumsum_(0)
        assert x.tolist() == [1.0, 3.0, 6.0]


GRADCHECK = [
    case("prod", lambda m, x: x.prod(), NZ(3, 4)),
    case("prod_dim", lambda m, x: x.prod(-1, keepdim=True), NZ(3, 4)),
    case("prod_zero", lambda m, x: x.prod(1), ZEROS),
    case("logsumexp", lambda m, x: x.logsumexp((0, 1)), R(3, 4)),
    case("norm2", lambda m, x: x.norm(dim=1), R(3, 4)),
    case("norm1", lambda m, x: x.norm(1), NZ(3, 4)),
    case("norm3", lambda m, x: x.norm(3, dim=0), NZ(3, 4)),
    case("norm_inf", lambda m, x: x.norm(float("inf"), dim=1), D(3, 4)),
    case("std_mean", lambda m, x: m.std_mean(x, 1), R(3, 4)),
    case("var_mean", lambda m, x: m.var_mean(x, 0, correction=0), R(3, 4)),
    case("aminmax", lambda m, x: tuple(x.aminmax(dim=1)), D(3, 4)),
    case("cumsum", lambda m, x: x.cumsum(1), R(3, 4)),
    case("cumprod", lambda m, x: x.cumprod(1), NZ(3, 4)),
    case("cumprod_zero", lambda m, x: x.cumprod(1), ZEROS),
    case("cummax", lambda m, x: x.cummax(0).values, D(3, 4)),
    case("cummin", lambda m, x: x.cummin(1).values, D(3, 4)),
    case("logcumsumexp", lambda m, x: x.logcumsumexp(1), R(3, 4)),
    case("sort", lambda m, x: x.sort(0, descending=True).values, D(3, 4)),
    case("topk", lambda m, x: x.topk(2).values, D(3, 4)),
    case("kthvalue", lambda m, x: x.kthvalue(2, 0).values, D(3, 4)),
    case("median", lambda m, x: x.median(), D(3, 4)),
    case("median_dim", lambda m, x: x.median(1).values, D(3, 4)),
    case("mode", lambda m, x: x.mode(1).values, D(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_gradcheck(name, fn, specs):
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    x = make_tensor(eg, sample(specs[0], rng), specs[0])
    assert eg.autograd.gradcheck(lambda t: fn(eg, t), (x,)) is True


GPU = [
    lambda m, x: x.prod(1),
    lambda m, x: x.logsumexp(0),
    lambda m, x: x.norm(3, dim=1),
    lambda m, x: m.std_mean(x, 1)[0],
    lambda m, x: x.cumsum(1),
    lambda m, x: x.cumprod(0),
    lambda m, x: x.cummax(1).values,
    lambda m, x: x.cummin(1).indices,
    lambda m, x: x.logcumsumexp(1),
    lambda m, x: x.sort(1, descending=True).values,
    lambda m, x: x.topk(2).indices,
    lambda m, x: x.kthvalue(2).values,
    lambda m, x: x.median(0).values,
    lambda m, x: (x > 0).double().mode(1).values,
    lambda m, x: x.aminmax(dim=0).max,
    lambda m, x: x.count_nonzero(0),
]


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("k", range(len(GPU)))
def test_cuda_matches_cpu(k):
    fn = GPU[k]
    a = np.random.default_rng(k).standard_normal((4, 5)) * 2
    outs = []
    for dev in ("cpu", "cuda"):
        x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
        y = fn(eg, x)
        if y.requires_grad:
            y.sum().backward()
        outs.append((y.detach().cpu().numpy(), None if x.grad is None else x.grad.cpu().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-9)
    if outs[0][1] is not None:
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-9)
