"""The learning-rate schedulers against torch.optim.lr_scheduler: lr (and momentum / beta1)
sequences over many steps, equal as floats; every scheduler's state_dict equal to PyTorch's and
loadable both ways (a state saved by torch resumes in the engine); the argument messages."""

import math
import warnings

import numpy as np
import pytest
import torch
from _module_pairs import same_error
from hypothesis import example, given, settings
from hypothesis import strategies as st

import engine as eg

STEPS = 40


def _opt(m, kind="sgd", groups=1):
    ps = [m.zeros(2, requires_grad=True) for _ in range(groups)]
    spec = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)]
    if kind == "sgd":
        return m.optim.SGD(spec, lr=0.1, momentum=0.9)
    if kind == "sgd_plain":
        return m.optim.SGD(spec, lr=0.1)
    return m.optim.Adam(spec, lr=0.1, betas=(0.9, 0.99))


def _trace(opt):
    out = []
    for g in opt.param_groups:
        out.append(g["lr"])
        if "momentum" in g:
            out.append(g["momentum"])
        if "betas" in g:
            out.append(g["betas"][0])
    return out


def _run(m, make, kind="sgd", groups=1, steps=STEPS, metrics=None):
    opt = _opt(m, kind, groups)
    sched = make(m.optim.lr_scheduler, opt)
    seq = [_trace(opt) + list(sched.get_last_lr())]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        seq.append(_trace(opt) + list(sched.get_last_lr()))
    return seq, opt, sched


def _same_sequences(make, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, _, ts = _run(torch, make, **kw)
        e, _, es = _run(eg, make, **kw)
    assert e == t  # exact: the same float operations in the same order
    _same_state(es.state_dict(), ts.state_dict())
    return ts, es


def _same_state(e, t):
    """The same keys and values; SequentialLR's nested schedulers' states compared the same way."""
    assert set(e) == set(t)
    for k in t:
        if k == "_schedulers":
            assert len(e[k]) == len(t[k])
            for a, b in zip(e[k], t[k]):
                _same_state(a, b)
        elif k != "lr_lambdas":
            assert e[k] == t[k], k


@settings(max_examples=25, deadline=None)
@given(
    total=st.integers(5, 60),
    pct=st.sampled_from([0.1, 0.25, 0.3, 0.5, 0.9]),
    anneal=st.sampled_from(["cos", "linear"]),
    three=st.booleans(),
    kind=st.sampled_from(["sgd", "adam"]),
    cycle=st.booleans(),
    groups=st.integers(1, 2),
)
@example(total=10, pct=0.1, anneal="cos", three=False, kind="sgd", cycle=False, groups=1)
def test_one_cycle(total, pct, anneal, three, kind, cycle, groups):
    def make(ls, opt):
        return ls.OneCycleLR(opt, max_lr=[1.0, 0.5][:groups] if groups == 2 else 1.0,
                             total_steps=total, pct_start=pct, anneal_strategy=anneal,
                             three_phase=three, cycle_momentum=cycle, div_factor=10.0,
                             final_div_factor=100.0)  # fmt: skip

    if float(pct * total) - 1 == 0:
        # a first phase of no steps (it ends at pct_start * total_steps - 1, where it starts):
        # PyTorch's schedule divides by its length and fails as it is made; so does the engine
        same_error(
            lambda: make(torch.optim.lr_scheduler, _opt(torch, kind, groups)),
            lambda: make(eg.optim.lr_scheduler, _opt(eg, kind, groups)),
            ZeroDivisionError,
        )
        return
    _same_sequences(make, kind=kind, groups=groups, steps=total - 1)


def test_one_cycle_with_epochs_and_steps_per_epoch_and_its_end():
    def make(ls, opt):
        return ls.OneCycleLR(opt, 0.3, epochs=3, steps_per_epoch=4)

    _same_sequences(make, steps=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheds = [make(m.optim.lr_scheduler, _opt(m)) for m in (torch, eg)]
        for s in scheds:
            for _ in range(12):
                s.step()
    same_error(scheds[0].step, scheds[1].step, ValueError)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"total_steps": 0},
        {"total_steps": 2.0},
        {},
        {"epochs": 0, "steps_per_epoch": 3},
        {"epochs": 2, "steps_per_epoch": -1},
        {"total_steps": 10, "pct_start": 1},
        {"total_steps": 10, "anneal_strategy": "exp"},
        {"total_steps": 10, "max_lr": [0.1, 0.2]},
    ],
)
def test_one_cycle_errors(kwargs):
    kwargs = {"max_lr": 0.1, **kwargs}
    same_error(
        lambda: torch.optim.lr_scheduler.OneCycleLR(_opt(torch), **kwargs),
        lambda: eg.optim.lr_scheduler.OneCycleLR(_opt(eg), **kwargs),
    )


