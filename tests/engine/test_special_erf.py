"""The shared erf kernel (engine/ops/_special.py) and the ops built on it or tuned with it:
erf / erfc / erfinv and gelu against torch (float64 to ~1e-13 relative over the whole range,
tails included; float32 to a few ulp), matmul's and linear's UnsafeViewBackward0, the causal
scaled_dot_product_attention, layer_norm's backward and AdamW's in-place update."""

import numpy as np
import pytest
import torch
from _torch_compare import R, case, compare_with_torch, f32, grad_fn_name, run_both

import engine as eg
from engine.ops import _special

RNG = np.random.default_rng(20)
WIDE = np.concatenate(
    [
        np.linspace(-30.0, 30.0, 60001),
        RNG.uniform(-1.0, 1.0, 20000),
        RNG.uniform(-7.0, 7.0, 20000),
        RNG.standard_normal(5000) * 1e-6,
        [0.0, -0.0, 0.5, -0.5, 6.0, -6.0, 4.0, 5.9999999, 6.0000001, 26.5, 27.3, 28.0, 40.0],
        [1e-300, -1e-300, 5e-324, np.inf, -np.inf, np.nan],
    ]
)


def _rel_err(actual, expected):
    ok = np.isfinite(expected) & (np.abs(expected) > np.finfo(expected.dtype).tiny)
    return np.abs(actual[ok] - expected[ok]) / np.abs(expected[ok])


def _same_specials(actual, expected):
    """nan and inf agree exactly; below the smallest normal, to a few subnormal steps."""
    odd = ~np.isfinite(expected) | (np.abs(expected) <= np.finfo(expected.dtype).tiny)
    step = np.finfo(expected.dtype).smallest_subnormal
    np.testing.assert_allclose(actual[odd], expected[odd], rtol=0, atol=4 * step)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_float64_matches_torch_everywhere(name):
    x = WIDE.astype(np.float64)
    ours = getattr(eg, name)(eg.tensor(x)).numpy()
    ref = getattr(torch, name)(torch.tensor(x)).numpy()
    assert ours.dtype == np.float64
    _same_specials(ours, ref)
    assert _rel_err(ours, ref).max() < 1e-13


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_float32_within_a_few_ulp(name):
    x = WIDE.astype(np.float32)
    with np.errstate(all="ignore"):
        ours = getattr(eg, name)(eg.tensor(x)).numpy()
    ref = getattr(torch, name)(torch.tensor(x)).numpy()
    assert ours.dtype == np.float32
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    finite = np.isfinite(ref)
    spacing = np.spacing(np.abs(ref[finite])).astype(np.float64)
    err = np.abs(ours[finite].astype(np.float64) - ref[finite]) / spacing
    assert err.max() <= 8  # both are approximations; ours measures ~7 ulp at worst vs exact


