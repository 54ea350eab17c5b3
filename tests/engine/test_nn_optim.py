"""engine.nn and engine.optim against PyTorch: init, bookkeeping, losses, training runs."""

import math

import numpy as np
import pytest
import torch

import engine as eg
import engine.nn as enn
import engine.optim as eoptim
from engine.nn import functional as EF

F = torch.nn.functional
RTOL64 = 1e-10
ATOL64 = 1e-12


# --------------------------------------------------------------------------- helpers


def arr(t):
    return np.array(t.detach().numpy())


def copy_params(src_eg, dst_torch):
    eg_named = list(src_eg.named_parameters())
    t_named = list(dst_torch.named_parameters())
    assert [n for n, _ in eg_named] == [n for n, _ in t_named]
    with torch.no_grad():
        for (_, p), (_, q) in zip(eg_named, t_named):
            assert tuple(p.shape) == tuple(q.shape)
            q.copy_(torch.from_numpy(arr(p)).to(q.dtype))


def pair(a, requires_grad=False):
    a = np.asarray(a)
    return (
        eg.tensor(a.copy(), requires_grad=requires_grad),
        torch.tensor(a.copy(), requires_grad=requires_grad),
    )


def close(a, b, rtol=RTOL64, atol=ATOL64, msg=""):
    np.testing.assert_allclose(arr(a), arr(b), rtol=rtol, atol=atol, err_msg=msg)


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    raise AssertionError("no exception raised")


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


# =========================================================================== Linear


@pytest.mark.parametrize("fan_in, fan_out", [(1, 1), (3, 5), (300, 200)])
def test_linear_shapes_and_init_bounds(fan_in, fan_out):
    eg.manual_seed(0)
    lin = enn.Linear(fan_in, fan_out)
    assert tuple(lin.weight.shape) == (fan_out, fan_in)
    assert tuple(lin.bias.shape) == (fan_out,)
    assert lin.in_features == fan_in and lin.out_features == fan_out
    assert lin.weight.dtype == eg.float32 and lin.bias.dtype == eg.float32
    bound = 1.0 / math.sqrt(fan_in)
    w, b = arr(lin.weight), arr(lin.bias)
    assert np.all(np.abs(w) <= bound) and np.all(np.abs(b) <= bound)


def test_linear_init_is_uniform():
    eg.manual_seed(0)
    fan_in = 300
    lin = enn.Linear(fan_in, 200)
    bound = 1.0 / math.sqrt(fan_in)
    w = arr(lin.weight).ravel() / bound  # should be U(-1, 1)
    assert w.max() > 0.99 and w.min() < -0.99
    assert abs(w.mean()) < 0.02
    assert w.std() == pytest.approx(1 / math.sqrt(3), rel=0.02)
    counts, _ = np.histogram(w, bins=10, range=(-1, 1))
    np.testing.assert_allclose(counts / w.size, 0.1, atol=0.01)
    b = arr(lin.bias) / bound
    assert b.max() > 0.7 and b.min() < -0.7  # bias uses the same bound, not a tiny one


def test_linear_init_follows_manual_seed():
    eg.manual_seed(42)
    a = enn.Linear(5, 4)
    eg.manual_seed(42)
    b = enn.Linear(5, 4)
    c = enn.Linear(5, 4)
    np.testing.assert_array_equal(arr(a.weight), arr(b.weight))
    np.testing.assert_array_equal(arr(a.bias), arr(b.bias))
    assert not np.array_equal(arr(b.weight), arr(c.weight))


def test_linear_parameters_are_leaf_parameters():
    lin = enn.Linear(3, 4)
    for p in (lin.weight, lin.bias):
        assert isinstance(p, enn.Parameter)
        assert isinstance(p, eg.Tensor)
        assert p.requires_grad and p.is_leaf and p.grad_fn is None and p.grad is None


def test_linear_float64(rng):
    lin = enn.Linear(3, 4, dtype=eg.float64)
    assert lin.weight.dtype == eg.float64 and lin.bias.dtype == eg.float64
    ref = torch.nn.Linear(3, 4, dtype=torch.float64)
    copy_params(lin, ref)
    x, xt = pair(rng.standard_normal((5, 3)))
    y = lin(x)
    assert y.dtype == eg.float64
    close(y, ref(xt))
    y.sum().backward()
    ref(xt).sum().backward()
    close(lin.weight.grad, ref.weight.grad)
    close(lin.bias.grad, ref.bias.grad)


