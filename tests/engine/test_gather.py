"""gather.py / scatter.py against torch: gather, scatter (src / value), scatter_add,
scatter_reduce (every reduce, include_self), index_select/add/fill/copy, masked_select,
masked_scatter, take, take_along_dim, nonzero, argwhere; float64 inputs, random upstream
gradients, every leaf's .grad, grad_fn names, errors word for word, gradcheck."""

import numpy as np
import pytest
import torch
from _torch_compare import (
    NZ,
    D,
    Fixed,
    Mask,
    R,
    assert_same_error,
    case,
    compare_with_torch,
    eg,
    grad_fn_name,
)


def T(m, values):
    return m.tensor(values, dtype=m.int64)


# index tensors are fixed (not sampled) so the repeats and negative places are deliberate
I2 = [[0, 2, 1, 0], [3, 3, 0, 1], [1, 0, 2, 2]]  # into size 4 along dim 1 (with repeats)
PERM = [[2, 0, 3, 1], [1, 3, 0, 2], [0, 1, 2, 3]]  # no repeats (for scatter)

CASES = [
    # gather
    case("gather", lambda m, F, x: x.gather(1, T(m, I2)), R(3, 4)),
    case("gather_dim0", lambda m, F, x: m.gather(x, 0, T(m, [[0, 2, 1, 0]])), R(3, 4)),
    case("gather_neg_dim_small", lambda m, F, x: x.gather(-1, T(m, [[1, 1], [0, 2]])), R(3, 4)),
    case(
        "gather_3d",
        lambda m, F, x: x.gather(1, T(m, [[[0, 1], [2, 2]], [[1, 0], [0, 0]]])),
        R(2, 3, 4),
    ),
    case("gather_scalar", lambda m, F, x: x.gather(0, T(m, 0)), R()),
    case("gather_scalar_vec", lambda m, F, x: x.gather(0, T(m, [0, 0])), R()),
    case("gather_int32", lambda m, F, x: x.gather(1, T(m, I2).int()), R(3, 4)),
    case("gather_empty", lambda m, F, x: x.gather(0, m.zeros(0, 4, dtype=m.int64)), R(3, 4)),
    # scatter
    case("scatter_src", lambda m, F, x, s: x.scatter(1, T(m, PERM), s), R(3, 4), R(3, 4)),
    case(
        "scatter_src_small",
        lambda m, F, x, s: m.scatter(x, 0, T(m, [[2, 0]]), s),
        R(3, 4),
        R(2, 3, grad=False),
    ),
    case("scatter_value", lambda m, F, x: x.scatter(1, T(m, [[0, 2], [3, 1]]), 2.5), R(3, 4)),
    case("scatter_value_kw", lambda m, F, x: x.scatter(-1, T(m, [[0], [3]]), value=-1.0), R(3, 4)),
    case("scatter_scalar", lambda m, F, x, s: x.scatter(0, T(m, 0), s), R(), R()),
    case(
        "scatter_only_src",
        lambda m, F, x, s: x.detach().scatter(1, T(m, PERM), s),
        R(3, 4),
        R(3, 4),
    ),
    # scatter_add
    case("scatter_add", lambda m, F, x, s: x.scatter_add(1, T(m, I2), s), R(3, 4), R(3, 4)),
    case(
        "scatter_add_small",
        lambda m, F, x, s: m.scatter_add(x, 0, T(m, [[2, 2, 0]]), s),
        R(3, 4),
        R(2, 5, grad=False),
    ),
    case(
        "scatter_add_3d",
        lambda m, F, x, s: x.scatter_add(-1, T(m, [[[0, 0, 1]], [[1, 2, 2]]]), s),
        R(2, 2, 3),
        R(2, 1, 3),
    ),
]

for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        dist = NZ if red == "prod" else D
        CASES.append(
            case(
                f"scatter_reduce_{red}_{inc}",
                lambda m, F, x, s, red=red, inc=inc: x.scatter_reduce(
                    1, T(m, I2), s, red, include_self=inc
                ),
                dist(3, 4),
                dist(3, 4),
            )
        )

