"""LazyLinear and LazyConv1d/2d/3d against PyTorch: the repr and parameters before the first
call, the sizes read from the input, the class they become, their initialisation bounds, then
(weights copied torch -> engine) outputs and gradients; the input checks' messages."""

import math

import numpy as np
import pytest
import torch
from _module_pairs import assert_close, backward_both, copy_weights, leaves, same_error

import engine as eg

CASES = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"groups": 2}, (2, 6, 7)),
    ("LazyConv1d", (4, 3), {"padding": 1, "padding_mode": "reflect"}, (6, 7)),
    ("LazyConv2d", (3, (2, 3)), {"stride": 2, "bias": False}, (2, 5, 6, 7)),
    ("LazyConv3d", (2, 2), {"padding": "same"}, (1, 3, 4, 4, 5)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", CASES)
def test_lazy_layer_matches_torch(name, args, kwargs, shape):
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    e_mod = getattr(eg.nn, name)(*args, **kwargs)
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [type(p).__name__ for p in e_mod.parameters()] == [
        type(p).__name__ for p in t_mod.parameters()
    ]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    (tx,), (ex,) = leaves(x)
    t_mod(tx)
    e_mod(ex)
    assert type(e_mod).__name__ == type(t_mod).__name__
    assert repr(e_mod) == repr(t_mod)
    for (tn, tp), (en, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        assert (en, type(ep).__name__, tuple(ep.shape)) == (tn, type(tp).__name__, tuple(tp.shape))
    # initialised as the plain layer: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    fan_in = int(np.prod(e_mod.weight.shape[1:]))
    assert float(e_mod.weight.abs().max()) <= 1 / math.sqrt(fan_in) + 1e-7
    assert float(e_mod.weight.abs().max()) > 0
    copy_weights(t_mod, e_mod)
    t_out, e_out = t_mod(tx), e_mod(ex)
    assert_close(e_out, t_out, what="output")
    backward_both(t_out, e_out)
    assert_close(ex.grad, tx.grad, what="input grad")
    for (n, tp), (_, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        assert_close(ep.grad, tp.grad, what=n)


def test_uninitialized_parameter_repr():
    assert repr(eg.nn.LazyLinear(2).weight) == repr(torch.nn.LazyLinear(2).weight)


def test_in_features_set_and_no_draw_before_the_call():
    state = eg.random.get_rng_state()
    m = eg.nn.LazyLinear(3)
    assert m.in_features == 0 and m.out_features == 3
    assert np.array_equal(eg.random.get_rng_state().numpy(), state.numpy())
    m(eg.ones(1, 7))
    assert m.in_features == 7 and isinstance(m, eg.nn.Linear)


@pytest.mark.parametrize(
    "name, args, shape",
    [("LazyConv2d", (4, 3), (2, 5)), ("LazyConv1d", (4, 3), (6, 7, 2, 2))],
)
def test_conv_input_dims_message(name, args, shape):
    x = np.zeros(shape, np.float32)

    def call(m):
        mod = getattr(m.nn, name)(*args)
        return lambda: mod(m.tensor(x))

    msg = same_error(call(torch), call(eg))
    assert "input of size" in msg


def test_conv_groups_must_divide_the_input_channels():
    x = np.zeros((1, 5, 6), np.float32)
    same_error(
        lambda: torch.nn.LazyConv1d(4, 3, groups=2)(torch.tensor(x)),
        lambda: eg.nn.LazyConv1d(4, 3, groups=2)(eg.tensor(x)),
    )
