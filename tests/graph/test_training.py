"""Training a document (backend/graph/running/trainer.py) against the same loop written in PyTorch:
the same initial weights, the same minibatches, the same losses step for step."""

import threading
import time

import numpy as np
import pytest
import torch
from pydantic import ValidationError

import engine as eg
from backend.graph import GraphInvalid, parse, registry, run
from backend.graph.registry import OpSpec, Port
from backend.graph.running.trainer import Control, Trainer, TrainingError

N = 100
_rng = np.random.default_rng(7)
X = _rng.uniform(-1, 1, (N, 2)).astype(np.float32)
Y = ((X[:, 0] * X[:, 1]) > 0).astype(np.float32)[:, None]
X3 = _rng.normal(size=(N, 3)).astype(np.float32)


@pytest.fixture(scope="module", autouse=True)
def data_ops():
    """Two test ops of category `data` (as the `dataset` / `labels` ops are): the trainer
    treats every data node as the dataset, sliced into minibatches."""
    feats = {"xy": X, "xyz": X3}
    specs = [
        OpSpec(
            "test_points",
            "data",
            "test points",
            (),
            run=lambda ctx, ins, p: eg.tensor(feats[p.get("which", "xy")]),
            code=None,
            params=(registry.Param("which", "choice", "xy", choices=("xy", "xyz")),),
        ),
        OpSpec(
            "test_labels",
            "data",
            "their labels",
            (Port("dataset"),),
            run=lambda ctx, ins, p: eg.tensor(Y),
            code=None,
        ),
    ]
    for s in specs:
        registry.register(s)
    yield
    for s in specs:
        registry.REGISTRY.pop(s.name, None)


def n(node_id, op, **params):
    return {"id": node_id, "op": op, "params": params}


def e(source, target, port="input"):
    return {"id": f"{source}-{target}-{port}", "source": source, "target": target,
            "targetPort": port}  # fmt: skip


def mlp(training, hidden=8, which="xy", loss="bce", extra_nodes=(), extra_edges=()):
    """points -> linear(hidden) -> tanh -> linear(1) -> sigmoid -> bce(labels)."""
    nodes = [
        n("data", "test_points", which=which),
        n("y", "test_labels"),
        n("l1", "linear", out_features=hidden, seed=1),
        n("h", "tanh"),
        n("l2", "linear", out_features=1, seed=2),
        n("p", "sigmoid"),
        n("loss", "binary_cross_entropy" if loss == "bce" else "mse_loss"),
    ]
    edges = [
        e("data", "y", "dataset"),
        e("data", "l1"),
        e("l1", "h"),
        e("h", "l2"),
        e("l2", "p"),
        e("p", "loss"),
        e("y", "loss", "target"),
    ]
    return parse(
        {
            "nodes": nodes + list(extra_nodes),
            "edges": edges + list(extra_edges),
            "training": {"loss": "loss", **training},
        }
    )


def t(x):
    return torch.tensor(np.asarray(x.detach().numpy()))


def torch_mlp(tr):
    params = {k: torch.nn.Parameter(t(v)) for k, v in tr.parameters().items()}

    def forward(x):
        h = torch.tanh(torch.nn.functional.linear(x, params["l1.weight"], params["l1.bias"]))
        return torch.sigmoid(torch.nn.functional.linear(h, params["l2.weight"], params["l2.bias"]))

    return params, forward


def torch_optimizer(settings, params):
    if settings.optimizer == "sgd":
        return torch.optim.SGD(params, lr=settings.lr, momentum=settings.momentum)
    return torch.optim.Adam(params, lr=settings.lr)