def test_kernels_directly():
    assert _special.erf(np.float64(0.5)) == pytest.approx(0.5204998778130465, rel=1e-15)
    assert _special.erf(np.array(0.5, np.float32)).dtype == np.float32
    assert _special.erf(np.array(0.5, np.float32)).shape == ()
    assert _special.erfc(np.zeros((0, 3))).shape == (0, 3)
    x = np.linspace(-5, 5, 1001)
    cdf = 0.5 * (1 + np.asarray(torch.erf(torch.tensor(x / np.sqrt(2)))))
    np.testing.assert_allclose(_special.normal_cdf(x), cdf, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(
        _special.normal_cdf(x.astype(np.float32)), cdf.astype(np.float32), rtol=0, atol=3e-7
    )
    # exp(-x^2) without x*x's rounding: relative accuracy where x*x is large
    xs = np.array([5.123456789, 20.987654321, 26.6])
    exact = np.array([torch.exp(-(torch.tensor(v, dtype=torch.float64) ** 2)).item() for v in xs])
    assert _rel_err(_special.exp_neg_sq(xs), exact).max() < 1e-12


def test_erfinv_round_trip_and_torch():
    x = np.concatenate([np.linspace(-0.999999, 0.999999, 20001), [1.0, -1.0, 1.5, 0.0, -0.0]])
    ours = eg.erfinv(eg.tensor(x)).numpy()
    ref = torch.erfinv(torch.tensor(x)).numpy()
    _same_specials(ours, ref)
    assert _rel_err(ours, ref).max() < 1e-12


ERF_CASES = [
    case("erf", lambda m, F, x: m.erf(x), R(3, 4)),
    case("erfc", lambda m, F, x: m.erfc(x), R(3, 4)),
    case("erf-0d", lambda m, F, x: m.erf(x), R()),
    case("erfc-empty", lambda m, F, x: m.erfc(x), R(0, 2)),
    case("erf-f32", lambda m, F, x: m.erf(x), f32(R(5, 3))),
    case("gelu", lambda m, F, x: F.gelu(x), R(4, 5)),
    case("gelu-0d", lambda m, F, x: F.gelu(x), R()),
    case("gelu-empty", lambda m, F, x: F.gelu(x), R(0, 5)),
    case("gelu-f32", lambda m, F, x: F.gelu(x), f32(R(6, 7))),
    case("gelu-tanh", lambda m, F, x: F.gelu(x, approximate="tanh"), R(4, 5)),
]


@pytest.mark.parametrize("name, fn, specs", ERF_CASES)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, list(specs))


