"""batch_norm, layer_norm, group_norm, instance_norm, dropout and embedding against PyTorch:
values, gradients (double backward too), running statistics, errors, and the nn layers."""

import warnings

import numpy as np
import pytest
import torch
from _torch_compare import (
    Idx,
    R,
    assert_same_array,
    case,
    compare_with_torch,
    eg,
    eg_F,
    f32,
    gradcheck_case,
    make_tensor,
    sample,
    seed_for,
    to_np,
)

import engine.nn as enn


def _stats(m, c, rng_name):
    rng = np.random.default_rng(seed_for(rng_name))
    return (
        m.tensor(rng.standard_normal(c), dtype=m.float64),
        m.tensor(rng.uniform(0.5, 2.0, c), dtype=m.float64),
    )


def bn_train(m, F, x, w, b):
    return F.batch_norm(x, None, None, w, b, training=True)


def bn_eval(m, F, x, w, b):
    rm, rv = _stats(m, x.shape[1], "bn_eval")
    return F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)


CASES = [
    case("bn_train_2d", bn_train, R(6, 3), R(3), R(3)),
    case("bn_train_3d", bn_train, R(4, 3, 5), R(3), R(3)),
    case("bn_train_4d", bn_train, R(2, 3, 4, 5), R(3), R(3)),
    case(
        "bn_train_no_affine", lambda m, F, x: F.batch_norm(x, None, None, training=True), R(4, 3, 5)
    ),
    case(
        "bn_train_weight_only",
        lambda m, F, x, w: F.batch_norm(x, None, None, w, training=True, eps=0.1),
        R(4, 3, 5),
        R(3),
    ),
    case(
        "bn_train_bias_only",
        lambda m, F, x, b: F.batch_norm(x, None, None, None, b, training=True),
        R(4, 3, 5),
        R(3),
    ),
    case("bn_eval", bn_eval, R(4, 3, 5), R(3), R(3)),
    case(
        "bn_eval_no_affine",
        lambda m, F, x: F.batch_norm(x, *_stats(m, 3, "s"), training=False),
        R(4, 3),
    ),
    case("bn_train_f32", bn_train, f32(R(4, 3, 5)), f32(R(3)), f32(R(3))),
    case("ln_last", lambda m, F, x, w, b: F.layer_norm(x, (5,), w, b), R(3, 4, 5), R(5), R(5)),
    case(
        "ln_two",
        lambda m, F, x, w, b: F.layer_norm(x, [4, 5], w, b, 1e-3),
        R(3, 4, 5),
        R(4, 5),
        R(4, 5),
    ),
    case("ln_all", lambda m, F, x, w: F.layer_norm(x, (3, 4), w), R(3, 4), R(3, 4)),
    case("ln_no_affine", lambda m, F, x: F.layer_norm(x, (5,)), R(2, 3, 5)),
    case("ln_bias_only", lambda m, F, x, b: F.layer_norm(x, (5,), bias=b), R(2, 3, 5), R(5)),
    case(
        "ln_f32",
        lambda m, F, x, w, b: F.layer_norm(x, (8,), w, b),
        f32(R(4, 8)),
        f32(R(8)),
        f32(R(8)),
    ),
    case(
        "ln_input_only_grad",
        lambda m, F, x, w, b: F.layer_norm(x, (5,), w, b),
        R(3, 5),
        R(5, grad=False),
        R(5, grad=False),
    ),
    case(
        "ln_params_only_grad",
        lambda m, F, x, w, b: F.layer_norm(x, (5,), w, b),
        R(3, 5, grad=False),
        R(5),
        R(5),
    ),
    case("gn", lambda m, F, x, w, b: F.group_norm(x, 2, w, b), R(3, 4, 5), R(4), R(4)),
    case("gn_4d", lambda m, F, x, w, b: F.group_norm(x, 3, w, b, 1e-3), R(2, 6, 2, 3), R(6), R(6)),
    case("gn_2d_no_affine", lambda m, F, x: F.group_norm(x, 2), R(3, 4)),
    case("gn_one_group", lambda m, F, x, w: F.group_norm(x, 1, w), R(2, 4, 3), R(4)),
    case("in", lambda m, F, x, w, b: F.instance_norm(x, weight=w, bias=b), R(3, 4, 5), R(4), R(4)),
    case("in_no_affine", lambda m, F, x: F.instance_norm(x), R(2, 3, 2, 3)),
    case(
        "in_eval_stats",
        lambda m, F, x: F.instance_norm(x, *_stats(m, 3, "in"), use_input_stats=False),
        R(2, 3, 4),
    ),
    case("emb", lambda m, F, i, w: F.embedding(i, w), Idx((2, 3), 5), R(5, 4)),
    case("emb_repeats", lambda m, F, i, w: F.embedding(i, w), Idx((20,), 3), R(3, 2)),
    case(
        "emb_padding", lambda m, F, i, w: F.embedding(i, w, padding_idx=1), Idx((4, 5), 3), R(3, 4)
    ),
    case(
        "emb_padding_neg",
        lambda m, F, i, w: F.embedding(i, w, padding_idx=-1),
        Idx((4, 5), 3),
        R(3, 4),
    ),
    case("emb_scalar_index", lambda m, F, w: F.embedding(m.tensor(2), w), R(4, 3)),
    case("emb_empty", lambda m, F, w: F.embedding(m.zeros(0, dtype=m.int64), w), R(4, 3)),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_grad_fn_names(name, fn, specs):
    rng = np.random.default_rng(0)
    arrays = [sample(s, rng) for s in specs]
    t = fn(torch, torch.nn.functional, *[make_tensor(torch, a, s) for a, s in zip(arrays, specs)])
    e = fn(eg, eg_F, *[make_tensor(eg, a, s) for a, s in zip(arrays, specs)])
    tn = None if t.grad_fn is None else t.grad_fn.name()
    en = None if e.grad_fn is None else e.grad_fn.name()
    assert en == tn


# (PyTorch's own double backward of a norm with a bias but no weight fails)
DOUBLE = [
    c
    for c in CASES
    if c.id.startswith(("bn", "ln", "gn", "in")) and "f32" not in c.id and "bias_only" not in c.id
]


@pytest.mark.parametrize("name, fn, specs", DOUBLE)
def test_double_backward_vs_torch(name, fn, specs):
    """grad with create_graph, then the gradient of a function of those grads."""

    def twice(m, F, *inputs):
        out = fn(m, F, *inputs)
        diff = [x for x in inputs if x.requires_grad]
        g = m.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)))
        grads = m.autograd.grad(out, diff, g, create_graph=True)
        total = None
        for gr, x in zip(grads, diff):
            term = (
                (gr * gr.detach().sign() * m.tanh(x.detach())).sum() if gr.requires_grad else None
            )
            if term is not None:
                total = term if total is None else total + term
        if total is not None:
            total.backward()
        return None

    compare_with_torch(name + "-double", twice, specs)


