"""The model layers (ops/conv_layers.py, norm_layers.py, attention_layers.py) against PyTorch:
each layer node's value, its parameters' gradients and the gradient on each of its edges equal
those of the torch layer loaded with the same weights; shape problems are PyTorch's own
messages, at the node; train() / eval() of dropout and batch_norm; a training writes every
layer's state back into the document and the next run starts from it."""

import numpy as np
import pytest
import torch
from _docs import chain, doc, edge, node, tensor
from _numbers import close, npy

import engine as eg
from backend.graph import parse, registry, run_records, validate
from backend.graph.op_context import OpContext
from backend.graph.ops.layer_kit import attribute
from backend.graph.running.trainer import Trainer


class _Grab(OpContext):
    """An op context that keeps the module a layer node makes."""

    def module(self, key, factory):
        self.layer = factory()
        return self.layer


def torch_layer(op, params, x):
    """The torch module a layer node starts from on input `x`: its LayerForm's class and
    arguments, with the engine module's state (the node's seed, its stored values) loaded."""
    spec = registry.get(op)
    full = {p.name: p.default for p in spec.params} | params
    ctx = _Grab()
    with eg.no_grad():
        spec.run(ctx, [x], full)
    form = spec.layer
    layer = getattr(torch.nn, form.cls(x, full))(**form.args(x, full))
    state = {k: torch.tensor(npy(v)) for k, v in ctx.layer.state_dict().items()}
    layer.load_state_dict(state)
    return layer.double() if x.dtype == eg.float64 else layer


def _input(shape, kind="float"):
    rng = np.random.default_rng(sum(shape))
    if kind == "ids":
        return rng.integers(0, 6, shape).tolist()
    return rng.normal(size=shape).tolist()


# (op, params, input shape, input kind, the call on the torch layer)
CASES = [
    ("conv2d", {"out_channels": 3, "kernel_size": 3, "stride": 2, "padding": 1, "seed": 4},
     (2, 2, 7, 7), "float", None),
    ("conv2d", {"out_channels": 2, "kernel_size": 2, "bias": False, "seed": 1}, (3, 5, 5),
     "float", None),
    ("batch_norm", {"mode": "train"}, (5, 3), "float", None),
    ("batch_norm", {"mode": "train", "momentum": 0.3}, (2, 3, 4, 4), "float", None),
    ("batch_norm", {"running_mean": [0.5, -1.0, 0.0], "running_var": [2.0, 0.5, 1.0],
                    "weight": [1.0, 2.0, 3.0], "bias_value": [0.0, 0.1, -0.1]},
     (4, 3, 2), "float", "eval"),
    ("layer_norm", {}, (2, 3, 4), "float", None),
    ("layer_norm", {"normalized_shape": [3, 4], "elementwise_affine": True}, (2, 3, 4), "float",
     None),
    ("embedding", {"num_embeddings": 6, "embedding_dim": 4, "seed": 2}, (2, 5), "ids", None),
    ("multi_head_attention", {"num_heads": 2, "seed": 3}, (2, 3, 4), "float", "attention"),
    ("multi_head_attention", {"num_heads": 1, "bias": False}, (3, 2), "float", "attention"),
]  # fmt: skip


@pytest.mark.parametrize("op, params, shape, kind, how", CASES)
def test_layer_value_and_gradients_match_torch(op, params, shape, kind, how):
    """x -> layer -> tanh -> sum: the layer's value, each of its parameters' gradients, the
    gradient of its input edge and of its output edge, against the torch layer."""
    value = _input(shape, kind)
    dtype = "int64" if kind == "ids" else "float64"
    src = tensor("x", value=value, dtype=dtype, requires_grad=kind != "ids")
    nodes, edges = chain([("l", op, params), ("t", "tanh", {}), ("s", "sum", {})])
    d = doc([src, *nodes], edges, target="s")
    assert validate(d) == []
    res, _ = run_records(d, "backward")
    assert res.status == "ok", res.error

    x_eg = eg.tensor(value, dtype=eg.int64 if kind == "ids" else eg.float64)
    layer = torch_layer(op, params, x_eg)
    if how == "eval":
        layer.eval()
    x = torch.tensor(value, dtype=torch.int64 if kind == "ids" else torch.float64)
    x.requires_grad_(kind != "ids")
    out = layer(x, x, x, need_weights=False)[0] if how == "attention" else layer(x)
    out.retain_grad()
    torch.tanh(out).sum().backward()

    close(res.values["l"], out)
    for name, p in layer.named_parameters():
        close(res.leaf_grads[f"l.{name}"], p.grad)
    assert {k for k in res.leaf_grads if k.startswith("l.")} == {
        f"l.{n}" for n, _ in layer.named_parameters()
    }
    close(res.edge_grads["l-t"], out.grad)
    if kind != "ids":
        close(res.edge_grads["x-l"], x.grad)
    else:
        assert "x-l" not in res.edge_grads  # token ids take no gradient


