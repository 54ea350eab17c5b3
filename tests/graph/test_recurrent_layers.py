"""The recurrent layers (ops/recurrent_layers.py: rnn, lstm, gru) against PyTorch: each node
starts from the weights PyTorch's constructor draws after manual_seed(seed); its output, its
parameters' gradients and its input edge's gradient are the torch module's; stored weights are
used; a training writes them back; export writes `nn.LSTM(...)` called as `layer(x)[0]` and
reads back to the same node; handwritten code and a traced module with nn.LSTM become the
node, and what the node cannot say (dropout, an initial state, h_n) is refused in words."""

import numpy as np
import pytest
import torch
from _docs import chain, doc, edge, node, tensor
from _numbers import close

import wiregrad as wg
from backend.graph import registry, run_records, validate
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.importing.importer import ImportFailed, from_python
from backend.graph.running.trainer import Trainer
from backend.graph.tracing import CaptureError

CLASSES = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}


def _input(shape):
    return np.random.default_rng(sum(shape)).normal(size=shape).tolist()


def _torch_args(op, params, x_shape):
    """PyTorch's constructor arguments of the node's module (its LayerForm's, with the input's
    last dim)."""
    spec = registry.get(op)
    full = {p.name: p.default for p in spec.params} | params
    return spec.layer.args(torch.zeros(x_shape), full)


def _seeded(op, params, x_shape, dtype=torch.float64):
    """The torch module as a person makes it: manual_seed(seed), then the constructor (in
    the input's dtype, as the node makes it: float64 draws are not float32's)."""
    torch.manual_seed(params.get("seed", 0))
    return CLASSES[op](**_torch_args(op, params, x_shape), dtype=dtype)


# (op, params, input shape)
CASES = [
    ("lstm", {}, (3, 2, 5)),
    ("lstm", {"hidden_size": 3, "num_layers": 2, "bidirectional": True, "batch_first": True,
              "seed": 4}, (2, 4, 3)),
    ("lstm", {"hidden_size": 5, "proj_size": 2, "num_layers": 2, "seed": 1}, (3, 2, 4)),
    ("lstm", {"hidden_size": 3, "bias": False, "seed": 2}, (4, 3)),  # unbatched (L, H_in)
    ("gru", {"hidden_size": 3, "num_layers": 3, "seed": 5}, (3, 2, 2)),
    ("gru", {"bidirectional": True, "batch_first": True, "seed": 6}, (2, 3, 4)),
    ("rnn", {"hidden_size": 3, "nonlinearity": "relu", "bias": False, "seed": 3}, (3, 2, 4)),
    ("rnn", {"num_layers": 2, "bidirectional": True, "seed": 7}, (5, 1, 2)),
]  # fmt: skip


def _layer_doc(op, params, shape, **fields):
    """x -> layer -> tanh -> sum (float64)."""
    src = tensor("x", value=_input(shape), dtype="float64", requires_grad=True)
    nodes, edges = chain([("l", op, params), ("t", "tanh", {}), ("s", "sum", {})])
    return doc([src, *nodes], edges, target="s", **fields)


@pytest.mark.parametrize("op, params, shape", CASES)
def test_value_and_gradients_are_pytorchs_from_the_seed(op, params, shape):
    d = _layer_doc(op, params, shape)
    assert validate(d) == []
    res, _ = run_records(d, "backward")
    assert res.status == "ok", res.error

    layer = _seeded(op, params, shape)
    x = torch.tensor(_input(shape), dtype=torch.float64, requires_grad=True)
    out = layer(x)[0]
    out.retain_grad()
    torch.tanh(out).sum().backward()

    close(res.values["l"], out)
    names = sorted(f"l.{n}" for n, _ in layer.named_parameters())
    assert sorted(k for k in res.leaf_grads if k.startswith("l.")) == names
    for name, p in layer.named_parameters():
        close(res.leaf_grads[f"l.{name}"], p.grad, what=name)
    close(res.edge_grads["l-t"], out.grad)
    close(res.edge_grads["x-l"], x.grad)