def test_linear_without_bias(rng):
    lin = enn.Linear(3, 2, bias=False, dtype=eg.float64)
    assert lin.bias is None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    assert list(lin.state_dict().keys()) == ["weight"]
    x = rng.standard_normal((4, 3))
    np.testing.assert_allclose(arr(lin(eg.tensor(x))), x @ arr(lin.weight).T, rtol=1e-12)


# =========================================================================== Module bookkeeping


def _eg_seq():
    return enn.Sequential(enn.Linear(4, 8), enn.ReLU(), enn.Linear(8, 2))


def _t_seq():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


class _EgNet(enn.Module):
    def __init__(self):
        super().__init__()
        self.scale = enn.Parameter(eg.ones(3))
        self.body = enn.Sequential(enn.Linear(3, 4), enn.Tanh(), enn.Sequential(enn.Linear(4, 2)))
        self.head = enn.Linear(2, 1, bias=False)

    def forward(self, x):
        return self.head(self.body(x * self.scale))


class _TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))
        self.body = torch.nn.Sequential(
            torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Sequential(torch.nn.Linear(4, 2))
        )
        self.head = torch.nn.Linear(2, 1, bias=False)

    def forward(self, x):
        return self.head(self.body(x * self.scale))


def test_sequential_named_parameters():
    model = _eg_seq()
    named = list(model.named_parameters())
    assert [n for n, _ in named] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    params = list(model.parameters())
    assert len(params) == 4
    assert all(p is q for p, (_, q) in zip(params, named))
    assert named[0][1] is model[0].weight and named[3][1] is model[2].bias
    assert len(model) == 3


def test_nested_module_names_match_torch():
    model, ref = _EgNet(), _TNet()
    names = [n for n, _ in model.named_parameters()]
    assert names == [n for n, _ in ref.named_parameters()]
    assert names == [
        "scale",
        "body.0.weight",
        "body.0.bias",
        "body.2.0.weight",
        "body.2.0.bias",
        "head.weight",
    ]
    assert [type(c).__name__ for c in model.children()] == ["Sequential", "Linear"]
    assert [type(c).__name__ for c in model.body.children()] == ["Linear", "Tanh", "Sequential"]


def test_nested_module_forward_backward_matches_torch(rng):
    model, ref = _EgNet(), _TNet()
    model.to(eg.float64)
    ref.to(torch.float64)
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((5, 3)))
    out, out_t = model(x), ref(xt)
    close(out, out_t)
    (out**2).mean().backward()
    (out_t**2).mean().backward()
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        close(p.grad, q.grad, msg=n)


def test_children_of_sequential():
    model = _eg_seq()
    kids = list(model.children())
    assert [type(c).__name__ for c in kids] == ["Linear", "ReLU", "Linear"]
    assert kids[0] is model[0] and kids[2] is model[2]


def test_train_eval_flags():
    model = _EgNet()
    assert model.training and model.body.training and model.body[2][0].training
    assert model.eval() is model
    assert not model.training and not model.body.training and not model.body[2][0].training
    assert not model.head.training
    assert model.train() is model
    assert model.training and model.body[1].training
    model.train(False)
    assert not model.training and not model.head.training


def test_module_zero_grad(rng):
    model = _eg_seq()
    model(eg.tensor(rng.standard_normal((2, 4)).astype(np.float32))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_optimizer_zero_grad_set_to_none(rng):
    model = _eg_seq()
    x = eg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    opt = eoptim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    opt.zero_grad(set_to_none=False)
    for p in model.parameters():
        assert p.grad is not None
        np.testing.assert_array_equal(arr(p.grad), np.zeros(tuple(p.shape), dtype=np.float32))
    model(x).sum().backward()
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_parameter_registration():
    p = enn.Parameter(eg.ones(2, 3))
    assert p.requires_grad and p.is_leaf and tuple(p.shape) == (2, 3)
    q = enn.Parameter(eg.zeros(2), requires_grad=False)
    assert not q.requires_grad
    m = enn.Module()
    m.alpha = p
    m.sub = enn.Linear(2, 2)
    m.plain = eg.ones(4)  # a plain tensor attribute is not a parameter
    assert [n for n, _ in m.named_parameters()] == ["alpha", "sub.weight", "sub.bias"]
    assert list(m.state_dict().keys()) == ["alpha", "sub.weight", "sub.bias"]


def test_module_to_float64(rng):
    model = _eg_seq()
    assert model.to(eg.float64) is model
    assert all(p.dtype == eg.float64 for p in model.parameters())
    assert all(isinstance(p, enn.Parameter) and p.is_leaf for p in model.parameters())
    ref = _t_seq().to(torch.float64)
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((3, 4)))
    out = model(x)
    assert out.dtype == eg.float64
    close(out, ref(xt))
    assert model.to("cpu") is model


