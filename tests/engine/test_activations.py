"""The activation functions (engine/ops/activations.py) and their nn modules
(engine/nn/activation.py) against torch: values, grads, grad_fn names, second derivatives,
in-place forms, error texts, reprs, gradcheck."""

import warnings

import numpy as np
import pytest
import torch
from _torch_compare import (
    NZ,
    ClampSafe,
    Fixed,
    R,
    case,
    compare_with_torch,
    eg,
    eg_F,
    f32,
    grad_fn_name,
    make_tensor,
    run_both,
    sample,
    seed_for,
    to_np,
)

W = Fixed([0.25, -0.1, 0.4])  # prelu weights, one per channel

ACTIVATIONS = [
    case("gelu", lambda m, F, x: F.gelu(x), R(3, 4)),
    case("gelu_wide", lambda m, F, x: F.gelu(x * 6), R(40)),
    case("gelu_tanh", lambda m, F, x: F.gelu(x, approximate="tanh"), R(3, 4)),
    case("silu", lambda m, F, x: F.silu(x), R(3, 4)),
    case("silu_wide", lambda m, F, x: F.silu(x * 30), R(20)),
    case("elu", lambda m, F, x: F.elu(x), NZ(3, 4)),
    case("elu_alpha", lambda m, F, x: F.elu(x, alpha=0.5), NZ(2, 3, 4)),
    case("celu", lambda m, F, x: F.celu(x, 2.0), NZ(3, 4)),
    case("selu", lambda m, F, x: F.selu(x), NZ(3, 4)),
    case("mish", lambda m, F, x: F.mish(x), R(3, 4)),
    case("mish_wide", lambda m, F, x: F.mish(x * 30), R(20)),
    case("softplus", lambda m, F, x: F.softplus(x), R(3, 4)),
    case("softplus_beta", lambda m, F, x: F.softplus(x * 10, beta=2, threshold=5), NZ(30)),
    case("hardtanh", lambda m, F, x: F.hardtanh(x), ClampSafe(3, 4)),
    case("hardtanh_range", lambda m, F, x: F.hardtanh(x, -0.5, 0.5), ClampSafe(3, 4)),
    case("relu6", lambda m, F, x: F.relu6(x * 5), ClampSafe(3, 4)),
    case("hardsigmoid", lambda m, F, x: F.hardsigmoid(x * 4), ClampSafe(3, 4)),
    case("hardswish", lambda m, F, x: F.hardswish(x * 4), ClampSafe(3, 4)),
    case("logsigmoid", lambda m, F, x: F.logsigmoid(x * 20), R(3, 4)),
    case("softsign", lambda m, F, x: F.softsign(x), R(3, 4)),
    case("tanhshrink", lambda m, F, x: F.tanhshrink(x), R(3, 4)),
    case("glu", lambda m, F, x: F.glu(x), R(3, 4)),
    case("glu_dim0", lambda m, F, x: F.glu(x, 0), R(4, 3)),
    case("glu_neg_dim", lambda m, F, x: F.glu(x, -2), R(2, 6, 3)),
    case("prelu_one", lambda m, F, x, w: F.prelu(x, w), NZ(3, 4), Fixed([0.25])),
    case("prelu_channels", lambda m, F, x, w: F.prelu(x, w), NZ(2, 3, 4), W),
    case("prelu_method", lambda m, F, x, w: x.prelu(w), NZ(4, 3), W),
    case("prelu_torch", lambda m, F, x, w: m.prelu(x, w), NZ(5), Fixed([0.3])),
    case("prelu_0d_weight", lambda m, F, x, w: F.prelu(x, w), NZ(2, 3), Fixed(0.3)),
    case("softmin", lambda m, F, x: F.softmin(x, 1), R(3, 4)),
    case("softmin_neg", lambda m, F, x: F.softmin(x, dim=-1), R(2, 3, 4)),
    case("normalize", lambda m, F, x: F.normalize(x), R(3, 4)),
    case("normalize_p1", lambda m, F, x: F.normalize(x, p=1, dim=0), NZ(3, 4)),
    case("normalize_p3", lambda m, F, x: F.normalize(x, p=3.0, dim=-1), NZ(2, 3, 4)),
    case("torch_celu", lambda m, F, x: m.celu(x), NZ(3, 4)),
    case("torch_selu", lambda m, F, x: m.selu(x), NZ(3, 4)),
    # 0-d and empty inputs
    case("gelu_0d", lambda m, F, x: F.gelu(x), R()),
    case("elu_0d", lambda m, F, x: F.elu(x), NZ()),
    case("softplus_empty", lambda m, F, x: F.softplus(x), R(0, 3)),
    case("hardswish_empty", lambda m, F, x: F.hardswish(x), R(0)),
    case("mish_0d", lambda m, F, x: F.mish(x), R()),
    # float32
    case("gelu_f32", lambda m, F, x: F.gelu(x), f32(R(3, 4))),
    case("softplus_f32", lambda m, F, x: F.softplus(x), f32(R(3, 4))),
    case("elu_f32", lambda m, F, x: F.elu(x), f32(NZ(3, 4))),
    case("silu_f32", lambda m, F, x: F.silu(x), f32(R(3, 4))),
    # modules
    case("GELU", lambda m, F, x: m.nn.GELU("tanh")(x), R(3, 4)),
    case("SiLU", lambda m, F, x: m.nn.SiLU()(x), R(3, 4)),
    case("ELU", lambda m, F, x: m.nn.ELU(0.3)(x), NZ(3, 4)),
    case("CELU", lambda m, F, x: m.nn.CELU(0.7)(x), NZ(3, 4)),
    case("SELU", lambda m, F, x: m.nn.SELU()(x), NZ(3, 4)),
    case("Mish", lambda m, F, x: m.nn.Mish()(x), R(3, 4)),
    case("Softplus", lambda m, F, x: m.nn.Softplus(2.0, 1.0)(x), NZ(3, 4)),
    case("Hardtanh", lambda m, F, x: m.nn.Hardtanh(-0.5, 0.25)(x), ClampSafe(3, 4)),
    case("ReLU6", lambda m, F, x: m.nn.ReLU6()(x * 5), ClampSafe(3, 4)),
    case("Hardsigmoid", lambda m, F, x: m.nn.Hardsigmoid()(x * 4), ClampSafe(3, 4)),
    case("Hardswish", lambda m, F, x: m.nn.Hardswish()(x * 4), ClampSafe(3, 4)),
    case("LogSigmoid", lambda m, F, x: m.nn.LogSigmoid()(x), R(3, 4)),
    case("Softsign", lambda m, F, x: m.nn.Softsign()(x), R(3, 4)),
    case("Tanhshrink", lambda m, F, x: m.nn.Tanhshrink()(x), R(3, 4)),
    case("GLU", lambda m, F, x: m.nn.GLU(1)(x), R(3, 4)),
    case("Softmin", lambda m, F, x: m.nn.Softmin(0)(x), R(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", ACTIVATIONS)
def test_activation(name, fn, specs):
    compare_with_torch(name, fn, specs)
    _, (_, t_out), (_, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


SECOND = [
    "gelu",
    "gelu_tanh",
    "silu",
    "elu_alpha",
    "celu",
    "selu",
    "mish",
    "softplus",
    "softplus_beta",
    "hardswish",
    "logsigmoid",
    "softsign",
    "tanhshrink",
    "glu",
    "glu_neg_dim",
    "prelu_channels",
    "softmin",
    "normalize",
    "normalize_p3",
]
_BY_NAME = {p.values[0]: p.values for p in ACTIVATIONS}


def _second_derivatives(m, fn, inputs, rng_seed):
    """x.grad of sum(w * d/dx <v, fn(x)>), with create_graph: the second derivative's action."""
    F = torch.nn.functional if m is torch else eg_F
    out = fn(m, F, *inputs)
    rng = np.random.default_rng(rng_seed)
    v = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
    leaves = [t for t in inputs if t.requires_grad]
    grads = m.autograd.grad(out, leaves, grad_outputs=v, create_graph=True)
    total = sum(
        (g * m.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype)).sum() for g in grads
    )
    total.backward()
    return [to_np(t.grad) for t in leaves]


@pytest.mark.parametrize("name", SECOND)
def test_double_backward(name):
    _, fn, specs = _BY_NAME[name]
    rng = np.random.default_rng(seed_for(name))
    arrays = [sample(s, rng) for s in specs]
    t = _second_derivatives(torch, fn, [make_tensor(torch, a, s) for a, s in zip(arrays, specs)], 1)
    e = _second_derivatives(eg, fn, [make_tensor(eg, a, s) for a, s in zip(arrays, specs)], 1)
    for a, b in zip(e, t):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


def test_gelu_third_derivative():
    for m in (torch, eg):
        x = m.tensor([-1.5, -0.2, 0.3, 2.0], dtype=m.float64, requires_grad=True)
        (g1,) = m.autograd.grad(m.nn.functional.gelu(x).sum(), x, create_graph=True)
        (g2,) = m.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x)
        if m is torch:
            expected = g3.numpy()
        else:
            np.testing.assert_allclose(g3.numpy(), expected, rtol=1e-7)


@pytest.mark.parametrize(
    "name, fn, specs",
    [p.values for p in ACTIVATIONS if "f32" not in p.values[0] and p.values[0][0].islower()][:36],
)
def test_gradcheck(name, fn, specs):
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    if any(t.numel() == 0 for t in tensors):
        return
    assert eg.autograd.gradcheck(lambda *a: fn(eg, eg_F, *a), tuple(tensors)) is True


# -- in-place forms ------------------------------------------------------------------------------
INPLACE = [
    ("elu_", lambda m, F, x: F.elu_(x, 0.5)),
    ("elu_inplace", lambda m, F, x: F.elu(x, inplace=True)),
    ("selu_", lambda m, F, x: F.selu_(x)),
    ("torch_selu_", lambda m, F, x: m.selu_(x)),
    ("celu_", lambda m, F, x: F.celu_(x, 1.5)),
    ("torch_celu_", lambda m, F, x: m.celu_(x)),
    ("celu_inplace", lambda m, F, x: F.celu(x, inplace=True)),
    ("hardtanh_", lambda m, F, x: F.hardtanh_(x, -0.5, 0.5)),
    ("relu6_inplace", lambda m, F, x: F.relu6(x, inplace=True)),
    ("silu_inplace", lambda m, F, x: F.silu(x, inplace=True)),
    ("mish_inplace", lambda m, F, x: F.mish(x, inplace=True)),
    ("hardsigmoid_inplace", lambda m, F, x: F.hardsigmoid(x, inplace=True)),
    ("hardswish_inplace", lambda m, F, x: F.hardswish(x, inplace=True)),
]


@pytest.mark.parametrize("name, op", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace(name, op):
    def fn(m, F, x):
        y = x * 2  # a non-leaf to write into
        out = op(m, F, y)
        assert out is y
        return y

    compare_with_torch(name, fn, [ClampSafe(3, 4)])
    _, (_, t_out), (_, e_out) = run_both(name, fn, [ClampSafe(3, 4)])
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


def test_inplace_on_leaf_refused():
    for m in (torch, eg):
        x = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            m.nn.functional.elu(x, inplace=True)


def test_inplace_no_grad_writes():
    x = eg.tensor([-1.0, 0.5, 8.0])
    eg_F.relu6(x, inplace=True)
    assert x.tolist() == [0.0, 0.5, 6.0]


# -- errors --------------------------------------------------------------------------------------
def _long(m):
    return m.tensor([1, 2])


ERRORS = [
    ("gelu_bad_approx", lambda m, F: F.gelu(m.ones(2), approximate="foo")),
    ("gelu_long", lambda m, F: F.gelu(_long(m))),
    ("gelu_bool", lambda m, F: F.gelu(m.tensor([True]))),
    ("elu_long", lambda m, F: F.elu(_long(m))),
    ("selu_long", lambda m, F: F.selu(_long(m))),
    ("celu_alpha0", lambda m, F: F.celu(m.ones(2), alpha=0.0)),
    ("silu_long", lambda m, F: F.silu(_long(m))),
    ("mish_long", lambda m, F: F.mish(_long(m))),
    ("softplus_long", lambda m, F: F.softplus(_long(m))),
    ("logsigmoid_long", lambda m, F: F.logsigmoid(_long(m))),
    ("hardsigmoid_long", lambda m, F: F.hardsigmoid(_long(m))),
    ("hardswish_long", lambda m, F: F.hardswish(_long(m))),
    ("hardtanh_min_max", lambda m, F: F.hardtanh(m.ones(2), 2.0, 1.0)),
    ("glu_odd", lambda m, F: F.glu(m.ones(3, 5))),
    ("glu_odd_dim0", lambda m, F: F.glu(m.ones(3, 4), 0)),
    ("glu_scalar", lambda m, F: F.glu(m.tensor(1.0))),
    ("glu_dim", lambda m, F: F.glu(m.ones(4, 6), dim=3)),
    ("glu_long", lambda m, F: F.glu(m.ones(2, 2, dtype=m.int64), 0)),
    ("prelu_channels", lambda m, F: F.prelu(m.ones(3, 5), m.ones(3))),
    ("prelu_1d", lambda m, F: F.prelu(m.ones(5), m.ones(5))),
    ("prelu_2d_weight", lambda m, F: F.prelu(m.ones(3, 5), m.ones(1, 5))),
    ("prelu_long", lambda m, F: F.prelu(_long(m), m.tensor([1]))),
    ("prelu_promote", lambda m, F: F.prelu(m.ones(2), m.tensor([1]))),
    ("normalize_dim", lambda m, F: F.normalize(m.ones(3))),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_error(name, fn):
    with pytest.raises(Exception) as t_err:
        fn(torch, torch.nn.functional)
    with pytest.raises(type(t_err.value)) as e_err:
        fn(eg, eg_F)
    assert str(e_err.value) == str(t_err.value)


def test_softmin_implicit_dim_warns():
    for m in (torch, eg):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            y = m.nn.functional.softmin(m.ones(2, 3))
        assert tuple(y.shape) == (2, 3)


def test_integer_inputs_that_torch_accepts():
    for fn in (
        lambda m, F: F.hardtanh(m.tensor([-3, 0, 4])),
        lambda m, F: F.relu6(m.tensor([-3, 0, 9])),
        lambda m, F: F.softsign(m.tensor([1, 2])),
        lambda m, F: F.tanhshrink(m.tensor([1, 2])),
    ):
        t, e = fn(torch, torch.nn.functional), fn(eg, eg_F)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_normalize_zero_vector_and_out():
    for m in (torch, eg):
        x = m.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.normalize(x)
        y.backward(m.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=m.float64))
        if m is torch:
            ty, tg = y.detach().numpy(), x.grad.numpy()
        else:
            np.testing.assert_allclose(y.detach().numpy(), ty)
            np.testing.assert_allclose(x.grad.numpy(), tg)
    out = eg.empty(2, 2)
    r = eg_F.normalize(eg.tensor([[3.0, 4.0], [1.0, 0.0]]), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), [[0.6, 0.8], [1.0, 0.0]], rtol=1e-6)


def test_gelu_far_tails_match_torch():
    a = np.concatenate([np.linspace(-40, 40, 161), [-1e-8, 0.0, 1e-8, 1e3, -1e3]])
    t = torch.nn.functional.gelu(torch.tensor(a)).numpy()
    e = eg_F.gelu(eg.tensor(a)).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-13, atol=1e-15)


def test_gelu_float32_far_negative_is_negative_zero():
    """float32 gelu below about -5.5 is -0 in PyTorch (erf rounds to -1); the engine's erf
    overshot to -1 - 1 ulp there, which gave small positive values."""
    a = np.concatenate([np.linspace(-60, -3, 400), np.linspace(3, 60, 400)]).astype(np.float32)
    t = torch.nn.functional.gelu(torch.tensor(a)).numpy()
    e = eg_F.gelu(eg.tensor(a)).numpy()
    np.testing.assert_allclose(e, t, rtol=2e-5, atol=1e-6)
    far = a < -5.7
    assert (e[far] == 0).all() and np.signbit(e[far]).all()
    assert not (e[a < 0] > 0).any()


# -- modules -------------------------------------------------------------------------------------
REPRS = [
    lambda m: m.nn.GELU(),
    lambda m: m.nn.GELU("tanh"),
    lambda m: m.nn.SiLU(),
    lambda m: m.nn.SiLU(inplace=True),
    lambda m: m.nn.Softplus(),
    lambda m: m.nn.Softplus(2, 10),
    lambda m: m.nn.ELU(),
    lambda m: m.nn.ELU(0.5, inplace=True),
    lambda m: m.nn.CELU(2.0, True),
    lambda m: m.nn.SELU(),
    lambda m: m.nn.SELU(True),
    lambda m: m.nn.Mish(True),
    lambda m: m.nn.Hardtanh(),
    lambda m: m.nn.Hardtanh(-2, 3, True),
    lambda m: m.nn.ReLU6(),
    lambda m: m.nn.ReLU6(True),
    lambda m: m.nn.Hardsigmoid(True),
    lambda m: m.nn.Hardswish(True),
    lambda m: m.nn.LogSigmoid(),
    lambda m: m.nn.Softsign(),
    lambda m: m.nn.Tanhshrink(),
    lambda m: m.nn.GLU(),
    lambda m: m.nn.PReLU(),
    lambda m: m.nn.PReLU(3),
    lambda m: m.nn.Softmin(),
    lambda m: m.nn.Softmin(1),
    lambda m: m.nn.Sequential(m.nn.Linear(2, 3), m.nn.GELU(), m.nn.PReLU(3, 0.1)),
]


@pytest.mark.parametrize("k", range(len(REPRS)))
def test_module_repr(k):
    assert repr(REPRS[k](eg)) == repr(REPRS[k](torch))


def test_prelu_module_parameters_and_training():
    for m in (torch, eg):
        p = m.nn.PReLU(3, init=0.1, dtype=m.float64)
        assert [n for n, _ in p.named_parameters()] == ["weight"]
        x = m.tensor([[[-1.0, 2.0]] * 3] * 2, dtype=m.float64)
        p(x).sum().backward()
        if m is torch:
            expected = p.weight.grad.numpy()
        else:
            np.testing.assert_allclose(p.weight.grad.numpy(), expected)
            np.testing.assert_allclose(p.weight.detach().numpy(), [0.1] * 3)


def test_hardtanh_module_checks_range():
    with pytest.raises(AssertionError):
        eg.nn.Hardtanh(1.0, 0.0)


def test_exports():
    for name in ("celu", "selu", "prelu", "celu_", "selu_"):
        assert callable(getattr(eg, name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert hasattr(eg.Tensor, "prelu")


# -- GPU -----------------------------------------------------------------------------------------
GPU = [
    lambda F, x: F.gelu(x),
    lambda F, x: F.gelu(x, approximate="tanh"),
    lambda F, x: F.silu(x),
    lambda F, x: F.elu(x),
    lambda F, x: F.softplus(x),
    lambda F, x: F.hardswish(x),
    lambda F, x: F.mish(x),
    lambda F, x: F.glu(x, 1),
    lambda F, x: F.normalize(x),
    lambda F, x: F.logsigmoid(x),
]


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("k", range(len(GPU)))
def test_cuda_matches_cpu(k):
    a = np.random.default_rng(k).standard_normal((4, 6)) * 3
    outs = []
    for dev in ("cpu", "cuda"):
        x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
        y = GPU[k](eg_F, x)
        y.sum().backward()
        outs.append((y.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-9, atol=1e-12)
