"""RNN, LSTM, GRU and their cells against PyTorch: parameter names and shapes, outputs and the
gradients of every parameter, input and initial state (weights copied torch -> engine), the
argument and shape checks' messages, and the initialisation's bounds."""

import time
import warnings

import numpy as np
import pytest
import torch
from _torch_compare import eg
from hypothesis import given, settings
from hypothesis import strategies as st

KINDS = ("RNN", "LSTM", "GRU")


def _copy_weights(t_mod, e_mod):
    """torch -> engine, through load_state_dict (so the names must agree)."""
    state = {k: eg.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()}
    e_mod.load_state_dict(state)


def _pair(kind, *args, dtype="float64", **kwargs):
    t_mod = getattr(torch.nn, kind)(*args, dtype=getattr(torch, dtype), **kwargs)
    e_mod = getattr(eg.nn, kind)(*args, dtype=getattr(eg, dtype), **kwargs)
    _copy_weights(t_mod, e_mod)
    return t_mod, e_mod


def _leaf(m, arr):
    return m.tensor(arr, requires_grad=True)


def _flat(out):
    """The tensors of a layer's return value, in order."""
    if isinstance(out, tuple):
        return [t for o in out for t in _flat(o)]
    return [out]


def _close(e, t, what, tol):
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != {tuple(t.shape)}"
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), err_msg=what, **tol)


TOL64 = dict(rtol=1e-9, atol=1e-11)
TOL32 = dict(rtol=2e-5, atol=2e-6)