# --------------------------------------------------------------------------- state_dict


def test_state_dict_keys_and_values():
    model, ref = _eg_seq(), _t_seq()
    sd = model.state_dict()
    assert list(sd.keys()) == list(ref.state_dict().keys())
    for (n, p), (k, v) in zip(model.named_parameters(), sd.items()):
        assert n == k
        np.testing.assert_array_equal(arr(v), arr(p))
        assert v.requires_grad is False


def test_load_state_dict_round_trip(rng):
    eg.manual_seed(1)
    a = _eg_seq()
    eg.manual_seed(2)
    b = _eg_seq()
    assert not np.array_equal(arr(a[0].weight), arr(b[0].weight))
    before = list(b.parameters())
    result = b.load_state_dict(a.state_dict())
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(arr(p), arr(q), err_msg=n)
    # loading copies into the existing parameters
    assert all(p is q for p, q in zip(before, b.parameters()))
    assert all(p.requires_grad and p.is_leaf for p in b.parameters())
    x = eg.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    np.testing.assert_array_equal(arr(a(x)), arr(b(x)))


def test_load_state_dict_is_a_copy(rng):
    a, b = _eg_seq(), _eg_seq()
    b.load_state_dict(a.state_dict())
    loaded = [arr(p) for p in b.parameters()]
    a(eg.tensor(rng.standard_normal((2, 4)).astype(np.float32))).sum().backward()
    eoptim.SGD(a.parameters(), lr=1.0).step()  # moves a's weights only
    for p, w in zip(b.parameters(), loaded):
        np.testing.assert_array_equal(arr(p), w)
    assert not np.array_equal(arr(a[0].bias), loaded[1])


def _torch_like_dict(sd, drop=(), add=()):
    out = {k: v for k, v in sd.items() if k not in drop}
    for k in add:
        out[k] = next(iter(sd.values()))
    return out


@pytest.mark.parametrize(
    "drop, add",
    [
        (("0.bias",), ()),
        ((), ("extra.weight",)),
        (("2.weight", "0.bias"), ("extra", "3.bias")),
    ],
    ids=["missing", "unexpected", "both"],
)
def test_load_state_dict_strict_errors(drop, add):
    model, ref = _eg_seq(), _t_seq()
    bad = _torch_like_dict(model.state_dict(), drop, add)
    bad_t = _torch_like_dict(ref.state_dict(), drop, add)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(bad)
    _, expected = error_of(lambda: ref.load_state_dict(bad_t))
    assert str(info.value) == expected

    # strict=False reports the same keys and loads the rest
    res = model.load_state_dict(bad, strict=False)
    res_t = ref.load_state_dict(bad_t, strict=False)
    assert list(res.missing_keys) == list(res_t.missing_keys)
    assert list(res.unexpected_keys) == list(res_t.unexpected_keys)


def test_load_state_dict_size_mismatch():
    model = _eg_seq()
    sd = model.state_dict()
    sd["0.weight"] = eg.zeros(3, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for 0\.weight"):
        model.load_state_dict(sd)


# --------------------------------------------------------------------------- repr


def test_repr_matches_torch():
    model = enn.Sequential(
        enn.Linear(4, 8),
        enn.ReLU(),
        enn.Linear(8, 3, bias=False),
        enn.Sigmoid(),
        enn.Tanh(),
        enn.LeakyReLU(0.2),
        enn.Softmax(dim=1),
    )
    ref = torch.nn.Sequential(
        torch.nn.Linear(4, 8),
        torch.nn.ReLU(),
        torch.nn.Linear(8, 3, bias=False),
        torch.nn.Sigmoid(),
        torch.nn.Tanh(),
        torch.nn.LeakyReLU(0.2),
        torch.nn.Softmax(dim=1),
    )
    assert repr(model) == repr(ref)
    assert str(model) == str(ref)
    assert repr(enn.Linear(3, 4)) == "Linear(in_features=3, out_features=4, bias=True)"
    assert repr(enn.LeakyReLU()) == repr(torch.nn.LeakyReLU())
    nested = enn.Sequential(enn.Sequential(enn.Linear(1, 2)), enn.ReLU())
    nested_t = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(1, 2)), torch.nn.ReLU())
    assert repr(nested) == repr(nested_t)
    assert repr(_EgNet()) == repr(_TNet()).replace("_TNet", "_EgNet")


