"""The losses (engine/ops/*_losses.py) and their nn modules against torch: values, grads, grad_fn
names, error texts, second derivatives, gradcheck."""

import warnings

import numpy as np
import pytest
import torch
from _torch_compare import (
    Fixed,
    Idx,
    P,
    Prob,
    R,
    case,
    compare_with_torch,
    eg,
    eg_F,
    f32,
    grad_fn_name,
    gradcheck_case,
    make_tensor,
    run_both,
    sample,
    seed_for,
    to_np,
)

W3 = Fixed([0.5, 2.0, 1.25], grad=False)
W4 = Fixed([0.5, 2.0, 1.25, 0.75], grad=False)
IGN = Fixed([0, 2, -100, 1, 2], grad=False)  # for ignore_index, as class indices


def _ign(t):
    """A float Fixed spec turned into class indices with one ignored entry."""
    return t.long()


LOSSES = [
    # nll_loss
    case("nll", lambda m, F, x, t: F.nll_loss(x, t), R(5, 4), Idx((5,), 4)),
    case("nll_sum", lambda m, F, x, t: F.nll_loss(x, t, reduction="sum"), R(5, 4), Idx((5,), 4)),
    case("nll_none", lambda m, F, x, t: F.nll_loss(x, t, reduction="none"), R(5, 4), Idx((5,), 4)),
    case("nll_weight", lambda m, F, x, t, w: F.nll_loss(x, t, w), R(5, 4), Idx((5,), 4), W4),
    case(
        "nll_weight_ignore",
        lambda m, F, x, t, w: F.nll_loss(x, _ign(t), w[:3], ignore_index=-100),
        R(5, 3),
        IGN,
        W4,
    ),
    case(
        "nll_ignore_class",
        lambda m, F, x, t, w: F.nll_loss(x, t, w, ignore_index=1, reduction="mean"),
        R(6, 3),
        Idx((6,), 3),
        W3,
    ),
    case(
        "nll_ignore_none",
        lambda m, F, x, t: F.nll_loss(x, _ign(t), reduction="none"),
        R(5, 3),
        IGN,
    ),
    case("nll_1d", lambda m, F, x, t: F.nll_loss(x, t[0]), R(4), Idx((1,), 4)),
    # (forward only: torch's own backward refuses this shape pair)
    case(
        "nll_1d_target1",
        lambda m, F, x, t: F.nll_loss(x, t, reduction="none"),
        R(4, grad=False),
        Idx((1,), 4),
    ),
    case("nll_3d", lambda m, F, x, t: F.nll_loss(x, t), R(2, 3, 5), Idx((2, 5), 3)),
    case(
        "nll_3d_none",
        lambda m, F, x, t, w: F.nll_loss(x, t, w, reduction="none"),
        R(2, 3, 5),
        Idx((2, 5), 3),
        W3,
    ),
    case("nll_4d", lambda m, F, x, t, w: F.nll_loss(x, t, w), R(2, 3, 4, 2), Idx((2, 4, 2), 3), W3),
    case(
        "nll_4d_none",
        lambda m, F, x, t: F.nll_loss(x, t, reduction="none"),
        R(2, 3, 4, 2),
        Idx((2, 4, 2), 3),
    ),
    case(
        "nll_5d_sum",
        lambda m, F, x, t: F.nll_loss(x, t, reduction="sum", ignore_index=0),
        R(2, 3, 2, 2, 2),
        Idx((2, 2, 2, 2), 3),
    ),
    case(
        "nll_empty_none",
        lambda m, F, x, t: F.nll_loss(x, t, reduction="none"),
        R(0, 3),
        Idx((0,), 3),
    ),
    case("nll_f32", lambda m, F, x, t: F.nll_loss(x, t), f32(R(5, 4)), Idx((5,), 4)),
    # cross_entropy
    case("ce", lambda m, F, x, t: F.cross_entropy(x, t), R(5, 4), Idx((5,), 4)),
    case(
        "ce_weight_ignore",
        lambda m, F, x, t, w: F.cross_entropy(x, _ign(t), w[:3]),
        R(5, 3),
        IGN,
        W4,
    ),
    case("ce_1d", lambda m, F, x, t: F.cross_entropy(x, t[0]), R(4), Idx((1,), 4)),
    case(
        "ce_spatial",
        lambda m, F, x, t: F.cross_entropy(x, t, reduction="none"),
        R(2, 3, 4, 2),
        Idx((2, 4, 2), 3),
    ),
    case(
        "ce_smooth",
        lambda m, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        R(5, 4),
        Idx((5,), 4),
    ),
    case(
        "ce_smooth_weight_ignore",
        lambda m, F, x, t, w: F.cross_entropy(x, _ign(t), w[:3], label_smoothing=0.3),
        R(5, 3),
        IGN,
        W4,
    ),
    case(
        "ce_smooth_weight_ignore_sum",
        lambda m, F, x, t, w: F.cross_entropy(
            x, _ign(t), w[:3], reduction="sum", label_smoothing=0.3
        ),
        R(5, 3),
        IGN,
        W4,
    ),
    case(
        "ce_smooth_none",
        lambda m, F, x, t: F.cross_entropy(x, _ign(t), reduction="none", label_smoothing=0.2),
        R(5, 3),
        IGN,
    ),
    case(
        "ce_smooth_spatial",
        lambda m, F, x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.1),
        R(2, 3, 5),
        Idx((2, 5), 3),
        W3,
    ),
    case(
        "ce_smooth_1d",
        lambda m, F, x, t: F.cross_entropy(x, t[0], label_smoothing=0.5),
        R(4),
        Idx((1,), 4),
    ),
    case(
        "ce_probs",
        lambda m, F, x, p: F.cross_entropy(x, p.softmax(1)),
        R(5, 4),
        R(5, 4, grad=False),
    ),
    case(
        "ce_probs_grad_target",
        lambda m, F, x, p: F.cross_entropy(x, p, reduction="sum"),
        R(5, 4),
        Prob(5, 4),
    ),
    case(
        "ce_probs_weight_smooth_none",
        lambda m, F, x, p, w: F.cross_entropy(x, p, w[:3], reduction="none", label_smoothing=0.2),
        R(2, 3, 4),
        Prob(2, 3, 4),
        W4,
    ),
    case("ce_probs_1d", lambda m, F, x, p: F.cross_entropy(x, p), R(4), Prob(4)),
    # binary_cross_entropy_with_logits
    case(
        "bcel",
        lambda m, F, x, t: F.binary_cross_entropy_with_logits(x * 5, t),
        R(4, 3),
        Prob(4, 3),
    ),
    case(
        "bcel_weights",
        lambda m, F, x, t, w, pw: F.binary_cross_entropy_with_logits(
            x, t, w, pos_weight=pw, reduction="sum"
        ),
        R(4, 3),
        Prob(4, 3),
        P(3, grad=False),
        P(3, grad=False),
    ),
    case(
        "bcel_pos_weight_none",
        lambda m, F, x, t, pw: F.binary_cross_entropy_with_logits(
            x * 30, t, pos_weight=pw, reduction="none"
        ),
        R(2, 4, 3),
        Prob(2, 4, 3),
        P(4, 1, grad=False),
    ),
    case(
        "bcel_f32_target",
        lambda m, F, x, t: F.binary_cross_entropy_with_logits(x, t.float()),
        R(4, 3),
        Prob(4, 3, grad=False),
    ),
    case("bcel_0d", lambda m, F, x, t: F.binary_cross_entropy_with_logits(x, t), R(), Prob()),
    # huber, smooth_l1
    case("huber", lambda m, F, x, t: F.huber_loss(x, t), R(4, 3), R(4, 3)),
    case("huber_delta", lambda m, F, x, t: F.huber_loss(x, t, "sum", 0.5), R(4, 3), R(4, 3)),
    case("huber_none", lambda m, F, x, t: F.huber_loss(x, t, "none", delta=0.7), R(4, 3), R(4, 3)),
    case(
        "huber_weight",
        lambda m, F, x, t, w: F.huber_loss(x, t, weight=w),
        R(4, 3),
        R(4, 3),
        P(4, 3, grad=False),
    ),
    case("huber_0d", lambda m, F, x, t: F.huber_loss(x, t), R(), R()),
    case("smooth_l1", lambda m, F, x, t: F.smooth_l1_loss(x, t), R(4, 3), R(4, 3)),
    case("smooth_l1_beta", lambda m, F, x, t: F.smooth_l1_loss(x, t, beta=0.4), R(4, 3), R(4, 3)),
    case(
        "smooth_l1_none",
        lambda m, F, x, t: F.smooth_l1_loss(x, t, reduction="none", beta=2.0),
        R(4, 3),
        R(4, 3, grad=False),
    ),
    case("smooth_l1_beta0", lambda m, F, x, t: F.smooth_l1_loss(x, t, beta=0.0), R(4, 3), R(4, 3)),
    case("huber_f32", lambda m, F, x, t: F.huber_loss(x, t), f32(R(4, 3)), f32(R(4, 3))),
    # kl_div
    case(
        "kl_batchmean",
        lambda m, F, x, t: F.kl_div(x.log_softmax(1), t, reduction="batchmean"),
        R(4, 3),
        Prob(4, 3, grad=False),
    ),
    case(
        "kl_sum_target_grad",
        lambda m, F, x, t: F.kl_div(x, t, reduction="sum"),
        R(4, 3),
        Prob(4, 3),
    ),
    case(
        "kl_none_zero_target",
        lambda m, F, x, t: F.kl_div(x, t * (t > 0.3), reduction="none"),
        R(4, 3),
        Prob(4, 3, grad=False),
    ),
    case(
        "kl_log_target",
        lambda m, F, x, t: F.kl_div(x, t, reduction="batchmean", log_target=True),
        R(4, 3),
        R(4, 3),
    ),
    case(
        "kl_log_target_none",
        lambda m, F, x, t: F.kl_div(x, t, reduction="none", log_target=True),
        R(4, 3),
        R(4, 3),
    ),
    # cosine_similarity and the rest
    case("cosine", lambda m, F, a, b: F.cosine_similarity(a, b), R(4, 3), R(4, 3)),
    case("cosine_bcast", lambda m, F, a, b: F.cosine_similarity(a, b, dim=-1), R(4, 3), R(1, 3)),
    case("cosine_1d", lambda m, F, a, b: F.cosine_similarity(a, b, dim=0), R(5), R(5)),
    case("cosine_torch", lambda m, F, a, b: m.cosine_similarity(a, b, 0, 1e-6), R(3, 2), R(3, 2)),
    case(
        "cosine_embedding",
        lambda m, F, a, b, t: F.cosine_embedding_loss(a, b, t * 2 - 1, margin=0.1),
        R(5, 3),
        R(5, 3),
        Idx((5,), 2),
    ),
    case(
        "margin_ranking",
        lambda m, F, a, b, t: F.margin_ranking_loss(a, b, (t * 2 - 1).double(), margin=0.2),
        R(6),
        R(6),
        Idx((6,), 2),
    ),
    # modules
    case(
        "CrossEntropyLoss",
        lambda m, F, x, t, w: m.nn.CrossEntropyLoss(w[:3], ignore_index=2, label_smoothing=0.1)(
            x, t
        ),
        R(6, 3),
        Idx((6,), 3),
        W4,
    ),
    case(
        "NLLLoss",
        lambda m, F, x, t, w: m.nn.NLLLoss(w[:3], reduction="sum")(x, t),
        R(6, 3),
        Idx((6,), 3),
        W4,
    ),
    case(
        "BCEWithLogitsLoss",
        lambda m, F, x, t, pw: _nn(m).BCEWithLogitsLoss(pos_weight=pw)(x, t),
        R(4, 3),
        Prob(4, 3),
        P(3, grad=False),
    ),
    case("HuberLoss", lambda m, F, x, t: _nn(m).HuberLoss("sum", 0.3)(x, t), R(4, 3), R(4, 3)),
    case("SmoothL1Loss", lambda m, F, x, t: _nn(m).SmoothL1Loss(beta=0.3)(x, t), R(4, 3), R(4, 3)),
    case(
        "KLDivLoss",
        lambda m, F, x, t: _nn(m).KLDivLoss("batchmean", log_target=True)(x, t),
        R(4, 3),
        R(4, 3),
    ),
    case("CosineSimilarity", lambda m, F, a, b: _nn(m).CosineSimilarity(0)(a, b), R(4, 3), R(4, 3)),
]