def _compare(t_mod, e_mod, x, states=(), seed=0, tol=TOL64, train=False):
    """Run both layers on the same input/initial states; compare every output, then backprop
    the same random upstream gradients and compare the grads of inputs and parameters."""
    t_mod.train(train)
    e_mod.train(train)
    t_in = [_leaf(torch, a) for a in (x, *states)]
    e_in = [_leaf(eg, a) for a in (x, *states)]

    def call(mod, ins):
        if not states:
            return mod(ins[0])
        hx = ins[1] if len(ins) == 2 else tuple(ins[1:])
        return mod(ins[0], hx)

    t_out, e_out = _flat(call(t_mod, t_in)), _flat(call(e_mod, e_in))
    assert len(t_out) == len(e_out)
    rng = np.random.default_rng(seed)
    t_loss, e_loss = 0, 0
    for i, (t, e) in enumerate(zip(t_out, e_out)):
        _close(e, t, f"output {i}", tol)
        g = rng.standard_normal(tuple(t.shape)).astype(t.detach().numpy().dtype)
        t_loss = t_loss + (t * torch.tensor(g)).sum()
        e_loss = e_loss + (e * eg.tensor(g)).sum()
    t_loss.backward()
    e_loss.backward()
    for i, (t, e) in enumerate(zip(t_in, e_in)):
        _close(e.grad, t.grad, f"grad of input {i}", tol)
    e_params = dict(e_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        _close(e_params[name].grad, p.grad, f"grad of {name}", tol)


# -- structure -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_parameter_names_and_shapes(kind, bias, bidirectional):
    t_mod, e_mod = _pair(kind, 3, 4, 2, bias=bias, bidirectional=bidirectional)
    t_shapes = [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    e_shapes = [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()]
    assert e_shapes == t_shapes
    assert repr(e_mod) == repr(t_mod)


def test_lstm_proj_parameters_and_repr():
    t_mod, e_mod = _pair("LSTM", 3, 5, 2, proj_size=2, bidirectional=True)
    t_shapes = [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == t_shapes
    assert repr(e_mod) == repr(t_mod)


@pytest.mark.parametrize(
    "kind,args,kwargs",
    [
        ("RNNCell", (3, 4), {}),
        ("RNNCell", (3, 4), {"bias": False, "nonlinearity": "relu"}),
        ("LSTMCell", (3, 4), {}),
        ("GRUCell", (3, 4), {"bias": False}),
        ("RNN", (3, 4, 1, "relu"), {"batch_first": True, "dropout": 0.5}),
    ],
)
def test_cell_and_positional_names(kind, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod, e_mod = _pair(kind, *args, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in t_mod.named_parameters()
    ]
    assert repr(e_mod) == repr(t_mod)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_bounds(kind):
    """Every parameter is drawn from U(-1/sqrt(hidden), 1/sqrt(hidden)) (no zero biases)."""
    mod = getattr(eg.nn, kind)(6, 16)
    for name, p in mod.named_parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= 0.25, name
        assert a.std() > 0.1, name


# -- values and gradients ------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["RNN_tanh", "RNN_relu", "LSTM", "GRU", "LSTM_proj"]),
    seq=st.integers(1, 5),
    batch=st.integers(1, 3),
    input_size=st.integers(1, 4),
    hidden=st.integers(2, 5),
    layers=st.integers(1, 3),
    bias=st.booleans(),
    batch_first=st.booleans(),
    bidirectional=st.booleans(),
    unbatched=st.booleans(),
    with_state=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sequence_layers_match_torch(
    kind, seq, batch, input_size, hidden, layers, bias, batch_first, bidirectional, unbatched,
    with_state, seed,
):  # fmt: skip
    kwargs = dict(bias=bias, batch_first=batch_first, bidirectional=bidirectional)
    if kind.startswith("RNN"):
        kwargs["nonlinearity"] = kind[4:]
    if kind == "LSTM_proj":
        kwargs["proj_size"] = hidden - 1
    base = kind.split("_")[0]
    t_mod, e_mod = _pair(base, input_size, hidden, layers, **kwargs)
    rng = np.random.default_rng(seed)
    shape = (batch, seq) if batch_first else (seq, batch)
    x = rng.standard_normal((seq, input_size) if unbatched else (*shape, input_size))
    states = ()
    if with_state:
        n = layers * (2 if bidirectional else 1)
        out_h = hidden - 1 if kind == "LSTM_proj" else hidden
        lead = (n,) if unbatched else (n, batch)
        states = (rng.standard_normal((*lead, out_h)),)
        if base == "LSTM":
            states += (rng.standard_normal((*lead, hidden)),)
    _compare(t_mod, e_mod, x, states, seed)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["RNNCell_tanh", "RNNCell_relu", "LSTMCell", "GRUCell"]),
    batch=st.integers(1, 4),
    input_size=st.integers(1, 4),
    hidden=st.integers(1, 5),
    bias=st.booleans(),
    unbatched=st.booleans(),
    with_state=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_cells_match_torch(kind, batch, input_size, hidden, bias, unbatched, with_state, seed):
    base = kind.split("_")[0]
    kwargs = {"bias": bias}
    if base == "RNNCell":
        kwargs["nonlinearity"] = kind.split("_")[1]
    t_mod, e_mod = _pair(base, input_size, hidden, **kwargs)
    rng = np.random.default_rng(seed)
    lead = () if unbatched else (batch,)
    x = rng.standard_normal((*lead, input_size))
    states = ()
    if with_state:
        states = tuple(
            rng.standard_normal((*lead, hidden)) for _ in range(2 if base == "LSTMCell" else 1)
        )
    _compare(t_mod, e_mod, x, states, seed)


@pytest.mark.parametrize("kind", KINDS)
def test_float32(kind):
    t_mod, e_mod = _pair(kind, 4, 8, 2, dtype="float32", bidirectional=True)
    x = np.random.default_rng(1).standard_normal((6, 3, 4)).astype(np.float32)
    _compare(t_mod, e_mod, x, tol=TOL32)


@pytest.mark.parametrize("kind", KINDS)
def test_dropout_between_layers(kind):
    """p=1 zeroes the first layer's output in training (deterministic, so comparable); in eval
    dropout does nothing."""
    t_mod, e_mod = _pair(kind, 3, 4, 2, dropout=1.0)
    x = np.random.default_rng(2).standard_normal((5, 2, 3))
    _compare(t_mod, e_mod, x, train=True)
    _compare(t_mod, e_mod, x, train=False)


def test_speed_is_sane():
    """A 2-layer LSTM over 50 steps of a 32-batch, forward and backward: about 0.4 s of CPU.
    CPU time, not wall time, so a loaded machine does not fail it."""
    mod = eg.nn.LSTM(32, 64, 2)
    x = eg.randn(50, 32, 32, requires_grad=True)
    start = time.process_time()
    out, _ = mod(x)
    out.sum().backward()
    assert time.process_time() - start < 3.0


# -- errors --------------------------------------------------------------------------------------
def _same_error(make):
    def run(m):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                make(m)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e), str(e).split("\n")[0]
        return None

    want = run(torch)
    assert want is not None
    assert run(eg) == want


def _f64(m, *shape):
    return m.zeros(*shape, dtype=m.float64)


def _lstm(m, x, h, c, cell=False):
    """An LSTM (or LSTMCell) of 3 -> 4 called on zeros of the given shapes."""
    mod = m.nn.LSTMCell(3, 4) if cell else m.nn.LSTM(3, 4)
    return mod(m.zeros(*x), (m.zeros(*h), m.zeros(*c)))


ERRORS = {
    "dropout_range": lambda m: m.nn.LSTM(3, 4, dropout=1.5),
    "dropout_bool": lambda m: m.nn.GRU(3, 4, dropout=True),
    "hidden_float": lambda m: m.nn.RNN(3, 4.0),
    "hidden_zero": lambda m: m.nn.RNN(3, 0),
    "layers_zero": lambda m: m.nn.LSTM(3, 4, 0),
    "proj_negative": lambda m: m.nn.LSTM(3, 4, proj_size=-1),
    "proj_too_big": lambda m: m.nn.LSTM(3, 4, proj_size=4),
    "proj_rnn": lambda m: m.nn.RNN(3, 4, proj_size=2),
    "proj_gru": lambda m: m.nn.GRU(3, 4, proj_size=2),
    "bad_nonlinearity": lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "rnn_1d": lambda m: m.nn.RNN(3, 4)(m.zeros(3)),
    "lstm_4d": lambda m: m.nn.LSTM(3, 4)(m.zeros(1, 2, 3, 3)),
    "gru_1d": lambda m: m.nn.GRU(3, 4)(m.zeros(3)),
    "input_size": lambda m: m.nn.RNN(3, 4)(m.zeros(2, 2, 5)),
    "dtype": lambda m: m.nn.GRU(3, 4)(_f64(m, 2, 2, 3)),
    "hidden_shape": lambda m: m.nn.RNN(3, 4)(m.zeros(2, 2, 3), m.zeros(1, 3, 4)),
    "hidden_dims": lambda m: m.nn.GRU(3, 4)(m.zeros(2, 2, 3), m.zeros(2, 4)),
    "hidden_dims_unbatched": lambda m: m.nn.GRU(3, 4)(m.zeros(2, 3), m.zeros(1, 2, 4)),
    "lstm_h_shape": lambda m: _lstm(m, (2, 2, 3), (1, 2, 3), (1, 2, 4)),
    "lstm_c_shape": lambda m: _lstm(m, (2, 2, 3), (1, 2, 4), (1, 1, 4)),
    "lstm_dims": lambda m: _lstm(m, (2, 2, 3), (2, 4), (1, 2, 4)),
    "lstm_dims_unbatched": lambda m: _lstm(m, (2, 3), (1, 1, 4), (1, 4)),
    "cell_3d": lambda m: m.nn.RNNCell(3, 4)(m.zeros(1, 2, 3)),
    "cell_hidden_3d": lambda m: m.nn.GRUCell(3, 4)(m.zeros(2, 3), m.zeros(1, 2, 4)),
    "lstmcell_hx_3d": lambda m: _lstm(m, (2, 3), (2, 4), (1, 2, 4), cell=True),
    "cell_input_size": lambda m: m.nn.RNNCell(3, 4)(m.zeros(2, 5), m.zeros(2, 4)),
    "cell_batch": lambda m: m.nn.GRUCell(3, 4)(m.zeros(2, 3), m.zeros(3, 4)),
    "cell_hidden_size": lambda m: m.nn.RNNCell(3, 4)(m.zeros(2, 3), m.zeros(2, 5)),
    "lstmcell_batch": lambda m: _lstm(m, (2, 3), (2, 4), (3, 4), cell=True),
    "lstmcell_hidden": lambda m: _lstm(m, (2, 3), (2, 5), (2, 4), cell=True),
    "cell_nonlinearity": lambda m: m.nn.RNNCell(3, 4, nonlinearity="gelu")(m.zeros(2, 3)),
}  # fmt: skip


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    _same_error(ERRORS[name])


def test_single_layer_dropout_warns_as_torch():
    with pytest.warns(UserWarning) as t_rec:
        torch.nn.LSTM(3, 4, dropout=0.2)
    with pytest.warns(UserWarning) as e_rec:
        eg.nn.LSTM(3, 4, dropout=0.2)
    assert str(e_rec[0].message) == str(t_rec[0].message)
