"""NAdam, RAdam, Adadelta and Adamax step for step against torch (float64), and every optimizer's
state_dict/load_state_dict in PyTorch's format: a state saved by torch resumes in the engine (and
the other way) with the same parameters afterwards."""

import numpy as np
import pytest
import torch
from _torch_compare import eg

STEPS = 6


def _params(m):
    rng = np.random.default_rng(0)
    w = m.tensor(rng.standard_normal((3, 4)), dtype=m.float64, requires_grad=True)
    b = m.tensor(rng.standard_normal(4), dtype=m.float64, requires_grad=True)
    return [w, b]


def _step(m, opt, params, step):
    w, b = params
    x = m.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3) * (step + 1), dtype=m.float64)
    opt.zero_grad()
    y = m.tanh(x @ w + b)
    ((y * y).sum() + (w * w * w).sum() * 0.1).backward()
    opt.step()


def _run(m, make, steps=STEPS, groups=False):
    params = _params(m)
    opt = make(
        m, [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.05}] if groups else params
    )
    history = []
    for step in range(steps):
        _step(m, opt, params, step)
        history.append([p.detach().numpy().copy() for p in params])
    return history, opt, params


OPTIMIZERS = {
    "nadam": lambda m, p: m.optim.NAdam(p),
    "nadam_all": lambda m, p: m.optim.NAdam(
        p, lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, momentum_decay=0.01
    ),
    "nadam_decoupled": lambda m, p: m.optim.NAdam(
        p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True
    ),
    "nadam_maximize": lambda m, p: m.optim.NAdam(p, maximize=True),
    "radam": lambda m, p: m.optim.RAdam(p, lr=0.01),
    "radam_rectified": lambda m, p: m.optim.RAdam(p, lr=0.01, betas=(0.9, 0.5)),
    "radam_wd": lambda m, p: m.optim.RAdam(p, lr=0.01, betas=(0.5, 0.6), weight_decay=0.2),
    "radam_decoupled": lambda m, p: m.optim.RAdam(
        p, lr=0.01, betas=(0.5, 0.6), weight_decay=0.2, decoupled_weight_decay=True
    ),
    "adadelta": lambda m, p: m.optim.Adadelta(p),
    "adadelta_all": lambda m, p: m.optim.Adadelta(
        p, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True
    ),
    "adamax": lambda m, p: m.optim.Adamax(p),
    "adamax_all": lambda m, p: m.optim.Adamax(
        p, lr=0.05, betas=(0.7, 0.8), eps=1e-4, weight_decay=0.1, maximize=True
    ),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
@pytest.mark.parametrize("groups", [False, True])
def test_optimizer_steps_match_torch(name, groups):
    t_hist, t_opt, _ = _run(torch, OPTIMIZERS[name], groups=groups)
    e_hist, e_opt, _ = _run(eg, OPTIMIZERS[name], groups=groups)
    for step, (tp, ep) in enumerate(zip(t_hist, e_hist)):
        for i, (t, e) in enumerate(zip(tp, ep)):
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12, err_msg=f"step {step} p{i}")
    t_group, e_group = t_opt.param_groups[0], e_opt.param_groups[0]
    assert {k: t_group[k] for k in e_group if k != "params"} == {
        k: v for k, v in e_group.items() if k != "params"
    }  # the same options and defaults (PyTorch's has its implementation flags besides)


ERRORS = [
    lambda m, p: m.optim.NAdam(p, lr=-1),
    lambda m, p: m.optim.NAdam(p, betas=(1.0, 0.9)),
    lambda m, p: m.optim.NAdam(p, momentum_decay=-1),
    lambda m, p: m.optim.RAdam(p, eps=-1),
    lambda m, p: m.optim.RAdam(p, weight_decay=-1),
    lambda m, p: m.optim.Adadelta(p, rho=1.5),
    lambda m, p: m.optim.Adadelta(p, lr=-0.1),
    lambda m, p: m.optim.Adamax(p, betas=(0.9, -0.1)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_argument_errors_match_torch(k):
    msgs = []
    for m in (torch, eg):
        with pytest.raises(ValueError) as err:
            ERRORS[k](m, _params(m))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


ALL = {
    "sgd": lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    "adam": lambda m, p: m.optim.Adam(p, lr=0.01, amsgrad=True),
    "adamw": lambda m, p: m.optim.AdamW(p, lr=0.01),
    "rmsprop": lambda m, p: m.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda m, p: m.optim.Adagrad(p, lr=0.05),
    **{k: OPTIMIZERS[k] for k in ("nadam", "radam_rectified", "adadelta", "adamax")},
}


def _to_torch(sd):
    return {
        "state": {
            i: {k: torch.tensor(np.asarray(v)) if hasattr(v, "numpy") else v for k, v in s.items()}
            for i, s in sd["state"].items()
        },
        "param_groups": sd["param_groups"],
    }


def _to_engine(sd):
    return {
        "state": {
            i: {k: eg.tensor(v.numpy()) if torch.is_tensor(v) else v for k, v in s.items()}
            for i, s in sd["state"].items()
        },
        "param_groups": sd["param_groups"],
    }


@pytest.mark.parametrize("name", ALL)
def test_state_dict_round_trips_with_torch(name):
    """Three steps in torch, its state_dict loaded into a fresh engine optimizer on the same
    parameter values, three more steps in each: the same parameters. And back: the engine's
    state_dict has torch's keys and loads into torch."""
    make = ALL[name]
    _, t_opt, t_params = _run(torch, make, steps=3, groups=True)
    t_sd = t_opt.state_dict()
    e_params = [eg.tensor(p.detach().numpy(), requires_grad=True) for p in t_params]
    e_opt = make(eg, [{"params": [e_params[0]]}, {"params": [e_params[1]], "lr": 0.05}])
    e_opt.load_state_dict(_to_engine(t_sd))
    for step in range(3, 6):
        _step(torch, t_opt, t_params, step)
        _step(eg, e_opt, e_params, step)
    for t, e in zip(t_params, e_params):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)

    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    for e_group, t_group in zip(e_sd["param_groups"], t_sd["param_groups"]):
        assert e_group == {k: t_group[k] for k in e_group}
    assert sorted(e_sd["state"]) == sorted(t_sd["state"])
    for i in t_sd["state"]:
        assert sorted(e_sd["state"][i]) == sorted(t_sd["state"][i])
        for k, v in t_sd["state"][i].items():
            got = e_sd["state"][i][k]
            assert isinstance(got, eg.Tensor) == torch.is_tensor(v), k
            np.testing.assert_allclose(np.asarray(got), np.asarray(v), rtol=1e-10, err_msg=k)
    fresh = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in e_params]
    back = make(torch, [{"params": [fresh[0]]}, {"params": [fresh[1]], "lr": 0.05}])
    back.load_state_dict(_to_torch(e_sd))
    _step(torch, back, fresh, 6)
    _step(eg, e_opt, e_params, 6)
    for t, e in zip(fresh, e_params):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)


def _two_groups(sd):
    return {"state": {}, "param_groups": [*sd["param_groups"], *sd["param_groups"]]}


def _wrong_size(sd):
    return {"state": {}, "param_groups": [{**sd["param_groups"][0], "params": [0, 1, 2]}]}


@pytest.mark.parametrize("bad", [_two_groups, _wrong_size])
def test_load_state_dict_errors_match_torch(bad):
    msgs = []
    for m in (torch, eg):
        opt = m.optim.Adam(_params(m))
        with pytest.raises(ValueError) as err:
            opt.load_state_dict(bad(opt.state_dict()))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