def _nn(m):
    """torch.nn, or engine/nn/loss.py (engine.nn re-exports it once listed in its families)."""
    if m is torch:
        return torch.nn
    from engine.nn import loss

    return loss


@pytest.mark.parametrize("name, fn, specs", LOSSES)
def test_loss(name, fn, specs):
    compare_with_torch(name, fn, specs)
    _, (_, t_out), (_, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


def test_loss_modules_from_their_family():
    from engine.nn import loss

    x = eg.tensor([[0.5, -1.0]], dtype=eg.float64, requires_grad=True)
    t = eg.tensor([[1.0, 0.0]], dtype=eg.float64)
    mods = [
        (
            loss.BCEWithLogitsLoss(pos_weight=eg.tensor([2.0, 1.0], dtype=eg.float64)),
            torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0], dtype=torch.float64)),
        ),
        (loss.HuberLoss(delta=0.5), torch.nn.HuberLoss(delta=0.5)),
        (loss.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5)),
        (loss.KLDivLoss(reduction="sum"), torch.nn.KLDivLoss(reduction="sum")),
        (loss.CosineSimilarity(), torch.nn.CosineSimilarity()),
    ]
    tx = torch.tensor(x.detach().numpy())
    tt = torch.tensor(t.numpy())
    for e, tm in mods:
        assert repr(e) == repr(tm)
        np.testing.assert_allclose(e(x, t).detach().numpy(), tm(tx, tt).numpy(), rtol=1e-12)
    assert [n for n, _ in mods[0][0].named_buffers()] == ["pos_weight"]