ZS = Fixed([[0.0, 2.0, -1.5, 0.5], [1.5, 0.0, 0.0, 3.0], [0.7, 1.2, -0.4, 2.0]])
CASES += [
    case(
        "scatter_reduce_prod_zero_src",
        lambda m, F, x, s: x.scatter_reduce(1, T(m, I2), s, "prod"),
        NZ(3, 4),
        ZS,
    ),
    case(
        "scatter_reduce_prod_zero_self",
        lambda m, F, x, s: x.scatter_reduce(1, T(m, I2), s, "prod"),
        ZS,
        NZ(3, 4),
    ),
    case(
        "scatter_reduce_prod_zero_noself",
        lambda m, F, x, s: x.scatter_reduce(1, T(m, I2), s, "prod", include_self=False),
        NZ(3, 4),
        ZS,
    ),
    case(
        "scatter_reduce_amax_ties",
        lambda m, F, x, s: x.scatter_reduce(1, T(m, [[0, 0, 1]]), s, "amax"),
        Fixed([[1.0, 5.0, 0.0]]),
        Fixed([[1.0, 1.0, 5.0]]),
    ),
    case(
        "scatter_reduce_mean_dim0",
        lambda m, F, x, s: x.scatter_reduce(
            0, T(m, [[0, 1], [0, 0]]), s, "mean", include_self=False
        ),
        R(3, 2),
        R(2, 2),
    ),
    # index_select
    case("index_select", lambda m, F, x: x.index_select(1, T(m, [3, 0, 3])), R(3, 4)),
    case("index_select_neg_dim", lambda m, F, x: m.index_select(x, -3, T(m, [1, 1])), R(2, 3, 4)),
    case("index_select_0d_index", lambda m, F, x: x.index_select(1, T(m, 2)), R(3, 4)),
    case("index_select_scalar", lambda m, F, x: x.index_select(0, T(m, [0])), R()),
    case("index_select_int32", lambda m, F, x: x.index_select(0, T(m, [2, 0]).int()), R(3, 4)),
    # index_add
    case("index_add", lambda m, F, x, s: x.index_add(1, T(m, [0, 2, 0]), s), R(3, 4), R(3, 3)),
    case(
        "index_add_alpha",
        lambda m, F, x, s: m.index_add(x, 0, T(m, [2, 2]), s, alpha=-1.5),
        R(3, 4),
        R(2, 4),
    ),
    case("index_add_0d", lambda m, F, x, s: x.index_add(1, T(m, 1), s), R(3, 4), R(3, 1)),
    case("index_add_scalar", lambda m, F, x, s: x.index_add(0, T(m, [0]), s), R(), R()),
    # index_fill
    case("index_fill", lambda m, F, x: x.index_fill(1, T(m, [0, -1]), 2.0), R(3, 4)),
    case("index_fill_tensor", lambda m, F, x, v: x.index_fill(0, T(m, [1]), v), R(3, 4), R()),
    case(
        "index_fill_only_value",
        lambda m, F, x, v: x.detach().index_fill(-1, T(m, [1, 2]), v),
        R(3, 4),
        R(),
    ),
    # index_copy
    case("index_copy", lambda m, F, x, s: x.index_copy(1, T(m, [3, 0]), s), R(3, 4), R(3, 2)),
    case("index_copy_0d", lambda m, F, x, s: m.index_copy(x, 0, T(m, 1), s), R(3, 4), R(1, 4)),
    # masked_select / masked_scatter
    case("masked_select", lambda m, F, x, k: x.masked_select(k), R(3, 4), Mask(3, 4)),
    case("masked_select_bcast", lambda m, F, x, k: m.masked_select(x, k), R(3, 1), Mask(2, 3, 4)),
    case("masked_select_bcast_mask", lambda m, F, x, k: x.masked_select(k), R(3, 4), Mask(4)),
    case(
        "masked_scatter", lambda m, F, x, k, s: x.masked_scatter(k, s), R(3, 4), Mask(3, 4), R(14)
    ),
    case(
        "masked_scatter_bcast",
        lambda m, F, x, k, s: x.masked_scatter(k, s),
        R(4),
        Mask(3, 4),
        R(3, 5),
    ),
    # take, take_along_dim
    case("take", lambda m, F, x: x.take(T(m, [[0, 11], [-1, 5]])), R(3, 4)),
    case("take_repeat", lambda m, F, x: m.take(x, T(m, [2, 2, -12])), R(3, 4)),
    case("take_scalar", lambda m, F, x: x.take(T(m, 0)), R()),
    case("take_along_dim", lambda m, F, x: x.take_along_dim(T(m, I2), 1), R(3, 4)),
    case(
        "take_along_dim_none", lambda m, F, x: m.take_along_dim(x, T(m, [[0, 5], [11, 2]])), R(3, 4)
    ),
    case(
        "take_along_dim_bcast", lambda m, F, x: x.take_along_dim(T(m, [[[0], [2]]]), -1), R(2, 1, 3)
    ),
    case("take_along_dim_neg", lambda m, F, x: x.take_along_dim(T(m, [[0, -1]]), 1), R(3, 4)),
    case(
        "take_along_dim_argsort",
        lambda m, F, x: x.take_along_dim(x.detach().argsort(0), 0),
        D(3, 4),
    ),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


NAMES = [
    ("x.gather(1, T(m, I2))", "GatherBackward0"),
    ("x.take_along_dim(T(m, I2), 1)", "GatherBackward0"),
    ("x.scatter(1, T(m, PERM), s)", "ScatterBackward0"),
    ("x.scatter(1, T(m, PERM), 2.0)", "ScatterBackward1"),
    ("x.scatter_add(1, T(m, I2), s)", "ScatterAddBackward0"),
    ("x.scatter_reduce(1, T(m, I2), s, 'amax')", "ScatterReduceBackward0"),
    ("x.index_select(1, T(m, [0]))", "IndexSelectBackward0"),
    ("x.index_add(1, T(m, [0]), s[:, :1])", "IndexAddBackward0"),
    ("x.index_fill(1, T(m, [0]), 1.0)", "IndexFillBackward0"),
    ("x.index_fill(1, T(m, [0]), s[0, 0])", "IndexFillBackward1"),
    ("x.index_copy(1, T(m, [0]), s[:, :1])", "IndexCopyBackward0"),
    ("x.masked_select(x > 0)", "MaskedSelectBackward0"),
    ("x.masked_scatter(x > 0, s)", "MaskedScatterBackward0"),
    ("x.take(T(m, [0]))", "TakeBackward0"),
]


@pytest.mark.parametrize("expr, expected", NAMES, ids=[e for e, _ in NAMES])
def test_grad_fn_names(expr, expected):
    for m in (torch, eg):
        x = m.tensor(np.arange(12.0).reshape(3, 4) - 5.5, dtype=m.float64, requires_grad=True)
        s = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        env = {"m": m, "x": x, "s": s, "T": T, "I2": I2, "PERM": PERM}
        assert grad_fn_name(eval(expr, env)) == expected


VALUES = [
    "m.tensor([[0, 1], [2, 0]]).nonzero()",
    "m.nonzero(m.tensor([[0.0, 1.5], [2.0, 0.0]]), as_tuple=True)",
    "m.tensor([[[True, False]], [[False, True]]]).nonzero()",
    "m.tensor(3.0).nonzero()",
    "m.tensor(0.0).nonzero()",
    "m.tensor(3.0).nonzero(as_tuple=True)",
    "m.tensor(0.0).nonzero(as_tuple=True)",
    "m.zeros(2, 3).nonzero()",
    "m.tensor([[0, 1], [2, 0]]).argwhere()",
    "m.argwhere(m.tensor(2))",
    "m.tensor([[1, 2], [3, 4]]).scatter(1, T(m, [[1], [0]]), 7)",
    "m.tensor([[1, 2], [3, 4]]).scatter(1, T(m, [[1], [0]]), 1.5)",
    "A.scatter_reduce(1, T(m, [[1, 1], [0, 0]]), m.tensor([[5, 3], [2, 6]]), 'mean')",
    "A.scatter_reduce(1, T(m, [[1, 1], [0, 0]]), B, 'amin', include_self=False)",
    "A.scatter_reduce(0, T(m, [[1, 1], [1, 0]]), -B, 'prod')",
    "A.scatter_reduce(0, T(m, [[1, 1], [1, 0]]), B, 'amax', include_self=False)",
    "m.tensor([[1, 2], [3, 4]]).index_fill(1, T(m, [0]), 2.5)",
    "m.tensor([[True, False]]).masked_select(m.tensor([[True, True]]))",
    "m.tensor([1.0, 2.0]).index_add(0, T(m, [1, 1]), m.tensor([1.0, 2.0]))",
]


@pytest.mark.parametrize("expr", VALUES)
def test_values(expr):
    def env(m):
        return {"m": m, "T": T, "A": m.tensor([[1, 2], [3, 4]]), "B": m.tensor([[5, 3], [2, 6]])}

    want = eval(expr, env(torch))
    got = eval(expr, env(eg))
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
    else:
        want, got = (want,), (got,)
    for w, g in zip(want, got):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())