@pytest.mark.parametrize("name", ["MSELoss", "CrossEntropyLoss", "BCELoss", "L1Loss"])
def test_loss_repr(name):
    assert repr(getattr(enn, name)()) == repr(getattr(torch.nn, name)())


# =========================================================================== activations


ACTIVATIONS = [
    ("ReLU", (), {}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {}),
    ("Softmax", (), {"dim": 1}),
    ("Softmax", (), {"dim": 0}),
]


@pytest.mark.parametrize("name, args, kwargs", ACTIVATIONS)
def test_activation_modules(rng, name, args, kwargs):
    x, xt = pair(rng.standard_normal((4, 5)), requires_grad=True)
    up = rng.standard_normal((4, 5))
    out = getattr(enn, name)(*args, **kwargs)(x)
    out_t = getattr(torch.nn, name)(*args, **kwargs)(xt)
    close(out, out_t)
    out.backward(eg.tensor(up))
    out_t.backward(torch.tensor(up))
    close(x.grad, xt.grad)


FUNCTIONALS = [
    ("relu", (), {}),
    ("sigmoid", (), {}),
    ("tanh", (), {}),
    ("softmax", (), {"dim": -1}),
    ("softmax", (), {"dim": 0}),
    ("log_softmax", (), {"dim": 1}),
    ("log_softmax", (), {"dim": 0}),
    ("leaky_relu", (), {}),
    ("leaky_relu", (0.3,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", FUNCTIONALS)
def test_functional_activations(rng, name, args, kwargs):
    x, xt = pair(rng.standard_normal((4, 5)) * 3, requires_grad=True)
    up = rng.standard_normal((4, 5))
    out = getattr(EF, name)(x, *args, **kwargs)
    out_t = getattr(F, name)(xt, *args, **kwargs)
    close(out, out_t)
    out.backward(eg.tensor(up))
    out_t.backward(torch.tensor(up))
    close(x.grad, xt.grad)


def test_log_softmax_is_stable(rng):
    x, xt = pair(np.array([[1000.0, 0.0, -1000.0], [5.0, 5.0, 5.0]]), requires_grad=True)
    out = EF.log_softmax(x, dim=1)
    out_t = F.log_softmax(xt, dim=1)
    close(out, out_t)
    out.sum().backward()
    out_t.sum().backward()
    close(x.grad, xt.grad)


@pytest.mark.parametrize("bias", [True, False])
def test_functional_linear(rng, bias):
    x, xt = pair(rng.standard_normal((6, 3)), requires_grad=True)
    w, wt = pair(rng.standard_normal((4, 3)), requires_grad=True)
    b, bt = pair(rng.standard_normal(4), requires_grad=True)
    out = EF.linear(x, w, b if bias else None)
    out_t = F.linear(xt, wt, bt if bias else None)
    close(out, out_t)
    out.sum().backward()
    out_t.sum().backward()
    close(x.grad, xt.grad)
    close(w.grad, wt.grad)
    if bias:
        close(b.grad, bt.grad)


# =========================================================================== losses


def _loss_inputs(rng, name):
    if name == "CrossEntropyLoss":
        inp = rng.standard_normal((6, 5)) * 2
        target = rng.integers(0, 5, size=6).astype(np.int64)
    elif name == "BCELoss":
        inp = rng.uniform(0.02, 0.98, size=(6, 3))
        target = rng.uniform(0.0, 1.0, size=(6, 3))
        target[0] = [0.0, 1.0, 1.0]
    else:
        inp = rng.standard_normal((6, 3))
        target = rng.standard_normal((6, 3))
    return inp, target


FUNCTIONAL_LOSS = {
    "MSELoss": "mse_loss",
    "L1Loss": "l1_loss",
    "BCELoss": "binary_cross_entropy",
    "CrossEntropyLoss": "cross_entropy",
}


def _check_loss(out, out_t, x, xt, rng, reduction):
    close(out, out_t)
    if reduction == "none":
        assert tuple(out.shape) == tuple(out_t.shape)
        up = rng.standard_normal(tuple(out_t.shape))
        out.backward(eg.tensor(up))
        out_t.backward(torch.tensor(up))
    else:
        assert tuple(out.shape) == ()
        out.backward()
        out_t.backward()
    close(x.grad, xt.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "BCELoss", "CrossEntropyLoss"])
def test_loss_modules(rng, name, reduction):
    inp, target = _loss_inputs(rng, name)
    x, xt = pair(inp, requires_grad=True)
    y, yt = pair(target)
    out = getattr(enn, name)(reduction=reduction)(x, y)
    out_t = getattr(torch.nn, name)(reduction=reduction)(xt, yt)
    assert out.grad_fn is not None
    _check_loss(out, out_t, x, xt, rng, reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "BCELoss", "CrossEntropyLoss"])
def test_functional_losses(rng, name, reduction):
    inp, target = _loss_inputs(rng, name)
    x, xt = pair(inp, requires_grad=True)
    y, yt = pair(target)
    fn = FUNCTIONAL_LOSS[name]
    out = getattr(EF, fn)(x, y, reduction=reduction)
    out_t = getattr(F, fn)(xt, yt, reduction=reduction)
    _check_loss(out, out_t, x, xt, rng, reduction)


def test_loss_default_reduction_is_mean(rng):
    inp, target = _loss_inputs(rng, "MSELoss")
    x, y = eg.tensor(inp), eg.tensor(target)
    assert enn.MSELoss().reduction == "mean"
    np.testing.assert_allclose(arr(enn.MSELoss()(x, y)), np.mean((inp - target) ** 2), rtol=1e-12)


def test_loss_gradient_to_both_sides_of_mse(rng):
    inp, target = _loss_inputs(rng, "MSELoss")
    x, xt = pair(inp, requires_grad=True)
    y, yt = pair(target, requires_grad=True)
    EF.mse_loss(x, y).backward()
    F.mse_loss(xt, yt).backward()
    close(x.grad, xt.grad)
    close(y.grad, yt.grad)


# =========================================================================== training runs

STEPS = 6


def _eg_mlp(seed, sizes, act):
    eg.manual_seed(seed)
    a, h, o = sizes
    return enn.Sequential(
        enn.Linear(a, h, dtype=eg.float64), getattr(enn, act)(), enn.Linear(h, o, dtype=eg.float64)
    )


def _t_mlp(sizes, act):
    a, h, o = sizes
    return torch.nn.Sequential(
        torch.nn.Linear(a, h, dtype=torch.float64),
        getattr(torch.nn, act)(),
        torch.nn.Linear(h, o, dtype=torch.float64),
    )


def _train_side_by_side(model, ref, opt, opt_t, loss_fn, loss_fn_t, batches):
    copy_params(model, ref)
    for step, (xb, yb) in enumerate(batches):
        x, xt = pair(xb)
        y, yt = pair(yb)
        opt.zero_grad()
        opt_t.zero_grad()
        loss = loss_fn(model(x), y)
        loss_t = loss_fn_t(ref(xt), yt)
        np.testing.assert_allclose(
            loss.item(), loss_t.item(), rtol=RTOL64, atol=ATOL64, err_msg=f"loss at step {step}"
        )
        loss.backward()
        loss_t.backward()
        for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
            close(p.grad, q.grad, msg=f"grad {n} at step {step}")
        opt.step()
        opt_t.step()
        for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
            close(p, q, msg=f"{n} after step {step}")


def _regression_batches(rng, n=STEPS):
    return [(rng.standard_normal((8, 6)), rng.standard_normal((8, 3))) for _ in range(n)]


def _make_opt(kind, eg_params, t_params, kw):
    return getattr(eoptim, kind)(eg_params, **kw), getattr(torch.optim, kind)(t_params, **kw)


SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.1, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True},
    {"lr": 0.05, "momentum": 0.8, "weight_decay": 1e-3, "nesterov": True},
    {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.05},
]
ADAM_CONFIGS = [
    {"lr": 1e-2},
    {},
    {"lr": 1e-2, "weight_decay": 0.1},
    {"lr": 5e-3, "betas": (0.8, 0.99), "eps": 1e-6},
]