def test_stored_weights_are_used_and_a_training_writes_them_back():
    params = {"hidden_size": 2, "num_layers": 2, "seed": 3}
    torch.manual_seed(11)
    other = CLASSES["gru"](**_torch_args("gru", params, (3, 2, 4))).double()
    stored = {k: v.tolist() for k, v in other.state_dict().items()}
    res, _ = run_records(_layer_doc("gru", {**params, **stored}, (3, 2, 4)), "forward")
    x = torch.tensor(_input((3, 2, 4)), dtype=torch.float64)
    close(res.values["l"], other(x)[0])

    training = {"loss": "s", "optimizer": "sgd", "lr": 0.1, "steps": 2}
    d = _layer_doc("lstm", {"hidden_size": 3, "seed": 1}, (3, 2, 4), training=training)
    tr = Trainer(d)
    tr.run()
    back = {n.id: n.params for n in tr.written_back().nodes}["l"]
    layer = tr.ctxs["l"].layer
    for key in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
        close(np.array(back[key]), getattr(layer, key), what=key)
    assert "weight_ih_l1" not in back and "weight_hr_l0" not in back


def test_shape_problems_are_pytorchs_words_at_the_node():
    d = doc(
        [tensor("x", [2, 3, 4, 5], init="zeros"), node("l", "lstm", hidden_size=3)],
        [edge("x-l", "x", "l")],
    )
    (problem,) = validate(d)
    with pytest.raises(ValueError) as info:
        torch.nn.LSTM(5, 3)(torch.zeros(2, 3, 4, 5))
    assert problem.node == "l" and problem.message == str(info.value)
    d = doc(
        [tensor("x", [2, 3, 4], init="zeros"), node("l", "lstm", hidden_size=3, proj_size=3)],
        [edge("x-l", "x", "l")],
    )
    (problem,) = validate(d)
    assert problem.node == "l" and problem.message == "proj_size has to be smaller than hidden_size"


@pytest.mark.parametrize("flavor", ["engine", "torch"])
@pytest.mark.parametrize("op, params, shape", CASES[1:3] + CASES[5:])
def test_export_writes_the_module_and_reads_back_to_the_same_node(op, params, shape, flavor):
    d = _layer_doc(op, params, shape)
    script = to_python(d, flavor)
    cls = CLASSES[op].__name__
    assert f"_layer = nn.{cls}(" in script and "_layer(x)[0]" in script
    back = from_python(script)
    node_back = {n.id: n for n in back.nodes}["l"]
    spec = registry.get(op)
    assert node_back.op == op
    assert resolved_params(spec, node_back.params) == resolved_params(spec, {**params})
    a, _ = run_records(d, "backward")
    b, _ = run_records(back, "backward")
    close(b.values["l"], a.values["l"])
    for k, g in a.leaf_grads.items():
        close(b.leaf_grads[k], g, what=k)


def test_the_exported_constructor_reads_as_pytorch_writes_it():
    d = _layer_doc("lstm", CASES[1][1], CASES[1][2])
    script = to_python(d, "torch")
    assert "torch.manual_seed(4)\n" in script
    assert "nn.LSTM(3, 3, num_layers=2, batch_first=True, bidirectional=True" in script
    rnn = to_python(_layer_doc("rnn", CASES[6][1], CASES[6][2]), "torch")
    assert 'nn.RNN(4, 3, nonlinearity="relu", bias=False, dtype=torch.float64)' in rnn


def test_handwritten_pytorch_code_with_an_lstm_reads_as_its_node():
    script = """
import torch
from torch import nn

torch.manual_seed(2)
lstm = nn.LSTM(4, 6, 2, batch_first=True)
gru = nn.GRU(input_size=6, hidden_size=3, bidirectional=True)
x = torch.randn(2, 5, 4, requires_grad=True)
h = lstm(x)[0]
out = gru(h)[0]
loss = out.sum()
loss.backward()
"""
    d = from_python(script)
    ops = {n.id: (n.op, n.params) for n in d.nodes}
    assert ops["h"] == ("lstm", {"hidden_size": 6, "num_layers": 2, "batch_first": True,
                                 "seed": 2})  # fmt: skip
    assert ops["out"][0] == "gru"
    assert ops["out"][1]["hidden_size"] == 3 and ops["out"][1]["bidirectional"] is True