@pytest.mark.parametrize(
    "training",
    [
        {"optimizer": "sgd", "lr": 0.5, "momentum": 0.9, "batch_size": 16, "steps": 40},
        {"optimizer": "sgd", "lr": 0.3, "momentum": 0.0, "batch_size": 0, "steps": 25},
        {"optimizer": "adam", "lr": 0.02, "batch_size": 32, "steps": 40, "seed": 3},
    ],
    ids=["sgd-momentum-minibatch", "sgd-full-batch", "adam-minibatch"],
)
def test_losses_match_pytorch_step_for_step(training):
    tr = Trainer(mlp(training))
    assert tr.param_names == ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]
    params, forward = torch_mlp(tr)
    opt = torch_optimizer(tr.settings, list(params.values()))
    xt, yt = torch.tensor(X), torch.tensor(Y)
    for _ in range(training["steps"]):
        loss = tr.step()
        idx = tr.last_batch
        if training["batch_size"] == 0:
            assert idx is None
            xb, yb = xt, yt
        else:
            assert 0 < len(idx) <= training["batch_size"]  # the epoch's last one is shorter
            xb, yb = xt[idx], yt[idx]
        opt.zero_grad()
        expected = torch.nn.functional.binary_cross_entropy(forward(xb), yb)
        expected.backward()
        opt.step()
        np.testing.assert_allclose(loss, expected.item(), rtol=1e-5, atol=1e-6)
    assert tr.step_count == training["steps"]
    for name, p in tr.parameters().items():
        np.testing.assert_allclose(p.detach().numpy(), params[name].detach().numpy(), 1e-4, 1e-5)
    for name, g in tr.grads().items():
        np.testing.assert_allclose(g.numpy(), params[name].grad.numpy(), 1e-4, 1e-5)


def test_leaves_train_matmul_model_against_pytorch():
    """Trainable leaves: a `parameter` and a tensor with requires_grad, full batch, mse."""
    doc = parse(
        {
            "nodes": [
                n("x", "tensor", value=X.tolist(), name="x"),
                n("w", "parameter", shape=[2, 1], init="randn", seed=4, name="w"),
                n("b", "tensor", value=[0.5], requires_grad=True, name="b"),
                n("y", "tensor", value=Y.tolist(), name="y"),
                n("xw", "matmul"),
                n("pred", "add"),
                n("loss", "mse_loss"),
            ],
            "edges": [
                e("x", "xw"),
                e("w", "xw", "other"),
                e("xw", "pred"),
                e("b", "pred", "other"),
                e("pred", "loss"),
                e("y", "loss", "target"),
            ],
            "training": {"loss": "loss", "optimizer": "adam", "lr": 0.05, "steps": 30},
        }
    )
    tr = Trainer(doc)
    assert tr.param_names == ["w", "b"]
    assert [s[0] for s in tr.loss_steps] == ["xw", "pred", "loss"]  # x, y: made once
    w, b = (torch.nn.Parameter(t(tr.parameters()[k])) for k in ("w", "b"))
    opt = torch.optim.Adam([w, b], lr=0.05)
    for _ in range(30):
        loss = tr.step()
        opt.zero_grad()
        expected = torch.nn.functional.mse_loss(torch.tensor(X) @ w + b, torch.tensor(Y))
        expected.backward()
        opt.step()
        np.testing.assert_allclose(loss, expected.item(), rtol=1e-5, atol=1e-6)
    # the boundary: x is the constant (n, 2) source the output reads, y the loss's target
    assert tr.features == "x" and tr.labels == "y"
    assert tr.boundary(8)["values"].shape == (8, 8)


def test_minibatches_shuffle_each_epoch_seeded():
    def batches(seed, steps=14):
        tr = Trainer(mlp({"batch_size": 30, "steps": steps, "seed": seed}))
        out = []
        for _ in range(steps):
            tr.step()
            out.append(tr.last_batch.copy())
        return out

    a = batches(0)
    # 100 rows in batches of 30: 30, 30, 30, 10, then a new epoch
    assert [len(b) for b in a[:5]] == [30, 30, 30, 10, 30]
    epoch1, epoch2 = np.concatenate(a[:4]), np.concatenate(a[4:8])
    assert sorted(epoch1) == list(range(N)) == sorted(epoch2)
    assert not np.array_equal(epoch1, epoch2)
    assert all(np.array_equal(x, y) for x, y in zip(a, batches(0)))
    assert not all(np.array_equal(x, y) for x, y in zip(a, batches(1)))
    # a batch as big as the data (or 0) is the whole dataset in order
    tr = Trainer(mlp({"batch_size": 500}))
    tr.step()
    assert tr.last_batch is None