@pytest.mark.parametrize(
    "op, params, x",
    [("max_pool2d", {"kernel_size": 2}, (2, 3, 6, 7)), ("avg_pool2d", {"kernel_size": 3,
      "stride": 2}, (1, 2, 7, 7)), ("gelu", {"approximate": "tanh"}, (3, 4))],
)  # fmt: skip
def test_pools_and_gelu_match_torch_functional(op, params, x):
    value = _input(x)
    src = tensor("x", value=value, dtype="float64", requires_grad=True)
    nodes, edges = chain([("l", op, params), ("t", "tanh", {}), ("s", "sum", {})])
    res, _ = run_records(doc([src, *nodes], edges, target="s"), "backward")
    xt = torch.tensor(value, dtype=torch.float64, requires_grad=True)
    out = getattr(torch.nn.functional, op)(xt, **params)
    torch.tanh(out).sum().backward()
    close(res.values["l"], out)
    close(res.edge_grads["x-l"], xt.grad)


def _torch_message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value).strip("'\"")


@pytest.mark.parametrize(
    "op, params, shape, dtype, call",
    [
        ("conv2d", {"out_channels": 2}, (2, 3), "float32",
         lambda x: torch.nn.Conv2d(3, 2, 3)(x)),
        ("conv2d", {"out_channels": 2, "kernel_size": 5}, (1, 1, 3, 3), "float32",
         lambda x: torch.nn.Conv2d(1, 2, 5)(x)),
        ("max_pool2d", {"kernel_size": 4}, (1, 1, 3, 3), "float32",
         lambda x: torch.nn.functional.max_pool2d(x, 4)),
        ("batch_norm", {}, (3,), "float32", lambda x: torch.nn.BatchNorm1d(3)(x)),
        ("layer_norm", {"normalized_shape": [5]}, (2, 4), "float32",
         lambda x: torch.nn.LayerNorm([5])(x)),
        ("embedding", {"num_embeddings": 4, "embedding_dim": 2}, (2, 3), "float32",
         lambda x: torch.nn.Embedding(4, 2)(x)),
        ("multi_head_attention", {"num_heads": 3}, (2, 3, 4), "float32",
         lambda x: torch.nn.MultiheadAttention(4, 3, batch_first=True)(x, x, x)),
    ],
)  # fmt: skip
def test_shape_problems_are_pytorchs_words_at_the_node(op, params, shape, dtype, call):
    d = doc(
        [tensor("x", list(shape), init="zeros", dtype=dtype), node("l", op, **params)],
        [edge("x-l", "x", "l")],
    )
    problems = validate(d)
    assert [p.node for p in problems] == ["l"], problems
    words = _torch_message(lambda: call(torch.zeros(shape)))
    assert problems[0].message == words


# -- train() and eval() ----------------------------------------------------------------------------
def _dropout_doc(mode="auto", p=0.5, seed=0):
    src = tensor("x", value=_input((4, 6)), requires_grad=True)
    nodes, edges = chain([("d", "dropout", {"p": p, "mode": mode, "seed": seed}), ("s", "sum", {})])
    return doc([src, *nodes], edges, target="s")


def test_dropout_in_eval_is_the_input_and_in_train_drops_and_scales():
    x = np.array(_input((4, 6)), dtype=np.float32)
    for mode in ("auto", "eval"):  # a forward or backward run is eval() unless the node says
        res, _ = run_records(_dropout_doc(mode), "backward")
        close(res.values["d"], x)
        close(res.edge_grads["x-d"], np.ones_like(x))
    res, _ = run_records(_dropout_doc("train", p=0.5), "backward")
    out, grad = npy(res.values["d"]), npy(res.edge_grads["x-d"])
    kept = out != 0
    assert 0 < kept.sum() < x.size  # some dropped, some kept
    close(out[kept], x[kept] * 2.0)  # the kept ones scaled by 1 / (1 - p)
    close(grad, kept * 2.0)  # the gradient is the mask, scaled the same
    again, _ = run_records(_dropout_doc("train", p=0.5), "backward")
    close(again.values["d"], out)  # the node's seed: the same mask every run
    other, _ = run_records(_dropout_doc("train", p=0.5, seed=1), "backward")
    assert not np.array_equal(npy(other.values["d"]), out)