def test_one_cycle_needs_momentum():
    opts = [m.optim.Adagrad([m.zeros(1, requires_grad=True)]) for m in (torch, eg)]
    same_error(
        lambda: torch.optim.lr_scheduler.OneCycleLR(opts[0], 0.1, 10),
        lambda: eg.optim.lr_scheduler.OneCycleLR(opts[1], 0.1, 10),
    )


@settings(max_examples=25, deadline=None)
@given(
    start=st.sampled_from([0.1, 1.0 / 3, 0.5, 1.0]),
    end=st.sampled_from([0.0, 0.5, 1.0]),
    iters=st.integers(1, 15),
)
def test_linear_lr(start, end, iters):
    _same_sequences(
        lambda ls, opt: ls.LinearLR(opt, start_factor=start, end_factor=end, total_iters=iters)
    )


@pytest.mark.parametrize("kwargs", [{"start_factor": 0}, {"start_factor": 1.5}, {"end_factor": -1}])
def test_linear_lr_errors(kwargs):
    same_error(
        lambda: torch.optim.lr_scheduler.LinearLR(_opt(torch), **kwargs),
        lambda: eg.optim.lr_scheduler.LinearLR(_opt(eg), **kwargs),
    )


def _sequential(ls, opt):
    warm = ls.LinearLR(opt, start_factor=0.1, total_iters=5)
    decay = ls.ExponentialLR(opt, gamma=0.9)
    cos = ls.CosineAnnealingLR(opt, T_max=7, eta_min=0.001)
    return ls.SequentialLR(opt, [warm, decay, cos], milestones=[5, 17])


def test_sequential_lr():
    ts, es = _same_sequences(_sequential, groups=2)
    assert [type(s).__name__ for s in es._schedulers] == [type(s).__name__ for s in ts._schedulers]


def test_sequential_lr_errors():
    def two(ls, opt, milestones):
        return ls.SequentialLR(opt, [ls.StepLR(opt, 2), ls.ExponentialLR(opt, 0.9)], milestones)

    same_error(
        lambda: two(torch.optim.lr_scheduler, _opt(torch), [1, 2]),
        lambda: two(eg.optim.lr_scheduler, _opt(eg), [1, 2]),
    )
    same_error(
        lambda: torch.optim.lr_scheduler.SequentialLR(_opt(torch), [], []),
        lambda: eg.optim.lr_scheduler.SequentialLR(_opt(eg), [], []),
    )

    def plateau(m):
        opt = _opt(m)
        ls = m.optim.lr_scheduler
        return lambda: ls.SequentialLR(opt, [ls.StepLR(opt, 2), ls.ReduceLROnPlateau(opt)], [3])

    same_error(plateau(torch), plateau(eg))