def test_learns_and_written_back_document_runs_to_the_trained_loss():
    doc = mlp({"optimizer": "adam", "lr": 0.05, "steps": 300, "batch_size": 0}, hidden=16)
    tr = Trainer(doc)
    first = tr.evaluate()
    assert tr.run() == "ok"
    trained = tr.evaluate()
    assert trained < 0.25 < first
    back = tr.written_back()
    assert back.node("l1").params["weight"] == tr.parameters()["l1.weight"].tolist()
    assert np.asarray(back.node("l2").params["bias_value"]).shape == (1,)
    assert doc.node("l1").params.get("weight") is None  # the original is left as it was
    res = run(back, "forward")
    assert res.status == "ok"
    np.testing.assert_allclose(res.values["loss"].item(), trained, rtol=1e-6)
    # training the written-back document goes on from the trained values
    assert Trainer(back).evaluate() == pytest.approx(trained, rel=1e-6)


def test_written_back_leaves():
    doc = parse(
        {
            "nodes": [
                n("w", "parameter", shape=[3], init="randn", seed=1, name="w"),
                n("s", "sum"),
                n("loss", "pow", scalar=2.0),
            ],
            "edges": [e("w", "s"), e("s", "loss")],
            "training": {"loss": "loss", "optimizer": "sgd", "lr": 0.1, "steps": 50},
        }
    )
    tr = Trainer(doc)
    tr.run()
    assert tr.boundary() is None  # no 2-D features
    back = tr.written_back()
    value = back.node("w").params["value"]
    assert np.asarray(value, dtype=np.float32).tolist() == tr.parameters()["w"].tolist()
    assert abs(sum(value)) < 1e-3
    assert run(back, "forward").values["loss"].item() == pytest.approx(tr.evaluate())


def test_boundary():
    tr = Trainer(mlp({"steps": 5}))
    b = tr.boundary(12)
    assert b["resolution"] == 12 and b["values"].shape == (12, 12)
    assert b["x"][0] < X[:, 0].min() and b["x"][1] > X[:, 0].max()
    assert b["y"][0] < X[:, 1].min() and b["y"][1] > X[:, 1].max()
    assert ((b["values"] > 0) & (b["values"] < 1)).all()  # sigmoid outputs
    assert b["points"].shape == (N, 3)
    np.testing.assert_array_equal(b["points"][:, 2], Y[:, 0])
    # the grid: row i is y, column j is x; the value is the model's output there
    _, forward = torch_mlp(tr)
    x0, x1 = b["x"]
    y0, y1 = b["y"]
    corner = torch.tensor([[x1, y0]], dtype=torch.float32)
    np.testing.assert_allclose(b["values"][0, -1], forward(corner).item(), rtol=1e-5)
    # the output given explicitly: the logits
    logits = Trainer(mlp({"output": "l2"})).boundary(6)["values"]
    probs = Trainer(mlp({})).boundary(6)["values"]
    np.testing.assert_allclose(1 / (1 + np.exp(-logits)), probs, rtol=1e-5)
    # 3 features: no boundary
    assert Trainer(mlp({}, which="xyz")).boundary() is None


def test_pause_resume_stop():
    tr = Trainer(mlp({"steps": 100_000, "batch_size": 10}))
    control = Control()
    result, paused = [], []
    worker = threading.Thread(
        target=lambda: result.append(tr.run(control, on_pause=lambda: paused.append(1)))
    )
    worker.start()
    try:
        _wait(lambda: tr.step_count > 5)
        control.pause()
        _wait(lambda: paused)
        held = tr.step_count
        time.sleep(0.1)
        assert tr.step_count == held
        control.resume()
        _wait(lambda: tr.step_count > held + 5)
    finally:
        control.stop()
        worker.join(10)
    assert result == ["stopped"] and 5 < tr.step_count < 100_000
    # a stop while paused ends the run too
    control = Control()
    control.pause()
    done = []
    worker = threading.Thread(target=lambda: done.append(tr.run(control)))
    worker.start()
    time.sleep(0.05)
    control.set()  # as a run's cancel Event
    worker.join(10)
    assert done == ["stopped"] and control.is_set()


def _wait(predicate, timeout=20):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


