"""AdamW, RMSprop, Adagrad, the lr schedulers and gradient clipping against torch: parameters step
for step in float64, learning-rate sequences, state_dict, errors."""

import math
import re
import warnings

import numpy as np
import pytest
import torch
from _torch_compare import eg

STEPS = 7


def _params(m, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    w = m.tensor(rng.standard_normal((3, 4)), dtype=m.float64, requires_grad=True)
    b = m.tensor(rng.standard_normal(4), dtype=m.float64, requires_grad=True)
    return [w, b]


def _loss(m, w, b, step):
    x = m.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3) * (step + 1), dtype=m.float64)
    y = m.tanh(x @ w + b)
    return (y * y).sum() + (w * w * w).sum() * 0.1


def _run(m, make_opt, groups=False, scheduler=None):
    w, b = _params(m)
    opt = make_opt(m, [{"params": [w]}, {"params": [b], "lr": 0.05}] if groups else [w, b])
    sched = scheduler(m, opt) if scheduler else None
    history = []
    for step in range(STEPS):
        opt.zero_grad()
        _loss(m, w, b, step).backward()
        opt.step()
        if sched:
            sched.step()
        history.append([p.detach().numpy().copy() for p in (w, b)])
    return history, opt


def _compare(make_opt, groups=False, scheduler=None):
    t_hist, t_opt = _run(torch, make_opt, groups, scheduler)
    e_hist, e_opt = _run(eg, make_opt, groups, scheduler)
    for step, (tp, ep) in enumerate(zip(t_hist, e_hist)):
        for i, (t, e) in enumerate(zip(tp, ep)):
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12, err_msg=f"step {step} p{i}")
    return t_opt, e_opt


OPTIMIZERS = {
    "adamw": lambda m, p: m.optim.AdamW(p, lr=0.01),
    "adamw_wd_amsgrad": lambda m, p: m.optim.AdamW(
        p, lr=0.02, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, amsgrad=True
    ),
    "adamw_maximize": lambda m, p: m.optim.AdamW(p, lr=0.01, maximize=True),
    "rmsprop": lambda m, p: m.optim.RMSprop(p),
    "rmsprop_all": lambda m, p: m.optim.RMSprop(
        p, lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.05, momentum=0.8, centered=True
    ),
    "rmsprop_momentum": lambda m, p: m.optim.RMSprop(p, lr=0.01, momentum=0.5),
    "rmsprop_centered_maximize": lambda m, p: m.optim.RMSprop(p, centered=True, maximize=True),
    "adagrad": lambda m, p: m.optim.Adagrad(p),
    "adagrad_all": lambda m, p: m.optim.Adagrad(
        p, lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-8
    ),
    "adagrad_maximize": lambda m, p: m.optim.Adagrad(p, lr=0.05, maximize=True),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps(name):
    _compare(OPTIMIZERS[name])


@pytest.mark.parametrize("name", ["adamw_wd_amsgrad", "rmsprop_all", "adagrad_all"])
def test_optimizer_param_groups(name):
    _compare(OPTIMIZERS[name], groups=True)


def test_optimizer_state_and_defaults():
    t_opt, e_opt = _compare(OPTIMIZERS["rmsprop_all"])
    t_state, e_state = t_opt.state_dict(), e_opt.state_dict()
    assert sorted(e_state["state"][0]) == sorted(t_state["state"][0])
    np.testing.assert_allclose(
        e_state["state"][0]["square_avg"], t_state["state"][0]["square_avg"].numpy(), rtol=1e-10
    )
    w = eg.zeros(2, requires_grad=True)
    assert eg.optim.AdamW([w]).defaults["weight_decay"] == 0.01
    ada = eg.optim.Adagrad([w], initial_accumulator_value=0.25)
    assert ada.state_dict()["state"][0]["sum"].tolist() == [0.25, 0.25]  # filled before a step


ERRORS = [
    ("adamw_lr", lambda m, p: m.optim.AdamW(p, lr=-1), "Invalid learning rate: -1"),
    (
        "adamw_beta",
        lambda m, p: m.optim.AdamW(p, betas=(0.9, 1.0)),
        "Invalid beta parameter at index 1: 1.0",
    ),
    ("rms_alpha", lambda m, p: m.optim.RMSprop(p, alpha=-0.1), "Invalid alpha value: -0.1"),
    ("rms_momentum", lambda m, p: m.optim.RMSprop(p, momentum=-1), "Invalid momentum value: -1"),
    ("rms_eps", lambda m, p: m.optim.RMSprop(p, eps=-1), "Invalid epsilon value: -1"),
    ("rms_wd", lambda m, p: m.optim.RMSprop(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    ("ada_decay", lambda m, p: m.optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (
        "ada_init",
        lambda m, p: m.optim.Adagrad(p, initial_accumulator_value=-1),
        "Invalid initial_accumulator_value value: -1",
    ),
    ("ada_eps", lambda m, p: m.optim.Adagrad(p, eps=-1), "Invalid epsilon value: -1"),
]


@pytest.mark.parametrize("fn, expected", [pytest.param(f, e, id=n) for n, f, e in ERRORS])
def test_optimizer_errors(fn, expected):
    for m in (torch, eg):
        with pytest.raises(ValueError, match=re.escape(expected)):
            fn(m, [m.zeros(2, requires_grad=True)])


# -- schedulers ---------------------------------------------------------------------------------
SCHEDULERS = {
    "step": lambda m, o: m.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, [2, 5, 5, 11], gamma=0.3),
    "exponential": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "cosine": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "cosine_default": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, 4),
    "lambda": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "lambda_list": lambda m, o: m.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.9**e, lambda e: 1 + e]
    ),
}