def _ids(configs):
    return ["-".join(f"{k}={v}" for k, v in c.items()) or "defaults" for c in configs]


@pytest.mark.parametrize("kw", SGD_CONFIGS, ids=_ids(SGD_CONFIGS))
def test_mlp_mse_sgd_matches_torch(rng, kw):
    model, ref = _eg_mlp(10, (6, 16, 3), "ReLU"), _t_mlp((6, 16, 3), "ReLU")
    opt, opt_t = _make_opt("SGD", model.parameters(), ref.parameters(), kw)
    _train_side_by_side(
        model, ref, opt, opt_t, enn.MSELoss(), torch.nn.MSELoss(), _regression_batches(rng)
    )


@pytest.mark.parametrize("kw", ADAM_CONFIGS, ids=_ids(ADAM_CONFIGS))
def test_mlp_mse_adam_matches_torch(rng, kw):
    model, ref = _eg_mlp(11, (6, 16, 3), "ReLU"), _t_mlp((6, 16, 3), "ReLU")
    opt, opt_t = _make_opt("Adam", model.parameters(), ref.parameters(), kw)
    _train_side_by_side(
        model, ref, opt, opt_t, enn.MSELoss(), torch.nn.MSELoss(), _regression_batches(rng)
    )


def _class_batches(rng, n=STEPS):
    return [
        (rng.standard_normal((10, 5)), rng.integers(0, 4, size=10).astype(np.int64))
        for _ in range(n)
    ]