# -- errors ----------------------------------------------------------------------------------------
def problems(doc, config=None):
    with pytest.raises(GraphInvalid) as info:
        Trainer(doc, config)
    return [(p.node, p.message) for p in info.value.problems]


def test_graph_problems_are_graph_invalid():
    doc = mlp({})
    doc.nodes.append(parse({"nodes": [n("bad", "nope")]}).nodes[0])
    assert problems(doc) == [("bad", "unknown op 'nope'")]


def test_settings_problems():
    doc = mlp({})
    assert problems(doc, {"loss": "zz"}) == [(None, "the loss 'zz' is not a node of the graph")]
    assert problems(doc, {"output": "zz"}) == [(None, "the output 'zz' is not a node of the graph")]
    no_settings = doc.model_copy(update={"training": None})
    assert "no training settings" in problems(no_settings)[0][1]
    with pytest.raises(ValidationError):
        Trainer(doc, {"lr": -1.0})
    with pytest.raises(ValidationError):
        Trainer(doc, {"optimizer": "rmsprop"})
    with pytest.raises(ValidationError):
        Trainer(doc, {"bogus": 1})


def test_loss_must_be_a_trainable_scalar():
    doc = mlp({}, loss="mse")
    doc.node("loss").params["reduction"] = "none"
    assert problems(doc) == [
        ("loss", "the loss must be one number; this node gives shape [100, 1]")
    ]
    const = parse(
        {
            "nodes": [n("a", "tensor", value=[1.0, 2.0], name="a"), n("s", "sum")],
            "edges": [e("a", "s")],
            "training": {"loss": "s"},
        }
    )
    assert "nothing to train" in problems(const)[0][1]


def test_if_is_refused():
    doc = parse(
        {
            "nodes": [
                n("w", "parameter", value=1.0, name="w"),
                n("c", "scalar", value=1.0),
                n("pick", "if"),
                n("loss", "mul", scalar=2.0),
            ],
            "edges": [
                e("c", "pick", "condition"),
                e("w", "pick", "then"),
                e("w", "pick", "else"),
                e("pick", "loss"),
            ],  # fmt: skip
            "training": {"loss": "loss"},
        }
    )
    assert problems(doc)[0][0] == "pick"


def test_a_step_error_names_its_node():
    """A reshape to the whole dataset's size works when the trainer is built (on all rows), not
    on a minibatch: the step fails at that node."""
    doc = mlp({"batch_size": 10})
    doc.nodes.append(parse({"nodes": [n("r", "reshape", shape=[N, 2])]}).nodes[0])
    doc.edges = [x for x in doc.edges if x.target != "l1"]
    doc.edges += parse({"edges": [e("data", "r"), e("r", "l1")]}).edges
    tr = Trainer(doc)
    with pytest.raises(TrainingError) as info:
        tr.step()
    assert info.value.node == "r"
    assert "shape '[100, 2]' is invalid for input of size 20" in str(info.value)


def test_the_executor_still_makes_layers_anew():
    doc = mlp({})
    first = run(doc, "backward", "loss")
    again = run(doc, "backward", "loss")
    assert first.values["loss"].item() == again.values["loss"].item()
    assert first.leaf_grads["l1.weight"] is not again.leaf_grads["l1.weight"]


def test_the_xor_template_learns_xor():
    """The dataset and labels ops: the template trains in its 300 steps of 32 points."""
    from backend.graph.document.templates import load_template

    doc = load_template("mlp-xor")
    assert doc.lesson[-1].run == "train"
    tr = Trainer(doc)
    assert (tr.features, tr.labels, tr.output_id, tr.n) == ("data", "labels", "prob", 120)
    first = tr.evaluate()
    assert tr.run() == "ok"
    trained = tr.evaluate()
    assert trained < 0.15 < 0.6 < first
    b = tr.boundary(20)
    points = b["points"]
    assert points.shape == (120, 3) and set(points[:, 2]) == {0.0, 1.0}
    # the boundary has learnt the quadrants: high where x and y share a sign
    assert b["values"][0, 0] > 0.5 > b["values"][0, -1]
    assert b["values"][-1, -1] > 0.5 > b["values"][-1, 0]
    res = run(tr.written_back(), "forward")
    assert res.values["loss"].item() == pytest.approx(trained, rel=1e-6)