def _bn_doc(mode="auto", training=None, **stored):
    src = tensor("x", value=(np.array(_input((6, 3))) * 3 + 1).tolist())
    nodes, edges = chain(
        [("fc", "linear", {"out_features": 2, "seed": 1}), ("bn", "batch_norm", {"mode": mode,
          **stored}), ("loss", "mse_loss", {})]
    )  # fmt: skip
    nodes.append(tensor("y", value=[[1.0, -1.0]] * 6))
    edges.append(edge("y-loss", "y", "loss", "target"))
    return doc([src, *nodes], edges, target="loss", training=training)


def test_batch_norm_uses_running_stats_in_eval_and_the_batchs_in_train():
    x = np.array(_input((6, 3))) * 3 + 1
    for mode, train in (("auto", False), ("eval", False), ("train", True)):
        res, _ = run_records(_bn_doc(mode), "forward")
        fc = torch_layer("linear", {"out_features": 2, "seed": 1}, eg.tensor(x.astype(np.float32)))
        bn = torch.nn.BatchNorm1d(2)
        bn.train(train)
        ref = bn(fc(torch.tensor(x, dtype=torch.float32)))
        close(res.values["bn"], ref)


def test_a_training_steps_in_train_mode_evaluates_in_eval_and_writes_running_stats_back():
    settings = {"loss": "loss", "optimizer": "sgd", "lr": 0.1, "steps": 3}
    d = _bn_doc(training=settings)
    tr = Trainer(d)
    losses = [tr.step() for _ in range(3)]

    x = torch.tensor(np.array(_input((6, 3))) * 3 + 1, dtype=torch.float32)
    fc = torch_layer("linear", {"out_features": 2, "seed": 1}, eg.tensor(x.numpy()))
    bn = torch.nn.BatchNorm1d(2)
    model = torch.nn.Sequential(fc, bn)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    y = torch.tensor([[1.0, -1.0]] * 6)
    ref = []
    model.train()
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        ref.append(loss.item())
    np.testing.assert_allclose(losses, ref, rtol=1e-5)
    model.eval()
    with torch.no_grad():
        eval_loss = torch.nn.functional.mse_loss(model(x), y).item()
    np.testing.assert_allclose(tr.evaluate(), eval_loss, rtol=1e-5)

    back = {n.id: n.params for n in tr.written_back().nodes}
    close(np.array(back["bn"]["running_mean"]), bn.running_mean)
    close(np.array(back["bn"]["running_var"]), bn.running_var)
    close(np.array(back["bn"]["weight"]), bn.weight)
    close(np.array(back["bn"]["bias_value"]), bn.bias)
    # the next run (eval) starts from the trained state: PyTorch's eval() loss
    res, _ = run_records(tr.written_back(), "forward")
    np.testing.assert_allclose(res.values["loss"].item(), eval_loss, rtol=1e-5)


def test_dropout_in_a_training_draws_a_new_mask_each_step_unless_its_mode_is_eval():
    def losses(mode):
        src = tensor("x", value=_input((8, 4)))
        nodes, edges = chain(
            [("fc", "linear", {"out_features": 3, "seed": 2}), ("d", "dropout", {"mode": mode}),
             ("loss", "mse_loss", {})]
        )  # fmt: skip
        nodes.append(tensor("y", [8, 3], init="zeros"))
        edges.append(edge("y-loss", "y", "loss", "target"))
        settings = {"loss": "loss", "optimizer": "sgd", "lr": 1e-9, "steps": 4}
        tr = Trainer(doc([src, *nodes], edges, training=settings))
        return [tr.step() for _ in range(4)], tr.evaluate()

    dropped, evaluated = losses("auto")
    assert len(set(dropped)) == 4  # a new mask each step (the weights barely move)
    kept, evaluated_eval = losses("eval")
    np.testing.assert_allclose(kept, [evaluated_eval] * 4, rtol=1e-5)  # no dropout at all
    np.testing.assert_allclose(evaluated, evaluated_eval, rtol=1e-6)  # evaluation is eval()


# -- write-back of every layer's state -------------------------------------------------------------
def _cnn_doc(steps=2):
    """digits -> conv2d -> batch_norm -> relu -> max_pool2d -> dropout -> flatten ->
    layer_norm -> linear -> cross_entropy <- labels."""
    nodes = [
        node("data", "dataset", kind="digits", n=32, seed=1, labels="classes"),
        node("y", "labels"),
        node("conv", "conv2d", out_channels=3, kernel_size=3, padding=1, seed=1),
        node("bn", "batch_norm"),
        node("act", "relu"),
        node("pool", "max_pool2d", kernel_size=2),
        node("drop", "dropout", p=0.2),
        node("flat", "flatten", start_dim=1),
        node("ln", "layer_norm"),
        node("fc", "linear", out_features=10, seed=2),
        node("loss", "cross_entropy"),
    ]
    ids = [n["id"] for n in nodes if n["id"] != "y"]
    edges = [edge(f"{a}-{b}", a, b) for a, b in zip(ids, ids[1:])]
    edges += [edge("data-y", "data", "y", "dataset"), edge("y-loss", "y", "loss", "target")]
    training = {"loss": "loss", "optimizer": "adam", "lr": 0.01, "steps": steps, "batch_size": 8}
    return doc(nodes, edges, target="loss", training=training)


