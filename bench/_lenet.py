"""The LeNet-on-digits part of bench/training.py: the template `lenet-digits` (two conv2d /
relu / max_pool2d blocks, two linear layers, cross-entropy, Adam) on scikit-learn's 1,797 8x8
digits, and the same loop written by hand on engine.nn modules: the same initial weights (the
nodes' seeds), the same minibatches (the Trainer's permutation per epoch), the same optimizer.
"""

import time

import numpy as np

import engine as eg
from backend.graph.document.templates import load_template
from backend.graph.ops import datasets
from backend.graph.running.trainer import Trainer


def document(steps, batch_size):
    """The template's document with the bench's steps and batch size."""
    doc = load_template("lenet-digits").model_dump(mode="json")
    doc["training"].update(steps=steps, batch_size=batch_size)
    return doc


def _node(doc, node_id):
    return next(n for n in doc["nodes"] if n["id"] == node_id)["params"]


def batches(n, steps, batch_size, seed=0):
    """The Trainer's minibatch order: a permutation per epoch from default_rng(seed)."""
    rng, out, perm, pos = np.random.default_rng(seed), [], None, n
    for _ in range(steps):
        if pos >= n:
            perm, pos = rng.permutation(n), 0
        out.append(perm[pos : pos + batch_size])
        pos += batch_size
    return out


def model(doc):
    """The network as engine.nn modules, each seeded as its node seeds it (layer_kit.py)."""
    c1, c2 = _node(doc, "conv1"), _node(doc, "conv2")
    f1, f2 = _node(doc, "fc1"), _node(doc, "logits")
    side = 8 // 2 // 2  # two 2x2 pools of an 8x8 image
    layers = [
        eg.nn.Conv2d(1, c1["out_channels"], c1["kernel_size"], padding=c1["padding"]),
        eg.nn.Conv2d(c1["out_channels"], c2["out_channels"], c2["kernel_size"], padding=1),
        eg.nn.Linear(c2["out_channels"] * side * side, f1["out_features"]),
        eg.nn.Linear(f1["out_features"], f2["out_features"]),
    ]
    for layer, p in zip(layers, (c1, c2, f1, f2)):
        layer.reset_parameters(eg.Generator().manual_seed(p["seed"]))
    return layers


def forward(layers, x):
    conv1, conv2, fc1, fc2 = layers
    F = eg.nn.functional
    h = F.max_pool2d(eg.relu(conv1(x)), 2)
    h = F.max_pool2d(eg.relu(conv2(h)), 2)
    return fc2(eg.relu(fc1(h.flatten(1))))


def engine_loop(steps, batch_size):
    """steps/s of the hand-written loop; the last loss and the training accuracy with it."""
    doc = document(steps, batch_size)
    data = _node(doc, "data")
    x_all, y_all = datasets.load(data)
    layers = model(doc)
    s = doc["training"]
    opt = eg.optim.Adam([p for layer in layers for p in layer.parameters()], lr=s["lr"])
    order = batches(len(x_all), steps, batch_size, s["seed"])
    t0 = time.perf_counter()
    for idx in order:
        x, y = eg.tensor(x_all[idx]), eg.tensor(y_all[idx])
        opt.zero_grad()
        loss = eg.nn.functional.cross_entropy(forward(layers, x), y)
        loss.backward()
        opt.step()
        loss.item()
    rate = steps / (time.perf_counter() - t0)
    with eg.no_grad():
        acc = float((forward(layers, eg.tensor(x_all)).numpy().argmax(1) == y_all).mean())
    return rate, loss.item(), acc


def trainer_loop(steps, batch_size):
    """steps/s of backend.graph.running.trainer.Trainer on the template; its last loss and
    accuracy."""
    from backend.graph import parse

    tr = Trainer(parse(document(steps, batch_size)))
    t0 = time.perf_counter()
    tr.run()
    return steps / (time.perf_counter() - t0), tr.loss, tr.accuracy()