ERRORS = [
    "x.gather(1, T(m, [[0, 1.5]]).double())",
    "x.gather(1, T(m, [[0, 4]]))",
    "x.gather(1, T(m, [[0, -1]]))",
    "x.gather(1, m.zeros(4, 1, dtype=m.int64))",
    "x.gather(1, m.zeros(3, dtype=m.int64))",
    "x.gather(2, m.zeros(3, 1, dtype=m.int64))",
    "x.scatter(1, T(m, [[0, 4]]), x)",
    "x.scatter(1, T(m, [[0, 1]]), x.float())",
    "x.scatter(1, T(m, [[0, 1]]), x[:1, :1])",
    "x.scatter(1, T(m, [[0, 1]]).double(), 1.0)",
    "x.scatter(1, m.zeros(4, 1, dtype=m.int64), 1.0)",
    "x.scatter_add(1, T(m, [[0, 1]]), 1.0)",
    "x.scatter_add(1, T(m, [[0, 5]]), x)",
    "x.scatter_add(1, m.zeros(4, 1, dtype=m.int64), x)",
    "x.scatter_reduce(1, T(m, [[0, 1]]), x, 'multiply')",
    "x.scatter_reduce(1, T(m, [[0, 5]]), x, 'sum')",
    "x.index_select(1, T(m, [0, 4]))",
    "x.index_select(1, T(m, [0, -1]))",
    "x.index_select(1, T(m, [[0, 1]]))",
    "x.index_select(1, T(m, [0, 1]).double())",
    "m.tensor(3.0).index_select(0, T(m, [0, 0]))",
    "x.index_add(1, T(m, [0, 4]), m.ones(3, 2, dtype=m.float64))",
    "x.index_add(1, T(m, [0, -1]), m.ones(3, 2, dtype=m.float64))",
    "x.index_add(1, T(m, [0, 1]), m.ones(3, 3, dtype=m.float64))",
    "x.index_add(1, T(m, [0, 1]), m.ones(2, 2, dtype=m.float64))",
    "x.index_add(1, T(m, [0, 1]), m.ones(3, 2))",
    "x.index_add(1, T(m, [0, 1]).double(), m.ones(3, 2, dtype=m.float64))",
    "x.index_add(1, T(m, [[0, 1]]), m.ones(3, 2, dtype=m.float64))",
    "x.index_add(1, T(m, 1), m.ones(3, dtype=m.float64))",
    "m.tensor(2.0).index_add(0, T(m, [0, 0]), m.ones(2))",
    "x.index_fill(1, T(m, [0, 4]), 1.0)",
    "x.index_fill(1, T(m, [0, 1]).int(), 1.0)",
    "x.index_fill(1, T(m, [0, 1]), m.ones(2))",
    "x.index_fill(1, T(m, [[0, 1]]), 1.0)",
    "x.index_copy(1, T(m, [0, 4]), m.ones(3, 2, dtype=m.float64))",
    "x.index_copy(1, T(m, [0, -1]), m.ones(3, 2, dtype=m.float64))",
    "x.index_copy(1, T(m, [0, 1]), m.ones(3, 3, dtype=m.float64))",
    "x.index_copy(1, T(m, [0, 1]).int(), m.ones(3, 2, dtype=m.float64))",
    "x.index_copy(1, T(m, [0, 1]), m.ones(3, 2))",
    "x.index_copy(1, T(m, [[0, 1]]), m.ones(3, 2, dtype=m.float64))",
    "x.index_copy(1, T(m, 1), m.ones(3, dtype=m.float64))",
    "x.index_copy(1, T(m, [0, 1]), m.ones(2, 2, dtype=m.float64))",
    "m.ones(2, 3, 4).index_copy(1, T(m, [0, 1]), m.ones(2, 2, 5))",
    "x.masked_select(m.ones(3, 4))",
    "x.masked_select(m.ones(2, 4, dtype=m.bool))",
    "x.masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(5, dtype=m.float64))",
    "x.masked_scatter(m.ones(3, 4), m.ones(15, dtype=m.float64))",
    "x.masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(15))",
    "x.take(T(m, [0, 12]))",
    "x.take(T(m, [0, -13]))",
    "x.take(T(m, [0, 1]).int())",
    "x.take_along_dim(T(m, [[0, 1]]).int(), 1)",
    "x.take_along_dim(m.zeros(1, 2, 2, dtype=m.int64), 1)",
    "x.take_along_dim(m.zeros(2, 2, dtype=m.int64), 1)",
    "x.take_along_dim(m.zeros(1, 2, dtype=m.int64), 5)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors(expr):
    assert_same_error(expr, lambda m: {"m": m, "x": m.ones(3, 4, dtype=m.float64), "T": T})


def test_inplace_forms():
    for m in (torch, eg):
        x = m.zeros(2, 3, dtype=m.float64)
        assert x.scatter_(1, T(m, [[2], [0]]), 1.0) is x
        x.scatter_add_(1, T(m, [[0], [0]]), m.ones(2, 1, dtype=m.float64))
        x.index_add_(0, T(m, [1]), m.ones(1, 3, dtype=m.float64))
        x.index_fill_(1, T(m, [1]), -1.0)
        x.index_copy_(0, T(m, [0]), m.full((1, 3), 5.0, dtype=m.float64))
        x.scatter_reduce_(1, T(m, [[2]]), m.full((1, 1), 2.0, dtype=m.float64), "prod")
        x.masked_scatter_(x < 0, m.tensor([7.0], dtype=m.float64))
        if m is torch:
            want = x.numpy().copy()
    np.testing.assert_array_equal(x.numpy(), want)


def test_inplace_scatter_grad():
    grads = []
    for m in (torch, eg):
        a = m.tensor([[1.0, 2.0, 3.0]], dtype=m.float64, requires_grad=True)
        s = m.tensor([[4.0, 5.0]], dtype=m.float64, requires_grad=True)
        y = a * 2
        y.scatter_(1, T(m, [[2, 0]]), s)
        assert grad_fn_name(y) == "ScatterBackward0"
        (y * m.tensor([[1.0, 2.0, 3.0]], dtype=m.float64)).sum().backward()
        grads.append((a.grad.numpy(), s.grad.numpy()))
    for w, g in zip(*grads):
        np.testing.assert_array_equal(g, w)


def test_gather_double_backward():
    outs = []
    for m in (torch, eg):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        y = (x.gather(1, T(m, [[0, 0], [2, 1]])) ** 2).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad((g * x).sum(), x)
        outs.append(gg.detach().numpy())
    np.testing.assert_allclose(outs[1], outs[0])


GRADCHECK = [
    ("gather", lambda x: x.gather(1, T(eg, I2)), [R(3, 4)]),
    ("scatter", lambda x, s: x.scatter(0, T(eg, [[2, 0, 1]]), s), [R(3, 4), R(2, 3)]),
    ("scatter_value", lambda x: x.scatter(1, T(eg, [[0], [3]]), 1.0), [R(3, 4)]),
    ("scatter_add", lambda x, s: x.scatter_add(1, T(eg, I2), s), [R(3, 4), R(3, 4)]),
    ("index_select", lambda x: x.index_select(0, T(eg, [2, 0, 2])), [R(3, 4)]),
    ("index_add", lambda x, s: x.index_add(1, T(eg, [1, 1]), s, alpha=2.0), [R(3, 4), R(3, 2)]),
    ("index_fill", lambda x, v: x.index_fill(1, T(eg, [1, 3]), v), [R(3, 4), R()]),
    ("index_copy", lambda x, s: x.index_copy(0, T(eg, [2]), s), [R(3, 4), R(1, 4)]),
    ("masked_select", lambda x: x.masked_select(eg.tensor([True, False, True, True])), [R(3, 4)]),
    (
        "masked_scatter",
        lambda x, s: x.masked_scatter(eg.tensor([True, False, True]), s),
        [R(2, 3), R(5)],
    ),
    ("take", lambda x: x.take(T(eg, [[1, -1], [1, 4]])), [R(3, 4)]),
    ("take_along_dim", lambda x: x.take_along_dim(T(eg, [[0], [2], [1]]), 1), [R(3, 4)]),
]
for red in ("sum", "prod", "mean", "amax", "amin"):
    for inc in (True, False):
        GRADCHECK.append(
            (
                f"scatter_reduce_{red}_{inc}",
                lambda x, s, red=red, inc=inc: x.scatter_reduce(
                    1, T(eg, I2), s, red, include_self=inc
                ),
                [NZ(3, 4) if red == "prod" else D(3, 4), NZ(3, 4) if red == "prod" else D(3, 4)],
            )
        )


@pytest.mark.parametrize("name, fn, specs", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, specs):
    from _torch_compare import make_tensor, sample, seed_for

    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    assert eg.autograd.gradcheck(fn, tuple(tensors)) is True


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize(
    "expr",
    [
        "x.gather(1, T(I2))",
        "x.scatter(1, T(PERM), s)",
        "x.scatter_add(1, T(I2), s)",
        "x.scatter_reduce(1, T(I2), s, 'prod')",
        "x.scatter_reduce(1, T(I2), s, 'amax', include_self=False)",
        "x.scatter_reduce(1, T(I2), s, 'amin')",
        "x.scatter_reduce(1, T(I2), s, 'mean')",
        "x.index_select(1, T([3, 0, 3]))",
        "x.index_add(0, T([2, 2, 0]), s)",
        "x.index_fill(1, T([0, -1]), 2.0)",
        "x.index_copy(0, T([2, 0, 1]), s)",
        "x.masked_select(x > 0)",
        "x.masked_scatter(x > 0, s)",
        "x.take(T([0, -1, 5]))",
        "x.take_along_dim(T(I2), 1)",
        "x.nonzero().double()",
        "x.scatter(0, T([[2, 0]]), s)",
    ],
)
def test_cuda_matches_cpu(expr):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    outs = []
    for dev in ("cpu", "cuda"):
        x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
        s = eg.tensor(b, dtype=eg.float64, device=dev, requires_grad=True)
        env = {"x": x, "s": s, "I2": I2, "PERM": PERM}
        env["T"] = lambda v, dev=dev: eg.tensor(v, dtype=eg.int64, device=dev)
        y = eval(expr, env)
        if y.requires_grad:
            y.sum().backward()
        grads = [None if t.grad is None else t.grad.cpu().numpy() for t in (x, s)]
        outs.append((y.detach().cpu().numpy(), grads))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-9)
    for g_gpu, g_cpu in zip(outs[1][1], outs[0][1]):
        assert (g_gpu is None) == (g_cpu is None)
        if g_cpu is not None:
            np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-9)


SCATTER_REDUCE = [
    "x.scatter(1, idx, src, reduce='add')",
    "x.scatter(1, idx, src, reduce='multiply')",
    "x.scatter(1, idx, 2.5, reduce='add')",
    "x.scatter(1, idx, 2.5, reduce='multiply')",
    "x.long().scatter(1, idx, src.long(), reduce='multiply')",
]


@pytest.mark.parametrize("expr", SCATTER_REDUCE)
def test_scatter_with_reduce(expr):
    """scatter's older reduce argument: repeats accumulate; no derivative (backward raises)."""
    import warnings

    def run(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        src = m.tensor([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]])
        idx = m.tensor([[0, 1, 0], [2, 2, 0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = eval(expr, {"x": x, "src": src, "idx": idx})
        err = None
        if y.requires_grad:
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
            err = str(e.value)
        return y.tolist(), err

    assert run(eg) == run(torch)


def test_scatter_reduce_argument_checked():
    for m in (torch, eg):
        with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply."):
            m.ones(3).scatter(0, m.tensor([0]), 1.0, reduce="mean")