def test_gelu_double_backward_vs_torch():
    def fn(m, F, x):
        y = F.gelu(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return g * g

    compare_with_torch("gelu-double", fn, [R(3, 4)])


@pytest.mark.parametrize(
    "fn",
    [lambda x: eg.erf(x), lambda x: eg.erfc(x), lambda x: eg.nn.functional.gelu(x)],
    ids=["erf", "erfc", "gelu"],
)
def test_gradcheck(fn):
    x = eg.tensor(RNG.standard_normal((3, 4)) * 2, requires_grad=True)
    assert eg.autograd.gradcheck(fn, (x,)) is True
    assert eg.autograd.gradgradcheck(fn, (x,)) is True


# -- matmul / linear / kron: the _unsafe_view they end in ----------------------------------------
MATMUL = [
    ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((5, 2, 3, 4), (5, 2, 4, 5)),
    ((5, 2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
]


def _chain(t):
    """The grad_fn name and its first parent's, as strings."""
    gf = t.grad_fn
    nxt = [f for f, _ in gf.next_functions if f is not None]
    return grad_fn_name(t), (nxt[0].name() if nxt else None)


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("sa, sb", MATMUL, ids=[f"{a}@{b}" for a, b in MATMUL])
def test_matmul_grad_fn_and_view_state(sa, sb, grads):
    def fn(m, F, a, b):
        return a @ b

    specs = [R(*sa, grad=grads[0]), R(*sb, grad=grads[1])]
    _, (_, t_out), (_, e_out) = run_both(f"mm-{sa}-{sb}", fn, specs)
    assert _chain(e_out) == _chain(t_out)
    assert e_out._is_view() == t_out._is_view()
    compare_with_torch(f"mm-{sa}-{sb}-{grads}", fn, specs)


def test_matmul_result_takes_inplace_ops_as_torch():
    def fn(m, F, a, b):
        y = a @ b
        y.mul_(2.0)
        return y

    _, (_, t_out), (_, e_out) = run_both("mm-inplace", fn, [R(2, 3, 4), R(4, 5)])
    assert grad_fn_name(e_out) == grad_fn_name(t_out) == "MulBackward0"
    compare_with_torch("mm-inplace", fn, [R(2, 3, 4), R(4, 5)])


def test_bmm_stays_bmm():
    def fn(m, F, a, b):
        return m.bmm(a, b)

    _, (_, t_out), (_, e_out) = run_both("bmm", fn, [R(2, 3, 4), R(2, 4, 5)])
    assert grad_fn_name(e_out) == grad_fn_name(t_out) == "BmmBackward0"


@pytest.mark.parametrize("bias", [False, True])
def test_linear_3d_view_state(bias):
    def fn(m, F, x, w, b):
        return F.linear(x, w, b if bias else None)

    specs = [R(2, 3, 4), R(5, 4), R(5)]
    _, (_, t_out), (_, e_out) = run_both("linear3d", fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)
    assert e_out._is_view() == t_out._is_view()
    compare_with_torch(f"linear3d-{bias}", fn, specs)


def test_kron():
    compare_with_torch("kron", lambda m, F, a, b: m.kron(a, b), [R(2, 3), R(3, 2)])
    _, (_, t_out), (_, e_out) = run_both("kron", lambda m, F, a, b: m.kron(a, b), [R(2), R(3)])
    assert grad_fn_name(e_out) == grad_fn_name(t_out)
    assert e_out._is_view() == t_out._is_view()


# -- attention, layer norm, AdamW ------------------------------------------------------------------
@pytest.mark.parametrize("L, S", [(5, 5), (3, 6), (6, 3)])
def test_causal_attention(L, S):
    def fn(m, F, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    compare_with_torch(f"sdpa-causal-{L}-{S}", fn, [R(2, 3, L, 4), R(2, 3, S, 4), R(2, 3, S, 5)])
    compare_with_torch(
        f"sdpa-causal-f32-{L}-{S}", fn, [f32(R(2, L, 4)), f32(R(2, S, 4)), f32(R(2, S, 4))]
    )


def test_causal_attention_double_backward():
    def fn(m, F, q, k, v):
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        (g,) = m.autograd.grad((y * y).sum(), q, create_graph=True)
        return g

    compare_with_torch("sdpa-causal-double", fn, [R(2, 4, 3), R(2, 4, 3), R(2, 4, 3)])


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine):
    def fn(m, F, x, w, b):
        return F.layer_norm(x, (4,), w if affine else None, b if affine else None)

    compare_with_torch(f"ln-{affine}", fn, [R(3, 5, 4), R(4), R(4)])


@pytest.mark.parametrize(
    "kw",
    [{}, {"amsgrad": True, "weight_decay": 0.1}, {"maximize": True}, {"weight_decay": 0}],
    ids=["plain", "amsgrad-wd", "maximize", "no-wd"],
)
def test_adamw_steps_including_0d(kw):
    init = [RNG.standard_normal((3, 4)), np.array(1.5), RNG.standard_normal(5)]
    e_ps = [eg.nn.Parameter(eg.tensor(a)) for a in init]
    t_ps = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    e_opt, t_opt = eg.optim.AdamW(e_ps, lr=0.05, **kw), torch.optim.AdamW(t_ps, lr=0.05, **kw)
    for _ in range(4):
        for ps, opt in ((e_ps, e_opt), (t_ps, t_opt)):
            opt.zero_grad()
            loss = sum((p * p * p).sum() for p in ps)
            loss.backward()
            grads = [p.grad.numpy().copy() for p in ps]
            opt.step()
            for p, g in zip(ps, grads):  # the step must not write into the gradient
                np.testing.assert_array_equal(p.grad.numpy(), g)
    for e, t in zip(e_ps, t_ps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device and cupy")
def test_gpu_matches_cpu():
    x = RNG.standard_normal((4, 6))
    for fn in (eg.erf, eg.erfc, eg.nn.functional.gelu):
        cpu = fn(eg.tensor(x)).numpy()
        gpu = fn(eg.tensor(x, device="cuda")).cpu().numpy()
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-15)
    q = eg.tensor(RNG.standard_normal((2, 3, 5, 4)))
    cpu = eg.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).numpy()
    qg = q.to("cuda")
    gpu = eg.nn.functional.scaled_dot_product_attention(qg, qg, qg, is_causal=True)
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu, rtol=1e-12)