def _seq_doc(steps=2):
    """ids -> embedding -> multi_head_attention -> gelu -> mean(dim 1) -> linear -> loss."""
    nodes = [
        tensor("ids", value=[[1, 2, 3, 0], [4, 4, 1, 2], [0, 1, 0, 3]], dtype="int64"),
        node("emb", "embedding", num_embeddings=5, embedding_dim=4, seed=1),
        node("att", "multi_head_attention", num_heads=2, seed=2),
        node("act", "gelu"),
        node("pool", "mean", dim=1),
        node("fc", "linear", out_features=2, seed=3),
        node("loss", "cross_entropy"),
        tensor("y", value=[0, 1, 1], dtype="int64"),
    ]
    ids = ["ids", "emb", "att", "act", "pool", "fc", "loss"]
    edges = [edge(f"{a}-{b}", a, b) for a, b in zip(ids, ids[1:])]
    edges.append(edge("y-loss", "y", "loss", "target"))
    training = {"loss": "loss", "optimizer": "adam", "lr": 0.05, "steps": steps}
    return doc(nodes, edges, target="loss", training=training)


@pytest.mark.parametrize("make", [_cnn_doc, _seq_doc])
def test_training_writes_every_layers_state_back_and_the_next_run_starts_from_it(make):
    d = make()
    tr = Trainer(d)
    tr.run()
    back = tr.written_back()
    params = {n.id: n.params for n in back.nodes}
    for n in d.nodes:
        form = registry.get(n.op).layer
        for param, key in form.state if form else ():
            layer = tr.ctxs[n.id].layer
            t = attribute(layer, key)
            if t is None:
                continue
            assert param not in n.params  # the document had none: fresh from the seed
            close(np.array(params[n.id][param], dtype=np.float32), t)
    assert validate(back) == []
    # the next run (eval) computes what the trainer's evaluation computes
    res, _ = run_records(back, "forward")
    np.testing.assert_allclose(res.values["loss"].item(), tr.evaluate(), rtol=1e-5)
    # and a second training picks up where the first ended
    again = Trainer(back)
    np.testing.assert_allclose(again.evaluate(), tr.evaluate(), rtol=1e-5)


def test_trained_values_of_an_old_size_are_stale_in_pytorchs_words():
    tr = Trainer(_cnn_doc(steps=1))
    tr.run()
    data = tr.written_back().model_dump(mode="json")
    conv = next(n for n in data["nodes"] if n["id"] == "conv")
    conv["params"]["out_channels"] = 4
    problems = validate(parse(data))
    stale = [(p.node, p.param) for p in problems if p.code == "stale_values"]
    assert ("conv", "weight") in stale and ("conv", "bias_value") in stale
    words = next(p.message for p in problems if p.param == "weight")
    assert words == (
        "size mismatch for conv.weight: copying a param with shape torch.Size([3, 1, 3, 3]) "
        "from checkpoint, the shape in current model is torch.Size([4, 1, 3, 3])."
    )


# -- the LeNet template ----------------------------------------------------------------------------
def test_lenet_template_trains_to_95_percent_on_digits_within_its_steps():
    from backend.graph.document.templates import load_template

    d = load_template("lenet-digits")
    assert d.training.steps <= 300
    tr = Trainer(d)
    assert tr.accuracy() < 0.2  # untrained: about one in ten
    assert tr.run() == "ok"
    assert tr.accuracy() >= 0.95
    back = tr.written_back()  # the next run starts from the trained kernels
    res, _ = run_records(back, "forward")
    np.testing.assert_allclose(res.values["loss"].item(), tr.evaluate(), rtol=1e-5)
    assert len(back.node("conv1").params["weight"]) == 8


@pytest.mark.parametrize("template_id", ["residual-block-digits", "transformer-block"])
def test_residual_and_transformer_templates_learn_their_task(template_id):
    from backend.graph.document.templates import load_template

    d = load_template(template_id)
    assert d.training.steps <= 200
    tr = Trainer(d)
    before = tr.evaluate()
    assert tr.run() == "ok"
    assert tr.evaluate() < before / 5
    assert tr.accuracy() >= 0.95