# padding_idx changes only the gradient, not the function: finite differences cannot see it
@pytest.mark.parametrize("name, fn, specs", DOUBLE + [c for c in CASES if c.id == "emb"])
def test_gradcheck(name, fn, specs):
    assert gradcheck_case(name, fn, specs) is True


# -- running statistics ----------------------------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_functional_running_stats_update(momentum):
    rng = np.random.default_rng(3)
    stats = {"t": (torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))}
    stats["e"] = (eg.zeros(3, dtype=eg.float64), eg.ones(3, dtype=eg.float64))
    for _ in range(3):
        x = rng.standard_normal((5, 3, 4))
        torch.nn.functional.batch_norm(
            torch.tensor(x), *stats["t"], training=True, momentum=momentum
        )
        v0 = stats["e"][0]._version
        eg_F.batch_norm(eg.tensor(x), *stats["e"], training=True, momentum=momentum)
        assert stats["e"][0]._version > v0
    for a, b in zip(stats["e"], stats["t"]):
        assert_same_array(to_np(a), b.numpy(), "running stat")


@pytest.mark.parametrize(
    "cls, shape",
    [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (2, 3, 4, 4))],
)
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_module_train_then_eval(cls, shape, momentum):
    tm = getattr(torch.nn, cls)(3, momentum=momentum).double()
    em = getattr(enn, cls)(3, momentum=momentum).double()
    with torch.no_grad():
        tm.weight.uniform_(0.5, 1.5)
        tm.bias.uniform_(-0.5, 0.5)
    em.load_state_dict({k: eg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(5)
    for _ in range(4):
        x = rng.standard_normal(shape) * 2 + 1
        xt, xe = torch.tensor(x, requires_grad=True), eg.tensor(x, requires_grad=True)
        yt, ye = tm(xt), em(xe)
        assert_same_array(to_np(ye), yt.detach().numpy(), "train output")
        yt.sum().backward()
        ye.sum().backward()
        assert_same_array(to_np(xe.grad), xt.grad.numpy(), "train grad")
    for k, v in tm.state_dict().items():
        assert_same_array(to_np(em.state_dict()[k]), v.numpy(), k)
    assert em.num_batches_tracked.dtype == eg.int64 and int(em.num_batches_tracked) == 4
    tm.eval()
    em.eval()
    x = rng.standard_normal(shape)
    assert_same_array(to_np(em(eg.tensor(x))), tm(torch.tensor(x)).detach().numpy(), "eval")
    for k, v in tm.state_dict().items():  # eval does not touch the statistics
        assert_same_array(to_np(em.state_dict()[k]), v.numpy(), k)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    tm, em = (
        torch.nn.BatchNorm1d(3, track_running_stats=False),
        enn.BatchNorm1d(3, track_running_stats=False),
    )
    assert list(em.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    tm.eval()
    em.eval()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    assert_same_array(to_np(em(eg.tensor(x))), tm(torch.tensor(x)).detach().numpy(), "eval")


def test_instancenorm_tracked_stats():
    tm = torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    em = enn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    rng = np.random.default_rng(9)
    for _ in range(2):
        x = rng.standard_normal((2, 3, 5))
        assert_same_array(to_np(em(eg.tensor(x))), tm(torch.tensor(x)).detach().numpy(), "out")
    for k, v in tm.state_dict().items():
        assert_same_array(to_np(em.state_dict()[k]), v.numpy(), k)
    tm.eval()
    em.eval()
    x = rng.standard_normal((3, 5))  # unbatched
    assert_same_array(to_np(em(eg.tensor(x))), tm(torch.tensor(x)).detach().numpy(), "eval")


# -- errors ----------------------------------------------------------------------------------------
ERRORS = [
    ("bn_one_value", lambda m, F: F.batch_norm(m.zeros(1, 3), None, None, training=True)),
    ("bn_eval_no_mean", lambda m, F: F.batch_norm(m.zeros(2, 3), None, None)),
    ("bn_eval_no_var", lambda m, F: F.batch_norm(m.zeros(2, 3), m.zeros(3), None)),
    (
        "bn_mean_size",
        lambda m, F: F.batch_norm(m.zeros(4, 3), m.zeros(4), m.ones(4), training=True),
    ),
    (
        "bn_weight_size",
        lambda m, F: F.batch_norm(m.zeros(4, 3), None, None, m.ones(4), training=True),
    ),
    ("bn_long", lambda m, F: F.batch_norm(m.zeros(4, 3, dtype=m.int64), None, None, training=True)),
    ("ln_shape", lambda m, F: F.layer_norm(m.zeros(4, 3), (4,))),
    ("ln_weight", lambda m, F: F.layer_norm(m.zeros(4, 3), (3,), m.ones(4))),
    ("ln_int_shape", lambda m, F: F.layer_norm(m.zeros(4, 3), 3)),
    ("ln_long", lambda m, F: F.layer_norm(m.zeros(4, 3, dtype=m.int64), (3,))),
    ("gn_groups", lambda m, F: F.group_norm(m.zeros(4, 6), 4)),
    ("gn_weight", lambda m, F: F.group_norm(m.zeros(4, 6, 2), 3, m.ones(5))),
    ("gn_1d", lambda m, F: F.group_norm(m.zeros(3), 1)),
    ("in_one", lambda m, F: F.instance_norm(m.zeros(1, 3))),
    ("in_no_stats", lambda m, F: F.instance_norm(m.zeros(2, 3, 4), use_input_stats=False)),
    ("emb_range", lambda m, F: F.embedding(m.tensor([1, 11]), m.zeros(10, 3))),
    ("emb_float_idx", lambda m, F: F.embedding(m.tensor([1.0]), m.zeros(10, 3))),
    ("emb_padding", lambda m, F: F.embedding(m.tensor([1]), m.zeros(10, 3), padding_idx=10)),
    ("emb_padding_neg", lambda m, F: F.embedding(m.tensor([1]), m.zeros(10, 3), padding_idx=-11)),
    ("dropout_p_high", lambda m, F: F.dropout(m.zeros(3), 1.5)),
    ("dropout_p_low", lambda m, F: F.dropout(m.zeros(3), -0.1)),
    ("dropout_module_p", lambda m, F: m.nn.Dropout(2.0)),
    ("dropout1d_dims", lambda m, F: F.dropout1d(m.zeros(2, 3, 4, 5))),
    ("dropout_long", lambda m, F: F.dropout(m.zeros(3, dtype=m.int64), 0.5)),
    ("bn1d_dims", lambda m, F: m.nn.BatchNorm1d(3)(m.zeros(2, 3, 4, 5))),
    ("bn2d_dims", lambda m, F: m.nn.BatchNorm2d(3)(m.zeros(2, 3, 4))),
    ("groupnorm_module", lambda m, F: m.nn.GroupNorm(4, 6)),
    ("embedding_module_padding", lambda m, F: m.nn.Embedding(3, 2, padding_idx=3)),
    ("embedding_pretrained_1d", lambda m, F: m.nn.Embedding.from_pretrained(m.zeros(3))),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as te:
        fn(torch, torch.nn.functional)
    with pytest.raises(Exception) as ee:
        fn(eg, eg_F)
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


def test_dropout2d_warnings_match_torch():
    for shape in [(2, 3, 4), (2, 3, 4, 5, 6)]:
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            torch.nn.functional.dropout2d(torch.zeros(shape))
        with warnings.catch_warnings(record=True) as ew:
            warnings.simplefilter("always")
            eg_F.dropout2d(eg.zeros(shape))
        assert [str(w.message) for w in ew] == [str(w.message) for w in tw]


# -- dropout ---------------------------------------------------------------------------------------
def test_dropout_seeded_scaled_and_masked_grad():
    x = eg.tensor(np.random.default_rng(0).uniform(1, 2, (200, 50)), requires_grad=True)
    eg.manual_seed(7)
    a = eg_F.dropout(x, 0.3)
    eg.manual_seed(7)
    b = eg_F.dropout(x, 0.3)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    kept = to_np(a) != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_allclose(to_np(a)[kept], to_np(x)[kept] / 0.7, rtol=1e-12)
    assert a.grad_fn.name() == "MulBackward0"
    a.backward(eg.ones_like(a))
    np.testing.assert_allclose(to_np(x.grad), kept / 0.7, rtol=1e-12)
    small = eg.tensor(np.arange(1.0, 13.0).reshape(3, 4), requires_grad=True)
    assert eg.autograd.gradcheck(lambda t: (eg.manual_seed(1), eg_F.dropout(t, 0.5))[1], (small,))


def test_dropout_edge_cases_as_torch():
    for m, F in ((torch, torch.nn.functional), (eg, eg_F)):
        x = m.ones(4, 5, requires_grad=True)
        assert F.dropout(x, 0.0) is x
        assert F.dropout(x, 0.5, training=False) is x
        z = F.dropout(x, 1.0)
        assert z.grad_fn.name() == "MulBackward0" and float(z.detach().abs().sum()) == 0.0
        y = x * 1
        assert F.dropout(y, 0.5, inplace=True) is y
    d = enn.Dropout(0.5)
    assert repr(d) == repr(torch.nn.Dropout(0.5)) == "Dropout(p=0.5, inplace=False)"
    x = eg.ones(3, 4)
    assert d.eval()(x) is x


def test_dropout_float32_dtype_and_device_kept():
    x = eg.ones(10, 10)
    y = eg_F.dropout(x, 0.5)
    assert y.dtype == eg.float32
    assert set(np.unique(to_np(y))) <= {0.0, 2.0}


@pytest.mark.parametrize(
    "fn, shape, zeros_along",
    [
        ("dropout1d", (4, 6, 30), (2,)),
        ("dropout1d", (6, 30), (1,)),
        ("dropout2d", (4, 6, 5, 6), (2, 3)),
        ("dropout3d", (2, 6, 3, 4, 5), (2, 3, 4)),
    ],
)
def test_feature_dropout_zeroes_whole_channels(fn, shape, zeros_along):
    eg.manual_seed(0)
    y = to_np(getattr(eg_F, fn)(eg.ones(shape), 0.5))
    mx, mn = y.max(axis=zeros_along), y.min(axis=zeros_along)
    np.testing.assert_array_equal(mx, mn)  # each channel all kept or all dropped
    assert set(np.unique(y)) == {0.0, 2.0}


# -- modules ---------------------------------------------------------------------------------------
MODULES = [
    ("BatchNorm1d", (3,), {}),
    ("BatchNorm2d", (3,), {"momentum": None, "affine": False}),
    ("BatchNorm3d", (2,), {"eps": 1e-3}),
    ("BatchNorm1d", (3,), {"track_running_stats": False}),
    ("InstanceNorm1d", (3,), {}),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}),
    ("LayerNorm", (4,), {}),
    ("LayerNorm", ((3, 4),), {"elementwise_affine": False}),
    ("LayerNorm", (4,), {"bias": False}),
    ("GroupNorm", (2, 4), {}),
    ("GroupNorm", (2, 4), {"affine": False}),
    ("Dropout", (), {}),
    ("Dropout1d", (0.2,), {"inplace": True}),
    ("Dropout2d", (), {}),
    ("Embedding", (5, 3), {}),
    ("Embedding", (5, 3), {"padding_idx": -2}),
]


@pytest.mark.parametrize("name, args, kwargs", MODULES)
def test_module_params_buffers_repr_as_torch(name, args, kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    em = getattr(enn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    ts, es = tm.state_dict(), em.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        assert tuple(es[k].shape) == tuple(ts[k].shape), k
        assert str(es[k].dtype).split(".")[-1] == str(ts[k].dtype).split(".")[-1], k
        if not name.startswith("Embedding"):
            np.testing.assert_array_equal(to_np(es[k]), ts[k].numpy())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in em.named_buffers()] == [n for n, _ in tm.named_buffers()]


def test_embedding_init_padding_and_from_pretrained():
    eg.manual_seed(0)
    e = enn.Embedding(1000, 8, padding_idx=3)
    w = to_np(e.weight)
    assert np.all(w[3] == 0)
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    out = e(eg.tensor([[3, 1], [3, 3]]))
    out.sum().backward()
    g = to_np(e.weight.grad)
    assert np.all(g[3] == 0) and np.all(g[1] == 1)
    pre = eg.tensor(np.arange(6.0).reshape(3, 2))
    f = enn.Embedding.from_pretrained(pre)
    tf = torch.nn.Embedding.from_pretrained(torch.tensor(np.arange(6.0).reshape(3, 2)))
    assert repr(f) == repr(tf) and not f.weight.requires_grad
    np.testing.assert_array_equal(to_np(f(eg.tensor([2, 0]))), [[4.0, 5.0], [0.0, 1.0]])
    assert enn.Embedding.from_pretrained(pre, freeze=False).weight.requires_grad


def test_layernorm_module_train_steps_vs_torch():
    rng = np.random.default_rng(11)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.LayerNorm(8), torch.nn.Linear(8, 2))
    tm = tm.double()
    em = enn.Sequential(enn.Linear(6, 8), enn.LayerNorm(8), enn.Linear(8, 2)).double()
    em.load_state_dict({k: eg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    to = torch.optim.SGD(tm.parameters(), lr=0.1)
    eo = eg.optim.SGD(em.parameters(), lr=0.1)
    for _ in range(3):
        x, y = rng.standard_normal((5, 6)), rng.standard_normal((5, 2))
        to.zero_grad()
        eo.zero_grad()
        torch.nn.functional.mse_loss(tm(torch.tensor(x)), torch.tensor(y)).backward()
        eg_F.mse_loss(em(eg.tensor(x)), eg.tensor(y)).backward()
        to.step()
        eo.step()
    for (k, tp), ep in zip(tm.named_parameters(), em.parameters()):
        np.testing.assert_allclose(
            to_np(ep), tp.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=k
        )


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    for dev in ("cpu", "cuda"):
        xe = eg.tensor(x, device=dev, requires_grad=True)
        we = eg.tensor(w, device=dev, requires_grad=True)
        out = (
            eg_F.batch_norm(xe, None, None, we, eg.tensor(b, device=dev), training=True).sum()
            + eg_F.layer_norm(xe, (5,)).exp().sum()
            + eg_F.group_norm(xe.transpose(1, 2), 5).pow(3).sum()
        )
        out.backward()
        if dev == "cpu":
            ref = (to_np(out), to_np(xe.grad), to_np(we.grad))
        else:
            got = (out.detach().cpu().numpy(), xe.grad.cpu().numpy(), we.grad.cpu().numpy())
            for a, r in zip(got, ref):
                np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-12)
    eg.manual_seed(0)
    y = eg_F.dropout(eg.ones(50, 50, device="cuda"), 0.5)
    assert y.device.type == "cuda"
    emb = eg_F.embedding(eg.tensor([1, 2], device="cuda"), eg.ones(4, 3, device="cuda"))
    assert emb.device.type == "cuda"
