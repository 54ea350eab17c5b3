"""Conv1d/2d/3d with padding_mode 'reflect', 'replicate' and 'circular' (and 'zeros') against
PyTorch: outputs and the input, weight and bias gradients over random geometries (int, tuple,
'same' and 'valid' padding), and the constructor's and forward's messages."""

import re

import numpy as np
import pytest
import torch
from _module_pairs import assert_close, backward_both, copy_weights, leaves, same_error
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg

MODES = ("zeros", "reflect", "replicate", "circular")


@st.composite
def geometries(draw):
    nd = draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    kind = draw(st.sampled_from(["int", "tuple", "same", "valid"]))
    stride = 1 if kind == "same" else draw(st.integers(1, 2))
    # reflect needs padding < input size; the input is made large enough for every case
    padding = {
        "int": draw(st.integers(0, 2)),
        "tuple": tuple(draw(st.integers(0, 2)) for _ in range(nd)),
        "same": "same",
        "valid": "valid",
    }[kind]
    size = tuple(draw(st.integers(dd * (kk - 1) + 3, dd * (kk - 1) + 5)) for kk, dd in
                 zip(k, dil))  # fmt: skip
    groups = draw(st.sampled_from([1, 2]))
    return nd, k, dil, stride, padding, size, groups


@settings(max_examples=40, deadline=None)
@given(
    geo=geometries(),
    mode=st.sampled_from(MODES),
    bias=st.booleans(),
    batched=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_conv_with_padding_mode_matches_torch(geo, mode, bias, batched, seed):
    nd, k, dil, stride, padding, size, groups = geo
    name = f"Conv{nd}d"
    args = (2 * groups, 3 * groups, k)
    kwargs = dict(stride=stride, padding=padding, dilation=dil, groups=groups, bias=bias,
                  padding_mode=mode)  # fmt: skip
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    e_mod = getattr(eg.nn, name)(*args, **kwargs)
    copy_weights(t_mod, e_mod)
    shape = ((2,) if batched else ()) + (2 * groups, *size)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    (tx,), (ex,) = leaves(x)
    t_out, e_out = t_mod(tx), e_mod(ex)
    assert_close(e_out, t_out, what="output")
    backward_both(t_out, e_out, seed)
    assert_close(ex.grad, tx.grad, what="input grad")
    # weight and bias gradients sum over every output cell: float32 sums in another order
    sums = {"rtol": 2e-5, "atol": 2e-5}
    assert_close(e_mod.weight.grad, t_mod.weight.grad, sums, "weight grad")
    if bias:
        assert_close(e_mod.bias.grad, t_mod.bias.grad, sums, "bias grad")
    assert repr(e_mod) == repr(t_mod)
    assert e_mod._reversed_padding_repeated_twice == list(t_mod._reversed_padding_repeated_twice)


def _set_words(msg):
    """The message with its set literal's words sorted (a set prints in hash order)."""
    return re.sub(r"\{([^}]*)\}", lambda m: str(sorted(m.group(1).split(", "))), msg)


def test_invalid_padding_mode_message():
    msgs = []
    for m in (torch, eg):
        with pytest.raises(ValueError) as err:
            m.nn.Conv2d(2, 3, 3, padding_mode="mirror")
        msgs.append(_set_words(str(err.value)))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_transposed_refuses_other_modes(mode):
    same_error(
        lambda: torch.nn.ConvTranspose2d(2, 3, 3, padding_mode=mode),
        lambda: eg.nn.ConvTranspose2d(2, 3, 3, padding_mode=mode),
    )


def test_same_padding_with_stride_is_refused():
    same_error(
        lambda: torch.nn.Conv1d(2, 3, 3, stride=2, padding="same", padding_mode="reflect"),
        lambda: eg.nn.Conv1d(2, 3, 3, stride=2, padding="same", padding_mode="reflect"),
    )


def test_reflect_padding_as_large_as_the_input_is_refused():
    x = np.zeros((1, 2, 2), np.float32)

    def call(m):
        conv = m.nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect")
        return lambda: conv(m.tensor(x))

    same_error(call(torch), call(eg))
