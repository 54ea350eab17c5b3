"""Helpers for comparing an engine layer (or functional call) with PyTorch's: the same weights
(copied torch -> engine through load_state_dict, never by seeding), the same inputs, one
backward with the same upstream gradient, then the outputs and every gradient compared."""

import numpy as np
import torch

import engine as eg

F32 = {"rtol": 2e-5, "atol": 2e-6}


def copy_weights(t_mod, e_mod):
    state = {k: eg.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()}
    e_mod.load_state_dict(state)


def leaves(*arrays, grad=True):
    """(torch tensors, engine tensors) of the arrays; float arrays require grad."""
    ts, es = [], []
    for a in arrays:
        g = grad and a.dtype.kind == "f"
        ts.append(torch.tensor(a, requires_grad=g))
        es.append(eg.tensor(a, requires_grad=g))
    return ts, es


def backward_both(t_out, e_out, seed=0):
    """One backward through each output with the same random upstream gradient."""
    g = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    g = g.astype(t_out.detach().numpy().dtype)
    t_out.backward(torch.tensor(g))
    e_out.backward(eg.tensor(g))


def assert_close(e, t, tol=F32, what=""):
    t_arr = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    e_arr = e.detach().numpy() if hasattr(e, "detach") else np.asarray(e)
    assert e_arr.shape == t_arr.shape, (what, e_arr.shape, t_arr.shape)
    np.testing.assert_allclose(e_arr, t_arr, err_msg=what, **tol)


def assert_grads(t_items, e_items, tol=F32):
    """Gradients of named leaves/parameters: [(name, tensor)] from each side."""
    for (name, t), (_, e) in zip(t_items, e_items):
        if t.grad is None:
            assert e.grad is None, name
        else:
            assert e.grad is not None, name
            assert_close(e.grad, t.grad, tol, name)


def same_error(t_call, e_call, exc=Exception):
    """Both calls raise the same exception type with the same message; returns the message."""
    try:
        t_call()
    except exc as t_err:
        t_type, t_msg = type(t_err), str(t_err)
    else:
        raise AssertionError("torch did not raise")
    try:
        e_call()
    except exc as e_err:
        assert type(e_err).__name__ == t_type.__name__, (type(e_err), t_type, str(e_err), t_msg)
        assert str(e_err) == t_msg, (str(e_err), t_msg)
    else:
        raise AssertionError(f"engine did not raise; torch: {t_type.__name__}: {t_msg}")
    return t_msg