SECOND = [
    "ce",
    "ce_smooth_weight_ignore",
    "ce_probs_grad_target",
    "bcel_weights",
    "huber",
    "smooth_l1_beta",
    "kl_log_target",
    "kl_sum_target_grad",
    "cosine",
    "nll_4d",
]
_BY_NAME = {p.values[0]: p.values for p in LOSSES}


def _second(m, fn, inputs):
    F = torch.nn.functional if m is torch else eg_F
    out = fn(m, F, *inputs)
    leaves = [t for t in inputs if getattr(t, "requires_grad", False)]
    rng = np.random.default_rng(3)
    v = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
    grads = m.autograd.grad(out, leaves, grad_outputs=v, create_graph=True)
    total = sum(
        (g * m.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype)).sum()
        for g in grads
        if g.requires_grad
    )
    if not isinstance(total, int):
        total.backward()
    return [None if t.grad is None else to_np(t.grad) for t in leaves]


@pytest.mark.parametrize("name", SECOND)
def test_double_backward(name):
    _, fn, specs = _BY_NAME[name]
    rng = np.random.default_rng(seed_for(name))
    arrays = [sample(s, rng) for s in specs]
    t = _second(torch, fn, [make_tensor(torch, a, s) for a, s in zip(arrays, specs)])
    e = _second(eg, fn, [make_tensor(eg, a, s) for a, s in zip(arrays, specs)])
    for a, b in zip(e, t):
        if a is None or b is None:  # a gradient of None and one of zeros say the same
            assert not np.any(a if b is None else b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


GRADCHECK = [
    "nll_weight_ignore",
    "nll_4d",
    "ce_smooth_weight_ignore",
    "ce_probs_grad_target",
    "ce_probs_weight_smooth_none",
    "bcel_weights",
    "bcel_pos_weight_none",
    "huber_delta",
    "smooth_l1_beta",
    "kl_sum_target_grad",
    "kl_log_target",
    "cosine",
    "cosine_bcast",
    "cosine_embedding",
]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck(name):
    _, fn, specs = _BY_NAME[name]
    assert gradcheck_case(name, fn, specs) is True


# -- semantics -------------------------------------------------------------------------------------
def test_nll_all_ignored_is_nan_and_zero_grad():
    for m in (torch, eg):
        x = m.zeros(3, 4, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.nll_loss(x, m.full((3,), -100, dtype=m.int64))
        assert np.isnan(y.item())
        z = m.nn.functional.nll_loss(x, m.full((3,), -100, dtype=m.int64), reduction="sum")
        z.backward()
        assert not np.any(x.grad.numpy())


def test_nll_byte_target_and_legacy_flags():
    x = np.random.default_rng(0).standard_normal((4, 3))
    t = np.array([0, 2, 1, 1])
    out = []
    for m in (torch, eg):
        xm = m.tensor(x)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = m.nn.functional.nll_loss(xm, m.tensor(t, dtype=m.uint8))
            b = m.nn.functional.cross_entropy(xm, m.tensor(t), size_average=False)
            c = m.nn.functional.nll_loss(xm, m.tensor(t), reduce=False)
        out.append((a.item(), b.item(), c.numpy(), [str(x.message) for x in w]))
    np.testing.assert_allclose(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1])
    np.testing.assert_allclose(out[1][2], out[0][2])
    assert out[1][3] == out[0][3]


def test_kl_div_mean_warns():
    for m in (torch, eg):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            m.nn.functional.kl_div(m.zeros(2, 2), m.ones(2, 2) / 2)


def test_cosine_zero_vector():
    res = []
    for m in (torch, eg):
        a = m.tensor([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], dtype=m.float64, requires_grad=True)
        b = m.tensor([[1.0, 0.5, 0.0], [1e-9, 0.0, 0.0]], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.cosine_similarity(a, b)
        y.backward(m.tensor([1.0, -2.0], dtype=m.float64))
        res.append([y.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12)


def _i(m, *v):
    return m.tensor(list(v))


ERRORS = [
    ("nll_float_target", lambda m, F: F.nll_loss(m.ones(4, 3), m.ones(4))),
    ("nll_int32_target", lambda m, F: F.nll_loss(m.ones(4, 3), m.ones(4, dtype=m.int32))),
    ("nll_bool_target", lambda m, F: F.nll_loss(m.ones(4, 3), m.ones(4, dtype=m.bool))),
    ("nll_batch", lambda m, F: F.nll_loss(m.ones(4, 3), m.zeros(5, dtype=m.int64))),
    ("nll_multi_target", lambda m, F: F.nll_loss(m.ones(4, 3), m.zeros(4, 2, dtype=m.int64))),
    ("nll_3d_target", lambda m, F: F.nll_loss(m.ones(4, 3, 5), m.zeros(4, 6, dtype=m.int64))),
    ("nll_3d_target_1d", lambda m, F: F.nll_loss(m.ones(4, 3, 5), m.zeros(4, dtype=m.int64))),
    ("nll_4d_size", lambda m, F: F.nll_loss(m.ones(4, 3, 5, 2), m.zeros(4, 5, 3, dtype=m.int64))),
    ("nll_4d_dims", lambda m, F: F.nll_loss(m.ones(4, 3, 5, 2), m.zeros(4, 5, dtype=m.int64))),
    ("nll_bounds", lambda m, F: F.nll_loss(m.ones(4, 3), _i(m, 0, 1, 2, 5))),
    ("nll_bounds_neg", lambda m, F: F.nll_loss(m.ones(4, 3), _i(m, 0, 1, 2, -1))),
    ("nll_weight_size", lambda m, F: F.nll_loss(m.ones(4, 3), _i(m, 0, 1, 2, 1), m.ones(4))),
    (
        "nll_4d_weight_size",
        lambda m, F: F.nll_loss(m.ones(1, 3, 2, 2), m.zeros(1, 2, 2, dtype=m.int64), m.ones(2)),
    ),
    (
        "nll_weight_dtype",
        lambda m, F: F.nll_loss(m.ones(4, 3), _i(m, 0, 1, 2, 1), m.ones(3, dtype=m.float64)),
    ),
    ("nll_reduction", lambda m, F: F.nll_loss(m.ones(4, 3), _i(m, 0, 1, 2, 1), reduction="avg")),
    ("nll_0d", lambda m, F: F.nll_loss(m.tensor(1.0), m.tensor(0))),
    ("nll_1d_target", lambda m, F: F.nll_loss(m.ones(3), _i(m, 0, 1))),
    ("ce_float_target", lambda m, F: F.cross_entropy(m.ones(4, 3), m.ones(4))),
    ("ce_shape", lambda m, F: F.cross_entropy(m.ones(4, 3), m.ones(4, 2))),
    (
        "ce_smoothing",
        lambda m, F: F.cross_entropy(m.ones(4, 3), _i(m, 0, 1, 2, 1), label_smoothing=1.5),
    ),
    ("ce_probs_long", lambda m, F: F.cross_entropy(m.tensor(1.0), m.tensor(0))),
    ("ce_probs_weight", lambda m, F: F.cross_entropy(m.ones(4, 3), m.ones(4, 3), m.ones(4))),
    ("ce_probs_ignore", lambda m, F: F.cross_entropy(m.ones(4, 3), m.ones(4, 3), ignore_index=1)),
    (
        "ce_bounds_smooth",
        lambda m, F: F.cross_entropy(m.ones(4, 3), _i(m, 0, 1, 2, 7), label_smoothing=0.1),
    ),
    ("bcel_size", lambda m, F: F.binary_cross_entropy_with_logits(m.ones(4, 3), m.ones(4, 2))),
    (
        "bcel_weight",
        lambda m, F: F.binary_cross_entropy_with_logits(m.ones(4, 3), m.ones(4, 3), m.ones(2)),
    ),
    (
        "bcel_pos_weight",
        lambda m, F: F.binary_cross_entropy_with_logits(
            m.ones(4, 3), m.ones(4, 3), pos_weight=m.ones(2)
        ),
    ),
    (
        "bcel_long_target",
        lambda m, F: F.binary_cross_entropy_with_logits(m.ones(2, dtype=m.float64), _i(m, 0, 1)),
    ),
    (
        "bcel_reduction",
        lambda m, F: F.binary_cross_entropy_with_logits(m.ones(2), m.ones(2), reduction="x"),
    ),
    ("huber_delta", lambda m, F: F.huber_loss(m.ones(2), m.ones(2), delta=0.0)),
    ("huber_bcast", lambda m, F: F.huber_loss(m.ones(4, 3), m.ones(2))),
    ("smooth_l1_beta", lambda m, F: F.smooth_l1_loss(m.ones(2), m.ones(2), beta=-0.5)),
    ("kl_reduction", lambda m, F: F.kl_div(m.ones(2), m.ones(2), reduction="foo")),
    ("cosine_long", lambda m, F: F.cosine_similarity(_i(m, 1, 2), _i(m, 1, 2), dim=0)),
    ("cosine_bcast", lambda m, F: F.cosine_similarity(m.ones(4, 3), m.ones(5, 3))),
    ("cosine_dim", lambda m, F: F.cosine_similarity(m.ones(3), m.ones(3))),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_error(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as t_err:
            fn(torch, torch.nn.functional)
        with pytest.raises(type(t_err.value)) as e_err:
            fn(eg, eg_F)
    assert str(e_err.value) == str(t_err.value)


def test_broadcast_warnings_match():
    for m in (torch, eg):
        with pytest.warns(UserWarning, match="Using a target size"):
            m.nn.functional.huber_loss(m.ones(4, 3), m.ones(3))
        with pytest.warns(UserWarning, match="Using a target size"):
            m.nn.functional.smooth_l1_loss(m.ones(4, 3), m.ones(3))


def test_module_reprs_and_buffers():
    for make in (
        lambda m: m.nn.CrossEntropyLoss(),
        lambda m: m.nn.NLLLoss(reduction="sum"),
    ):
        assert repr(make(eg)) == repr(make(torch))
    e = eg.nn.CrossEntropyLoss(weight=eg.ones(3))
    t = torch.nn.CrossEntropyLoss(weight=torch.ones(3))
    assert list(e.state_dict()) == list(t.state_dict())
    assert (
        eg.nn.NLLLoss(size_average=False).reduction
        == torch.nn.NLLLoss(size_average=False).reduction
    )


# -- GPU -------------------------------------------------------------------------------------------
GPU = [
    lambda F, x, t, p: F.cross_entropy(x, t, label_smoothing=0.1),
    lambda F, x, t, p: F.nll_loss(x.log_softmax(1), t, reduction="none"),
    lambda F, x, t, p: F.cross_entropy(x, p),
    lambda F, x, t, p: F.binary_cross_entropy_with_logits(x, p),
    lambda F, x, t, p: F.huber_loss(x, p),
    lambda F, x, t, p: F.kl_div(x.log_softmax(1), p, reduction="batchmean"),
    lambda F, x, t, p: F.cosine_similarity(x, p),
]


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("k", range(len(GPU)))
def test_cuda_matches_cpu(k):
    rng = np.random.default_rng(k)
    a, p = rng.standard_normal((5, 4)), rng.uniform(0, 1, (5, 4))
    t = rng.integers(0, 4, 5)
    outs = []
    for dev in ("cpu", "cuda"):
        x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
        y = GPU[k](eg_F, x, eg.tensor(t, device=dev), eg.tensor(p, device=dev))
        y.sum().backward()
        outs.append((y.detach().cpu().numpy(), x.grad.cpu().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-9, atol=1e-12)


def test_shape_messages_name_torch_size():
    """Messages PyTorch prints with torch.Size([...]) say torch.Size, not the engine's repr."""
    texts = []
    for m in (torch, eg):
        with pytest.warns(UserWarning) as rec:
            m.nn.functional.mse_loss(m.zeros(2, 1), m.zeros(2))
        texts.append(str(rec[0].message))
        with pytest.raises(ValueError) as err:
            m.nn.functional.binary_cross_entropy(m.zeros(2, 1), m.zeros(2))
        texts.append(str(err.value))
        with pytest.raises(RuntimeError) as err:
            m.zeros(2, requires_grad=True).exp().backward(m.zeros(3))
        texts.append(str(err.value))
        lin = m.nn.Linear(2, 3)
        with pytest.raises(RuntimeError) as err:
            lin.load_state_dict({"weight": m.zeros(2, 2), "bias": m.zeros(3)})
        texts.append(str(err.value))
    half = len(texts) // 2
    assert texts[half:] == texts[:half]