@pytest.mark.parametrize(
    "kind, kw",
    [
        ("SGD", {"lr": 0.2}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}),
        ("Adam", {"lr": 1e-2}),
        ("Adam", {"lr": 1e-2, "weight_decay": 0.05}),
    ],
    ids=["sgd", "sgd-nesterov-wd", "adam", "adam-wd"],
)
def test_classifier_cross_entropy_matches_torch(rng, kind, kw):
    model, ref = _eg_mlp(12, (5, 12, 4), "Tanh"), _t_mlp((5, 12, 4), "Tanh")
    opt, opt_t = _make_opt(kind, model.parameters(), ref.parameters(), kw)
    _train_side_by_side(
        model,
        ref,
        opt,
        opt_t,
        enn.CrossEntropyLoss(),
        torch.nn.CrossEntropyLoss(),
        _class_batches(rng),
    )


def test_training_reduces_loss(rng):
    model = _eg_mlp(13, (5, 12, 4), "ReLU")
    opt = eoptim.Adam(model.parameters(), lr=0.05)
    x = eg.tensor(rng.standard_normal((32, 5)))
    y = eg.tensor(rng.integers(0, 4, size=32).astype(np.int64))
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = EF.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_frozen_and_gradless_parameters_are_skipped(rng, kind):
    model, ref = _eg_mlp(14, (6, 16, 3), "ReLU"), _t_mlp((6, 16, 3), "ReLU")
    copy_params(model, ref)
    model[0].weight.requires_grad = False
    ref[0].weight.requires_grad = False
    frozen = arr(model[0].weight)
    kw = {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1} if kind == "SGD" else {"lr": 0.01}
    opt, opt_t = _make_opt(kind, model.parameters(), ref.parameters(), kw)
    # a step before any backward changes nothing
    opt.step()
    opt_t.step()
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        close(p, q, msg=n)
    for xb, yb in _regression_batches(rng, 3):
        opt.zero_grad()
        opt_t.zero_grad()
        EF.mse_loss(model(eg.tensor(xb)), eg.tensor(yb)).backward()
        F.mse_loss(ref(torch.tensor(xb)), torch.tensor(yb)).backward()
        assert model[0].weight.grad is None
        opt.step()
        opt_t.step()
    np.testing.assert_array_equal(arr(model[0].weight), frozen)
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        close(p, q, msg=n)