@settings(max_examples=30, deadline=None)
@given(
    mode=st.sampled_from(["min", "max"]),
    threshold_mode=st.sampled_from(["rel", "abs"]),
    threshold=st.sampled_from([0.0, 1e-4, 0.05]),
    factor=st.sampled_from([0.1, 0.5]),
    patience=st.integers(0, 4),
    cooldown=st.integers(0, 3),
    min_lr=st.sampled_from([0.0, 0.01, [0.02, 0.0]]),
    eps=st.sampled_from([1e-8, 0.02]),
    seed=st.integers(0, 2**16),
)
def test_reduce_on_plateau(mode, threshold_mode, threshold, factor, patience, cooldown, min_lr,
                           eps, seed):  # fmt: skip
    rng = np.random.default_rng(seed)
    # a noisy metric that improves, stalls, then improves again
    metrics = list(np.concatenate([np.linspace(1, 0.5, 10), np.full(20, 0.5), np.linspace(
        0.5, 0.1, 10)]) + rng.normal(0, 0.01, 40))  # fmt: skip
    if seed % 2:
        metrics = [torch.tensor(v) for v in metrics]  # a 0-d tensor is a metric too

    def make(ls, opt):
        return ls.ReduceLROnPlateau(opt, mode=mode, factor=factor, patience=patience,
                                    threshold=threshold, threshold_mode=threshold_mode,
                                    cooldown=cooldown, min_lr=min_lr, eps=eps)  # fmt: skip

    _same_sequences(make, groups=2, metrics=metrics)


@pytest.mark.parametrize(
    "kwargs",
    [{"factor": 1.0}, {"mode": "avg"}, {"threshold_mode": "pct"}, {"min_lr": [0.1, 0.2, 0.3]}],
)
def test_reduce_on_plateau_errors(kwargs):
    same_error(
        lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(_opt(torch, groups=2), **kwargs),
        lambda: eg.optim.lr_scheduler.ReduceLROnPlateau(_opt(eg, groups=2), **kwargs),
    )


ALL = {
    "step": lambda ls, o: ls.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda ls, o: ls.MultiStepLR(o, [2, 5, 5, 11], gamma=0.3),
    "exponential": lambda ls, o: ls.ExponentialLR(o, gamma=0.9),
    "cosine": lambda ls, o: ls.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
    "lambda": lambda ls, o: ls.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "linear": lambda ls, o: ls.LinearLR(o, 0.2, 0.9, 8),
    "sequential": _sequential,
    "onecycle": lambda ls, o: ls.OneCycleLR(o, 1.0, 30, three_phase=True),
    "plateau": lambda ls, o: ls.ReduceLROnPlateau(o, patience=1, cooldown=1),
}


@pytest.mark.parametrize("name", list(ALL))
def test_state_dict_resumes_across_libraries(name):
    """Run torch 7 steps, load its state into a fresh engine scheduler (and optimizer groups),
    then both go on: the same lrs; and the engine's state loads into torch the same way."""
    make = ALL[name]
    plateau = name == "plateau"
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.9, 0.9, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    for src, dst in ((torch, eg), (eg, torch)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s_opt = _opt(src, groups=2)
            s_sched = make(src.optim.lr_scheduler, s_opt)
            d_opt = _opt(dst, groups=2)
            d_sched = make(dst.optim.lr_scheduler, d_opt)
            for i in range(7):
                s_opt.step()
                s_sched.step(metrics[i]) if plateau else s_sched.step()
            state = s_sched.state_dict()
            for dg, sg in zip(d_opt.param_groups, s_opt.param_groups):
                dg.update({k: v for k, v in sg.items() if k != "params"})
            d_sched.load_state_dict(state)
            for i in range(7, 15):
                for o, s in ((s_opt, s_sched), (d_opt, d_sched)):
                    o.step()
                    s.step(metrics[i]) if plateau else s.step()
                assert d_sched.get_last_lr() == s_sched.get_last_lr(), (name, i)
                assert _trace(d_opt) == _trace(s_opt)


def test_get_lr_outside_step_warns():
    for m in (torch, eg):
        sched = m.optim.lr_scheduler.LinearLR(_opt(m))
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()


def test_plateau_inf_best_in_state():
    sched = eg.optim.lr_scheduler.ReduceLROnPlateau(_opt(eg), mode="max")
    assert sched.state_dict()["best"] == -math.inf