def _lrs(m, make, n=20):
    w = m.zeros(2, requires_grad=True)
    b = m.zeros(2, requires_grad=True)
    opt = m.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    sched = make(m, opt)
    seq = [(sched.last_epoch, sched.get_last_lr(), [g["lr"] for g in opt.param_groups])]
    for _ in range(n):
        opt.step()
        sched.step()
        seq.append((sched.last_epoch, sched.get_last_lr(), [g["lr"] for g in opt.param_groups]))
    return seq, sched, opt


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_sequence(name):
    t_seq, t_s, _ = _lrs(torch, SCHEDULERS[name])
    e_seq, e_s, _ = _lrs(eg, SCHEDULERS[name])
    for (te, tl, tg), (ee, el, eg_) in zip(t_seq, e_seq):
        assert ee == te
        np.testing.assert_allclose(el, tl, rtol=1e-13, atol=0)
        np.testing.assert_allclose(eg_, tg, rtol=1e-13, atol=0)
    t_sd, e_sd = t_s.state_dict(), e_s.state_dict()
    for key in ("last_epoch", "base_lrs", "_step_count", "_last_lr"):
        assert e_sd[key] == pytest.approx(t_sd[key], rel=1e-13)


@pytest.mark.parametrize("name", ["step", "multistep", "exponential", "cosine"])
def test_scheduler_step_with_epoch(name):
    out = []
    for m in (torch, eg):
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        sched = SCHEDULERS[name](m, opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt.step()
            sched.step(4)
            sched.step(9)
        out.append(sched.get_last_lr())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-13)


def test_scheduler_resume_and_state_dict():
    for m in (torch, eg):
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
            m.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3)
    seqs = []
    for m in (torch, eg):
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        s1 = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        for _ in range(3):
            opt.step()
            s1.step()
        state = s1.state_dict()
        s2 = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
        s2.load_state_dict(state)
        seq = []
        for _ in range(6):
            opt.step()
            s2.step()
            seq.append(s2.get_last_lr()[0])
        seqs.append(seq)
    np.testing.assert_allclose(seqs[1], seqs[0], rtol=1e-13)


def test_scheduler_order_warning():
    for m in (torch, eg):
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        sched = m.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
            sched.step()


def test_lambda_lr_count_error():
    for m in (torch, eg):
        opt = m.optim.SGD([m.zeros(2, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
            m.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 2])


def test_scheduler_drives_optimizer():
    _compare(
        OPTIMIZERS["adamw"],
        groups=True,
        scheduler=lambda m, o: m.optim.lr_scheduler.StepLR(o, 2, gamma=0.5),
    )


# -- gradient clipping ---------------------------------------------------------------------------
def _with_grads(m, scale=1.0):
    rng = np.random.default_rng(3)
    ps = []
    for shape in ((3, 4), (5,), ()):
        p = m.tensor(rng.standard_normal(shape), dtype=m.float64, requires_grad=True)
        p.grad = m.tensor(rng.standard_normal(shape) * scale, dtype=m.float64)
        ps.append(p)
    ps.append(m.zeros(2, dtype=m.float64, requires_grad=True))  # no grad: skipped
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, "inf", math.inf, 0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    res = []
    for m in (torch, eg):
        ps = _with_grads(m)
        total = m.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        res.append((total, [p.grad.numpy().copy() for p in ps[:3]]))
    (t_total, t_grads), (e_total, e_grads) = res
    assert e_total.dtype == eg.float64 and e_total.shape == ()
    np.testing.assert_allclose(e_total.item(), t_total.item(), rtol=1e-12)
    for e, t in zip(e_grads, t_grads):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    for m in (torch, eg):
        p = m.zeros(3, dtype=m.float64, requires_grad=True)
        total = m.nn.utils.clip_grad_norm_([p], 1.0)  # no grads at all
        assert total.item() == 0.0 and total.dtype == m.float32
        p.grad = m.tensor([3.0, 4.0, 0.0], dtype=m.float64)
        total = m.nn.utils.clip_grad_norm_(p, 1.0)  # a single tensor
        assert total.item() == 5.0
        np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8, 0.0], rtol=1e-6)
        p.grad = m.tensor([float("inf"), 1.0, 0.0], dtype=m.float64)
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from"):
            m.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
            m.nn.utils.clip_grad_norm_((q for q in []), 1.0)


def test_clip_grad_norm_float32():
    res = []
    for m in (torch, eg):
        ps = [m.zeros(4, requires_grad=True)]
        ps[0].grad = m.tensor([1.5, -2.25, 3.0, 0.5])
        total = m.nn.utils.clip_grad_norm_(ps, 1.0)
        res.append((total.item(), ps[0].grad.numpy().copy(), str(total.dtype)))
    assert res[1][2].split(".")[-1] == res[0][2].split(".")[-1] == "float32"
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6)


def test_clip_grad_value():
    res = []
    for m in (torch, eg):
        ps = _with_grads(m, scale=2.0)
        assert m.nn.utils.clip_grad_value_(ps, 0.7) is None
        res.append([p.grad.numpy().copy() for p in ps[:3]])
    for e, t in zip(*res):
        np.testing.assert_array_equal(e, t)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device (cupy)")
def test_cuda_optimizers_and_clipping():
    outs = []
    for dev in ("cpu", "cuda"):
        w = eg.tensor(np.linspace(-1, 1, 12).reshape(3, 4), device=dev, requires_grad=True)
        opt = eg.optim.RMSprop([w], lr=0.01, momentum=0.5, centered=True)
        for _ in range(3):
            opt.zero_grad()
            (w * w * w).sum().backward()
            total = eg.nn.utils.clip_grad_norm_([w], 1.0)
            opt.step()
        outs.append((w.detach().cpu().numpy(), total.cpu().item()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-10)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-10)
