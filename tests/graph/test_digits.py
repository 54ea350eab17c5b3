"""The digits dataset kind: scikit-learn's 8x8 handwritten digits as images (n, 1, 8, 8) and
class labels; the same numbers as scikit-learn's, picked by the seed; its problems at the param;
in a graph against PyTorch; trained; exported scripts that load the same images."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _printout import printed as printout
from sklearn.datasets import load_digits

import engine as eg
from backend.graph import Limits, parse, run_records, validate
from backend.graph.export import to_python
from backend.graph.ops import datasets
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]


def _digits(n=1797, seed=0):
    return datasets.load({"kind": "digits", "n": n, "seed": seed})


# -- the arrays ------------------------------------------------------------------------------------
def test_images_and_labels_are_scikit_learns_scaled_to_0_1():
    x, y = _digits(1797, 0)
    assert x.shape == (1797, 1, 8, 8) and x.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    ref = load_digits()
    order = np.random.default_rng(0).permutation(1797)
    np.testing.assert_array_equal(x[:, 0], (ref.images[order] / 16.0).astype(np.float32))
    np.testing.assert_array_equal(y, ref.target[order])
    assert x.min() == 0.0 and x.max() == 1.0
    assert set(np.unique(y)) == set(range(10))
    # every image once: the seed only orders them
    assert sorted(map(bytes, x.reshape(1797, -1))) == sorted(
        map(bytes, (ref.images.reshape(1797, -1) / 16.0).astype(np.float32))
    )


def test_the_seed_picks_and_orders_the_same_images_every_time():
    x, y = _digits(300, 7)
    again = datasets.digits(300, 7)  # the function itself, as an exported script calls it
    np.testing.assert_array_equal(x, again[0])
    np.testing.assert_array_equal(y, again[1])
    whole = _digits(1797, 7)
    np.testing.assert_array_equal(x, whole[0][:300])  # n takes the first of the seed's order
    other = _digits(300, 8)
    assert not np.array_equal(x, other[0])
    # noise and the labels param do not touch images: digits are classes
    more = datasets.load({"kind": "digits", "n": 300, "seed": 7, "noise": 0.9, "labels": "column"})
    np.testing.assert_array_equal(more[0], x)
    assert more[1].dtype == np.int64


def test_the_arrays_are_shared_read_only():
    x, _ = _digits(50, 1)
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0, 0, 0] = 2.0


# -- in a graph ------------------------------------------------------------------------------------
def _doc(n=40, seed=1, hidden=16, training=None):
    """digits -> flatten -> linear(hidden) -> relu -> linear(10) -> cross_entropy <- labels."""
    nodes = [
        {"id": "data", "op": "dataset", "params": {"kind": "digits", "n": n, "seed": seed}},
        {"id": "y", "op": "labels"},
        {"id": "flat", "op": "flatten", "params": {"start_dim": 1}},
        {"id": "fc1", "op": "linear", "params": {"out_features": hidden, "seed": 1}},
        {"id": "h", "op": "relu"},
        {"id": "fc2", "op": "linear", "params": {"out_features": 10, "seed": 2}},
        {"id": "loss", "op": "cross_entropy"},
    ]
    chain = ["data", "flat", "fc1", "h", "fc2", "loss"]
    edges = [
        {"id": f"{a}-{b}", "source": a, "target": b, "targetPort": "input"}
        for a, b in zip(chain, chain[1:])
    ]
    edges += [
        {"id": "data-y", "source": "data", "target": "y", "targetPort": "dataset"},
        {"id": "y-loss", "source": "y", "target": "loss", "targetPort": "target"},
    ]
    doc = {"name": "digits", "nodes": nodes, "edges": edges, "target": "loss"}
    if training:
        doc["training"] = {"loss": "loss", **training}
    return parse(doc)


def _torch_layer(seed, fan_in, out):
    """The layer a linear node starts from (its seed), as a PyTorch layer."""
    ref = eg.nn.Linear(fan_in, out)
    ref.reset_parameters(eg.Generator().manual_seed(seed))
    layer = torch.nn.Linear(fan_in, out)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(ref.weight.detach().numpy()))
        layer.bias.copy_(torch.tensor(ref.bias.detach().numpy()))
    return layer


def test_digits_in_a_graph_forward_and_backward_match_torch():
    doc = _doc(n=40, seed=1)
    assert validate(doc) == []
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    x, y = _digits(40, 1)
    np.testing.assert_array_equal(res.values["data"].numpy(), x)
    assert tuple(res.values["data"].shape) == (40, 1, 8, 8)
    assert res.values["y"].dtype == eg.int64 and tuple(res.values["y"].shape) == (40,)
    fc1, fc2 = _torch_layer(1, 64, 16), _torch_layer(2, 16, 10)
    loss = TF.cross_entropy(fc2(torch.relu(fc1(torch.tensor(x).flatten(1)))), torch.tensor(y))
    loss.backward()
    np.testing.assert_allclose(res.values["loss"].item(), loss.item(), rtol=1e-5)
    np.testing.assert_allclose(res.leaf_grads["fc1.weight"].numpy(), fc1.weight.grad, atol=1e-6)
    np.testing.assert_allclose(res.leaf_grads["fc2.bias"].numpy(), fc2.bias.grad, atol=1e-6)


@pytest.mark.parametrize(
    "params, param, words",
    [
        ({"n": 2000}, "n", "digits has 1,797 images: n must be at most 1,797"),
        ({"n": 1797}, None, "115,008 elements is over the limit of 100,000"),  # 1,797 x 64
    ],
)
def test_digits_problems_are_at_the_param(params, param, words):
    doc = parse(
        {"nodes": [{"id": "data", "op": "dataset", "params": {"kind": "digits", **params}}]}
    )
    problems = validate(doc, Limits(max_elements=100_000))
    assert [(p.node, p.param) for p in problems] == [("data", param)], problems
    assert words in problems[0].message


def test_without_scikit_learn_the_node_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # `import sklearn` raises ImportError
    datasets._images.cache_clear()
    try:
        doc = parse({"nodes": [{"id": "d", "op": "dataset", "params": {"kind": "digits"}}]})
        (problem,) = validate(doc)
        assert (problem.node, problem.param) == ("d", "kind")
        assert "scikit-learn, which is not installed" in problem.message
        assert "pip install scikit-learn" in problem.message
    finally:
        datasets._images.cache_clear()  # nothing of the failed load stays remembered


def test_an_mlp_learns_the_digits_step_for_step_with_pytorch():
    settings = {"optimizer": "adam", "lr": 0.01, "batch_size": 64, "steps": 150, "seed": 4}
    tr = Trainer(_doc(n=1797, seed=0, hidden=32, training=settings))
    x, y = (torch.tensor(a) for a in _digits(1797, 0))
    p = {
        k: torch.nn.Parameter(torch.tensor(v.detach().numpy())) for k, v in tr.parameters().items()
    }
    opt = torch.optim.Adam(list(p.values()), lr=0.01)

    def forward(xb):
        h = torch.relu(TF.linear(xb.flatten(1), p["fc1.weight"], p["fc1.bias"]))
        return TF.linear(h, p["fc2.weight"], p["fc2.bias"])

    first = tr.evaluate()
    for _ in range(20):  # the same minibatches, the same losses as PyTorch's loop
        loss = tr.step()
        idx = tr.last_batch
        opt.zero_grad()
        expected = TF.cross_entropy(forward(x[idx]), y[idx])
        expected.backward()
        opt.step()
        np.testing.assert_allclose(loss, expected.item(), rtol=1e-4, atol=1e-6)
    assert tr.run() == "ok"
    trained = tr.evaluate()
    assert first > 2.0 and trained < 0.3, (first, trained)
    with torch.no_grad():  # the trained weights classify most training images
        for k, v in tr.parameters().items():
            p[k].copy_(torch.tensor(v.detach().numpy()))
        accuracy = (forward(x).argmax(1) == y).float().mean().item()
    assert accuracy > 0.9


# -- export ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("flavor", ["engine", "torch"])
def test_exported_script_loads_the_same_digits_through_scikit_learn(flavor):
    doc = _doc(n=20, seed=3)
    code = to_python(doc, flavor, trace=True)
    assert "from sklearn.datasets import load_digits" in code  # the script loads them itself
    assert "data_features, data_labels = digits(n=20, seed=3)" in code
    lib = "eg" if flavor == "engine" else "torch"
    assert f"y = {lib}.tensor(data_labels, dtype={lib}.int64)" in code
    # (a model's script prints the loss and the gradients: the data printed here too)
    shown = "\nshow('value', 'data', data)\nshow('value', 'y', y)\n"
    proc = subprocess.run(
        [sys.executable, "-c", code + shown], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = printout(proc.stdout)
    res, _ = run_records(doc, "backward")
    # the first batch the script feeds its model: the very images and labels of the editor
    np.testing.assert_array_equal(printed[("value", "data")], res.values["data"].numpy())
    np.testing.assert_array_equal(printed[("value", "y")], res.values["y"].numpy())
    # (one model class, export/model.py: what is reached from outside its forward is printed)
    assert ("value", doc.target) in printed
    for nid, t in res.values.items():
        if ("value", nid) in printed:
            np.testing.assert_allclose(printed[("value", nid)], t.detach().tolist(), 1e-5, 1e-6)
    for key, g in res.leaf_grads.items():
        np.testing.assert_allclose(printed[("grad", key)], g.tolist(), rtol=1e-4, atol=1e-7)