def test_optimizer_accepts_a_list_and_generator(rng):
    model = _eg_mlp(15, (6, 16, 3), "ReLU")
    opt_a = eoptim.SGD(list(model.parameters()), lr=0.1)
    opt_b = eoptim.SGD(model.parameters(), lr=0.1)
    xb, yb = _regression_batches(rng, 1)[0]
    EF.mse_loss(model(eg.tensor(xb)), eg.tensor(yb)).backward()
    grads = [arr(p.grad) for p in model.parameters()]
    before = [arr(p) for p in model.parameters()]
    opt_a.step()
    opt_b.step()
    for p, w, g in zip(model.parameters(), before, grads):
        np.testing.assert_allclose(arr(p), w - 0.2 * g, rtol=1e-12, atol=1e-15)


def test_optimizer_step_does_not_build_graph(rng):
    model = _eg_mlp(16, (6, 16, 3), "ReLU")
    opt = eoptim.Adam(model.parameters(), lr=0.01)
    xb, yb = _regression_batches(rng, 1)[0]
    EF.mse_loss(model(eg.tensor(xb)), eg.tensor(yb)).backward()
    opt.step()
    for p in model.parameters():
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
        assert isinstance(p, enn.Parameter)


# =========================================================================== edge cases


@pytest.mark.parametrize("shape", [(3,), (2, 5, 3)])
def test_linear_other_input_ranks(rng, shape):
    lin = enn.Linear(3, 4, dtype=eg.float64)
    ref = torch.nn.Linear(3, 4, dtype=torch.float64)
    copy_params(lin, ref)
    x, xt = pair(rng.standard_normal(shape), requires_grad=True)
    out, out_t = lin(x), ref(xt)
    assert tuple(out.shape) == tuple(out_t.shape)
    close(out, out_t)
    out.sum().backward()
    out_t.sum().backward()
    close(x.grad, xt.grad)
    close(lin.weight.grad, ref.weight.grad)
    close(lin.bias.grad, ref.bias.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_clamps_log_at_exact_zero_and_one(reduction):
    inp = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    target = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    x, xt = pair(inp)
    y, yt = pair(target)
    out = EF.binary_cross_entropy(x, y, reduction=reduction)
    out_t = F.binary_cross_entropy(xt, yt, reduction=reduction)
    assert np.all(np.isfinite(arr(out)))
    close(out, out_t)


def test_tied_parameters_are_listed_once(rng):
    shared = enn.Linear(3, 3, dtype=eg.float64)
    model = enn.Sequential(shared, enn.Tanh(), shared)
    shared_t = torch.nn.Linear(3, 3, dtype=torch.float64)
    ref = torch.nn.Sequential(shared_t, torch.nn.Tanh(), shared_t)
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(model.parameters())) == 2
    copy_params(model, ref)
    opt = eoptim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_t = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for xb, _ in _regression_batches(rng, 3):
        opt.zero_grad()
        opt_t.zero_grad()
        (model(eg.tensor(xb[:, :3])) ** 2).sum().backward()
        (ref(torch.tensor(xb[:, :3])) ** 2).sum().backward()
        opt.step()
        opt_t.step()
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        close(p, q, msg=n)


def test_tied_parameters_state_dict_keeps_every_name():
    shared = enn.Linear(3, 3)
    model = enn.Sequential(shared, enn.Tanh(), shared)
    shared_t = torch.nn.Linear(3, 3)
    ref = torch.nn.Sequential(shared_t, torch.nn.Tanh(), shared_t)
    keys = list(model.state_dict().keys())
    assert keys == list(ref.state_dict().keys())
    assert keys == ["0.weight", "0.bias", "2.weight", "2.bias"]
    model.load_state_dict(model.state_dict())  # and it loads back


class _EgTwoHeads(enn.Module):
    def __init__(self):
        super().__init__()
        self.a = enn.Linear(4, 2, dtype=eg.float64)
        self.b = enn.Linear(4, 2, dtype=eg.float64)


class _TTwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 2, dtype=torch.float64)
        self.b = torch.nn.Linear(4, 2, dtype=torch.float64)


@pytest.mark.parametrize(
    "kind, kw",
    [
        ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
        ("Adam", {"lr": 0.02, "weight_decay": 0.01}),
    ],
    ids=["sgd-momentum", "adam"],
)
def test_parameters_without_grad_on_some_steps(rng, kind, kw):
    """Head b gets a gradient only on even steps; its optimizer state must skip the rest."""
    model, ref = _EgTwoHeads(), _TTwoHeads()
    copy_params(model, ref)
    opt, opt_t = _make_opt(kind, model.parameters(), ref.parameters(), kw)
    for step in range(6):
        xb = rng.standard_normal((5, 4))
        x, xt = pair(xb)
        opt.zero_grad()
        opt_t.zero_grad()
        out, out_t = model.a(x), ref.a(xt)
        if step % 2 == 0:
            out, out_t = out * model.b(x), out_t * ref.b(xt)
        (out**2).mean().backward()
        (out_t**2).mean().backward()
        opt.step()
        opt_t.step()
        for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
            close(p, q, msg=f"{n} after step {step}")