@pytest.mark.parametrize(
    "line, words",
    [
        ("lstm = nn.LSTM(4, 6, dropout=0.5)\nh = lstm(x)[0]", "nn.LSTM's dropout=0.5 is not"),
        ("lstm = nn.LSTM(4, 6)\nh = lstm(x, (x, x))[0]", "takes at most 1 tensors"),
        ("lstm = nn.LSTM(4, 6, 2, True, False, 0.0, False, 0, None, None, 1)\nh = lstm(x)[0]",
         "nn.LSTM takes at most 10 arguments"),
        # the module returns a tuple: the node is its [0], never the bare call
        ("lstm = nn.LSTM(4, 6)\nh = lstm(x)\ny = h[0].sum()",
         "lstm(x) returns (output, (h_n, c_n)); the graph's LSTM node is the output: write "
         "lstm(x)[0]"),
        ("gru = nn.GRU(4, 6)\nh = gru(x)", "gru(x) returns (output, h_n)"),
        ("seq = nn.Sequential(nn.Linear(4, 4), nn.RNN(4, 2))\ny = seq(x)",
         "nn.RNN returns a tuple, which nn.Sequential would pass on"),
    ],
)  # fmt: skip
def test_what_the_node_cannot_say_is_refused_at_its_line(line, words):
    script = f"import torch\nfrom torch import nn\nx = torch.randn(3, 2, 4)\n{line}\n"
    with pytest.raises(ImportFailed) as info:
        from_python(script)
    assert words in str(info.value)


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(10, 4)
        self.rnn = torch.nn.RNN(4, 3, nonlinearity="relu", bias=False)
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        y = self.gru(out)[0]
        z, _ = self.rnn(y)
        return self.fc(z)


def test_a_traced_module_with_an_lstm_maps_each_recurrent_layer_to_its_node():
    torch.manual_seed(0)
    model = Tagger()
    x = torch.randn(2, 4, 3)

    def fn(x):
        return model(x).pow(2).mean()

    d = wg.trace(fn, x)
    (tagger,) = d["modules"]
    assert [n["op"] for n in tagger["nodes"] if n["op"] in CLASSES] == ["lstm", "gru", "rnn"]
    out = wg.run(d, backward=True)
    assert out.status == "ok", out.error
    expected = fn(x)
    expected.backward()
    np.testing.assert_allclose(out.loss, expected.item(), rtol=1e-5)
    for name, p in model.named_parameters():
        got = out.grads[f"model.{name}"]
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)
    back = wg.from_code(wg.to_code(d, flavor="torch"))
    np.testing.assert_allclose(wg.run(back, backward=True).loss, out.loss, rtol=1e-6)


def test_tracing_refuses_the_final_state_an_initial_state_and_dropout_in_words():
    lstm = torch.nn.LSTM(3, 4)
    x = torch.randn(2, 1, 3)
    with pytest.raises(CaptureError, match=r"final state \(h_n, c_n\) is not drawn"):
        wg.trace(lambda x: lstm(x)[1][0].sum(), x)
    h0 = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
    with pytest.raises(CaptureError, match="called with its input only"):
        wg.trace(lambda x: lstm(x, h0)[0].sum(), x)
    deep = torch.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    with pytest.raises(CaptureError, match=r"dropout=0\.5"):
        wg.trace(lambda x: deep(x)[0].sum(), x)


@pytest.mark.parametrize(
    "line, read",
    [
        ("y = attn(x, x, x)[0]", True),
        ("y, _ = attn(x, x, x, need_weights=False)", True),
        ("y, w = attn(x, x, x)", False),
        ("y = attn(x, x, x)", False),
    ],
)
def test_attention_is_read_only_as_the_first_of_its_tuple(line, read):
    """nn.MultiheadAttention returns (output, weights) and the node is the output: a call read
    without taking the first of the tuple would make `y[0]` the output's first row."""
    script = (
        "import torch\nfrom torch import nn\n"
        "attn = nn.MultiheadAttention(4, 2, batch_first=True)\n"
        "x = torch.ones(2, 3, 4, requires_grad=True)\n"
        f"{line}\nL = y.sum()\nL.backward()\n"
    )
    if read:
        doc = from_python(script)
        assert [n.op for n in doc.nodes if n.id == "y"] == ["multi_head_attention"]
    else:
        with pytest.raises(ImportFailed, match=r"attn\(.*\)\[0\]"):
            from_python(script)