def test_nested_state_dict_round_trip(rng):
    a, b = _EgNet(), _EgNet()
    sd = a.state_dict()
    assert list(sd.keys()) == list(_TNet().state_dict().keys())
    b.load_state_dict(sd)
    x = eg.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    np.testing.assert_array_equal(arr(a(x)), arr(b(x)))


def _same_error(eg_fn, torch_fn):
    t_type, t_msg = error_of(torch_fn)
    with pytest.raises(t_type) as info:
        eg_fn()
    assert str(info.value) == t_msg


def test_cross_entropy_rejects_float_class_indices():
    _same_error(
        lambda: EF.cross_entropy(eg.ones(3, 2), eg.tensor([0.0, 1.0, 1.0])),
        lambda: F.cross_entropy(torch.ones(3, 2), torch.tensor([0.0, 1.0, 1.0])),
    )


def test_cross_entropy_target_out_of_bounds():
    _same_error(
        lambda: EF.cross_entropy(eg.ones(3, 2), eg.tensor([0, 1, 5])),
        lambda: F.cross_entropy(torch.ones(3, 2), torch.tensor([0, 1, 5])),
    )


@pytest.mark.parametrize("inp, target", [([1.5], [1.0]), ([0.5], [2.0]), ([0.5], [-0.1])])
def test_bce_rejects_values_outside_unit_interval(inp, target):
    _same_error(
        lambda: EF.binary_cross_entropy(eg.tensor(inp), eg.tensor(target)),
        lambda: F.binary_cross_entropy(torch.tensor(inp), torch.tensor(target)),
    )


# --------------------------------------------------------------------------- grad_fn names


def _fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "BCELoss", "CrossEntropyLoss"])
def test_loss_grad_fn_names(rng, name, reduction):
    inp, target = _loss_inputs(rng, name)
    x, xt = pair(inp, requires_grad=True)
    y, yt = pair(target)
    out = getattr(enn, name)(reduction=reduction)(x, y)
    out_t = getattr(torch.nn, name)(reduction=reduction)(xt, yt)
    assert _fn_name(out) == _fn_name(out_t)


@pytest.mark.parametrize("name, args, kwargs", FUNCTIONALS)
def test_activation_grad_fn_names(rng, name, args, kwargs):
    x, xt = pair(rng.standard_normal((4, 5)), requires_grad=True)
    assert _fn_name(getattr(EF, name)(x, *args, **kwargs)) == _fn_name(
        getattr(F, name)(xt, *args, **kwargs)
    )


@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 4, 3)], ids=["2d", "1d", "3d"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear_grad_fn_names(rng, shape, bias):
    lin = enn.Linear(3, 2, bias=bias)
    ref = torch.nn.Linear(3, 2, bias=bias)
    data = rng.standard_normal(shape).astype(np.float32)
    assert _fn_name(lin(eg.tensor(data))) == _fn_name(ref(torch.tensor(data)))


# --------------------------------------------------------------------------- state_dict details


def test_state_dict_values_follow_the_parameters():
    """Like torch, state_dict() holds detached views, not snapshots."""
    model = enn.Linear(2, 2)
    sd = model.state_dict()
    before = arr(sd["bias"])
    model(eg.ones(1, 2)).sum().backward()
    eoptim.SGD(model.parameters(), lr=1.0).step()
    np.testing.assert_allclose(arr(sd["bias"]), before - 1.0, rtol=1e-6)


def test_load_state_dict_keeps_parameter_dtype():
    model = enn.Linear(2, 2)
    sd = {k: eg.tensor(arr(v).astype(np.float64)) for k, v in model.state_dict().items()}
    model.load_state_dict(sd)
    assert model.weight.dtype == eg.float32 and model.bias.dtype == eg.float32
    np.testing.assert_allclose(arr(model.weight), arr(sd["weight"]), rtol=1e-6)
