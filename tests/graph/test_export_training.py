"""The training loop of an exported script: run as a real PyTorch (and engine) process, it prints
the editor's losses (backend.graph.running.trainer.Trainer) step for step, with the same optimizer
and the same minibatches."""

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from _docs import edge, node

from backend.graph import parse
from backend.graph.document import module_library
from backend.graph.document.problems import GraphInvalid
from backend.graph.document.templates import load_template
from backend.graph.export import to_python
from backend.graph.export.training_loop import parse_losses, print_every
from backend.graph.importing.importer import from_python
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]
FLAVORS = ("torch", "engine")


def _mlp(training, kind="moons", n=60, labels="column", loss="mse_loss", classes=1):
    """dataset -> linear(8) -> tanh -> linear(classes) [-> sigmoid] -> loss with its labels."""
    nodes = [
        node("data", "dataset", kind=kind, n=n, noise=0.1, seed=3, labels=labels),
        node("lab", "labels"),
        node("fc1", "linear", out_features=8, seed=1),
        node("h", "tanh"),
        node("fc2", "linear", out_features=classes, seed=2),
        node("loss", loss),
    ]
    edges = [
        edge("d-lab", "data", "lab", "dataset"),
        edge("d-fc1", "data", "fc1"),
        edge("fc1-h", "fc1", "h"),
        edge("h-fc2", "h", "fc2"),
        edge("lab-loss", "lab", "loss", "target"),
    ]
    if loss == "binary_cross_entropy":
        nodes.append(node("p", "sigmoid"))
        edges += [edge("fc2-p", "fc2", "p"), edge("p-loss", "p", "loss")]
    else:
        edges.append(edge("fc2-loss", "fc2", "loss"))
    return parse({"nodes": nodes, "edges": edges, "target": "loss", "training": training})


def _with_leaves(training):
    """Trainable leaves, no layer: loss = mse(tanh(x @ w + b), y) on a circle dataset, w and b
    parameter nodes."""
    nodes = [
        node("data", "dataset", kind="circle", n=40, noise=0.05, seed=1),
        node("lab", "labels"),
        node("w", "parameter", shape=[2, 1], init="randn", seed=4),
        node("b", "parameter", shape=[1], init="zeros"),
        node("mm", "matmul"),
        node("z", "add"),
        node("t", "tanh"),
        node("loss", "mse_loss"),
    ]
    edges = [
        edge("d-lab", "data", "lab", "dataset"),
        edge("d-mm", "data", "mm"),
        edge("w-mm", "w", "mm", "other"),
        edge("mm-z", "mm", "z"),
        edge("b-z", "b", "z", "other"),
        edge("z-t", "z", "t"),
        edge("t-loss", "t", "loss"),
        edge("lab-loss", "lab", "loss", "target"),
    ]
    return parse({"nodes": nodes, "edges": edges, "target": "loss", "training": training})


def _dense_module():
    """A version-2 document: two instances of a `Dense` module (x @ w + b, tanh) in a row."""
    dense = {
        "name": "Dense",
        "nodes": [
            node("x", "module_input"),
            node("w", "parameter", shape=[2, 2], init="randn", seed=1),
            node("b", "parameter", shape=[2], init="zeros"),
            node("mm", "matmul"),
            node("z", "add"),
            node("t", "tanh"),
            node("y", "module_output"),
        ],
        "edges": [
            edge("xm", "x", "mm"),
            edge("wm", "w", "mm", "other"),
            edge("mz", "mm", "z"),
            edge("bz", "b", "z", "other"),
            edge("zt", "z", "t"),
            edge("ty", "t", "y"),
        ],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    training = {"loss": "loss", "optimizer": "sgd", "lr": 0.2, "momentum": 0.5, "steps": 40}
    training.update(batch_size=10, seed=5)
    return parse(
        {
            "version": 2,
            "modules": [dense],
            "nodes": [
                node("data", "dataset", kind="gaussians", n=30, noise=0.2, seed=2),
                node("lab", "labels"),
                node("d1", "module", module="Dense"),
                node("d2", "module", module="Dense", seed=3),
                node("s", "sum", dim=1, keepdim=True),
                node("loss", "mse_loss"),
            ],
            "edges": [
                edge("e1", "data", "d1", "x"),
                edge("e2", "d1", "d2", "x", source_port="y"),
                edge("e3", "d2", "s", source_port="y"),
                edge("e4", "s", "loss"),
                edge("e5", "data", "lab", "dataset"),
                edge("e6", "lab", "loss", "target"),
            ],
            "target": "loss",
            "training": training,
        }
    )


def _layer_module():
    """A version-2 document: Block (linear 2 -> 2, tanh) twice, the second with its own seed,
    then a linear head; Adam on minibatches."""
    block = {
        "name": "Block",
        "nodes": [
            node("x", "module_input"),
            node("fc", "linear", out_features=2, seed=1),
            node("h", "tanh"),
            node("y", "module_output"),
        ],
        "edges": [edge("a", "x", "fc"), edge("b", "fc", "h"), edge("c", "h", "y")],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    training = {**ADAM_BATCHES, "steps": 30, "seed": 2}
    return parse(
        {
            "version": 2,
            "modules": [block],
            "nodes": [
                node("data", "dataset", kind="moons", n=40, noise=0.1, seed=3),
                node("lab", "labels"),
                node("b1", "module", module="Block"),
                node("b2", "module", module="Block", seed=5),
                node("head", "linear", out_features=1, seed=9),
                node("loss", "mse_loss"),
            ],
            "edges": [
                edge("e1", "data", "b1", "x"),
                edge("e2", "b1", "b2", "x", source_port="y"),
                edge("e3", "b2", "head", source_port="y"),
                edge("e4", "head", "loss"),
                edge("e5", "data", "lab", "dataset"),
                edge("e6", "lab", "loss", "target"),
            ],
            "target": "loss",
            "training": training,
        }
    )


def _library_block():
    """The library's ConvBlock (conv2d, batch_norm, relu, max_pool2d) on digits, then a linear
    head: batch_norm inside a module instance in train() while the loop steps."""
    block = module_library.build("ConvBlock", {"in_channels": 1, "out_channels": 2})
    training = {**ADAM_BATCHES, "steps": 6, "batch_size": 16, "seed": 3}
    return parse(
        {
            "version": 2,
            "modules": [block],
            "nodes": [
                node("data", "dataset", kind="digits", n=48, seed=1),
                node("lab", "labels"),
                node("c1", "module", module="ConvBlock", seed=2),
                node("flat", "flatten", start_dim=1),
                node("head", "linear", out_features=10, seed=4),
                node("loss", "cross_entropy"),
            ],
            "edges": [
                edge("e1", "data", "c1", "x"),
                edge("e2", "c1", "flat", source_port="y"),
                edge("e3", "flat", "head"),
                edge("e4", "head", "loss"),
                edge("e5", "data", "lab", "dataset"),
                edge("e6", "lab", "loss", "target"),
            ],
            "target": "loss",
            "training": training,
        }
    )


def _shortened(doc, steps):
    return doc.model_copy(update={"training": doc.training.model_copy(update={"steps": steps})})


SGD_FULL = {"loss": "loss", "optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "steps": 60}
ADAM_BATCHES = {"loss": "loss", "optimizer": "adam", "lr": 0.02, "steps": 50, "batch_size": 16}
CASES = {
    "mlp-sgd-momentum-full-batch": _mlp({**SGD_FULL, "batch_size": 0}),
    # 60 rows in batches of 16: each epoch ends with a batch of the 12 rows left over
    "mlp-adam-minibatch": _mlp({**ADAM_BATCHES, "seed": 7}),
    "mlp-bce-sgd-minibatch": _mlp(
        {**SGD_FULL, "steps": 30, "batch_size": 25, "seed": 1}, loss="binary_cross_entropy"
    ),
    "classes-cross-entropy-adam": _mlp(
        {**ADAM_BATCHES, "batch_size": 32},
        kind="spiral",
        n=90,
        labels="classes",
        loss="cross_entropy",
        classes=2,
    ),
    "leaves-sgd-minibatch": _with_leaves({**SGD_FULL, "batch_size": 8, "momentum": 0.0}),
    "module-instances-sgd": _dense_module(),
    "module-classes-with-layers-adam": _layer_module(),
    "module-library-conv-block": _library_block(),
    "template-mlp-xor": load_template("mlp-xor"),  # 300 steps: printed every 3rd
    # conv2d and batch_norm layers, batch_norm in train() while the loop steps
    "template-residual-block-6-steps": _shortened(load_template("residual-block-digits"), 6),
    # embedding, multi-head attention and layer_norm; full batch, its output in the comment
    "template-transformer-block-8-steps": _shortened(load_template("transformer-block"), 8),
}


def _run(text):
    return subprocess.run(
        [sys.executable, "-c", text], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def printed():
    """Each case exported with its training loop in both flavors and run: {(case, flavor):
    (script, {step: loss}, what it printed)}."""
    jobs = {(c, f): to_python(doc, f, training=True) for c, doc in CASES.items() for f in FLAVORS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = dict(zip(jobs, pool.map(_run, jobs.values())))
    out = {}
    for key, proc in procs.items():
        assert proc.returncode == 0, f"{key}: {proc.stderr[-3000:]}"
        out[key] = (jobs[key], parse_losses(proc.stdout), proc.stdout)
    return out


def _editor_losses(doc):
    trainer = Trainer(doc)
    losses = {}
    trainer.run(on_step=lambda step, loss: losses.__setitem__(step, loss))
    return trainer.steps, losses


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_loop_prints_the_editors_losses_step_for_step(printed, case, flavor):
    steps, want = _editor_losses(CASES[case])
    _, got, _ = printed[(case, flavor)]
    k = print_every(steps)
    expected_steps = [s for s in range(1, steps + 1) if s % k == 0 or s == steps]
    assert sorted(got) == expected_steps
    np.testing.assert_allclose(
        [got[s] for s in expected_steps],
        [want[s] for s in expected_steps],
        rtol=1e-4,
        atol=1e-6,
        err_msg=f"{case} ({flavor})",
    )
    # the loss went down: the loop trains (the first printed step against the last)
    assert got[steps] < got[expected_steps[0]]


def _accuracies(stdout):
    return [float(line.split()[1]) for line in stdout.splitlines() if line.startswith("accuracy ")]


@pytest.mark.parametrize("flavor", FLAVORS)
def test_a_model_that_classifies_prints_the_editors_accuracy_before_and_after_training(
    printed, flavor
):
    # the accuracy the editor's training shows (Trainer.accuracy: every row, in eval()), once
    # after the script's first run and once after its loop; the residual block's batch_norm
    # trains in train() and is measured in eval()
    for case in ("classes-cross-entropy-adam", "template-residual-block-6-steps"):
        trainer = Trainer(CASES[case])
        before = trainer.accuracy()
        trainer.run()
        _, _, stdout = printed[(case, flavor)]
        np.testing.assert_allclose(_accuracies(stdout), [before, trainer.accuracy()], rtol=1e-6)
    # a regression's script prints no accuracy
    _, _, stdout = printed[("mlp-adam-minibatch", flavor)]
    assert _accuracies(stdout) == [] and stdout.startswith("loss ")


def test_the_loop_reads_as_pytorch_code(printed):
    text, _, _ = printed[("mlp-adam-minibatch", "torch")]
    loop = text[text.index("# -- training") :]
    assert "opt = torch.optim.Adam(params, lr=0.02)" in loop
    params = next(line for line in loop.splitlines() if line.startswith("params = ["))
    # a flat network with a loss is written as one model class (export/model.py): its
    # parameters are both layers' weights and biases
    assert params == "params = [*model.parameters()]"
    assert "rng = np.random.default_rng(7)" in loop
    assert "rows = torch.tensor(perm[pos : pos + batch_size])" in loop
    for line in ("opt.zero_grad()", "loss.backward()", "opt.step()"):
        assert f"\n    {line}\n" in loop
    assert "nn.Linear(" not in loop  # layers are declared once, before the loop
    sgd, _, _ = printed[("mlp-sgd-momentum-full-batch", "engine")]
    loop = sgd[sgd.index("# -- training") :]
    assert "opt = eg.optim.SGD(params, lr=0.1, momentum=0.9)" in loop
    assert "rng" not in loop and "[rows]" not in loop  # full batch: all rows, in order
    leaves, _, _ = printed[("leaves-sgd-minibatch", "torch")]
    assert "params = [w, b]" in leaves
    # batch_norm's mode `auto`: eval() for the script's run, train() for the loop's steps
    res, _, _ = printed[("template-residual-block-6-steps", "torch")]
    loop = res[res.index("# -- training") : res.index("for step in")]
    assert len(re.findall(r"^model\.\w+\.train\(\)$", loop, re.M)) == 2


def test_the_loop_is_written_whenever_the_document_has_settings():
    doc = CASES["mlp-adam-minibatch"]
    assert to_python(doc, "torch") == to_python(doc, "torch", training=True)
    assert "# -- training" not in to_python(doc, "torch", training=False)
    plain = _mlp(None)
    assert to_python(plain, "torch", training=True) == to_python(plain, "torch")
    assert "# -- training" not in to_python(plain, "torch")


def test_module_instances_train_through_their_parameters(printed):
    text, _, _ = printed[("module-classes-with-layers-adam", "torch")]
    loop = text[text.index("# -- training") :]
    assert "params = [*b1.parameters(), *b2.parameters(), *head_layer.parameters()]" in loop
    assert "    b1_y = b1(data_batch)\n    b2_y = b2(b1_y)\n" in loop


def test_a_document_the_editor_cannot_train_is_refused():
    doc = _mlp({**SGD_FULL, "loss": "nope"})
    with pytest.raises(GraphInvalid, match="nope"):
        to_python(doc, "torch", training=True)
    # by default the script is written, and says why it has no loop
    text = to_python(doc, "torch")
    assert "# -- training: not written, the editor cannot train it: " in text
    assert "nope" in text[text.index("# -- training") :]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_loop_reads_back_into_the_training_settings(printed, case):
    """The importer reads the loop as the document's settings (not as nodes: it is not
    unrolled), exactly: what the code does not say is in the optimizer line's comment."""
    for flavor in FLAVORS:
        text, _, _ = printed[(case, flavor)]
        back = from_python(text)
        assert back.training == CASES[case].training, flavor
        assert "training loop" not in back.description


def test_the_settings_the_code_does_not_say_travel_in_a_comment():
    doc = _mlp({**SGD_FULL, "batch_size": 500, "seed": 4, "output": "fc2"})
    text = to_python(doc, "torch")
    # (the optimizer line's entry of the layout block at the script's end)
    layout = text[text.index("# wiregrad layout") :].replace("\n# ", " ")
    assert '"opt": {"training": {"output": "fc2", "batch_size": 500, "seed": 4}}' in layout
    assert from_python(text).training == doc.training


def test_a_loop_the_editor_cannot_step_is_left_out_with_a_note():
    script = """import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w * w).sum()
opt = torch.optim.RMSprop([w], lr=0.1)
for epoch in range(3):
    opt.zero_grad()
    loss = (w * w).sum()
    loss.backward()
    opt.step()
"""
    back = from_python(script)
    assert back.training is None
    assert back.description == (
        "The script's training loop (lines 4-9) was not read: the optimizer RMSprop is not "
        "one the editor trains with (SGD, Adam)."
    )
    assert {n.op for n in back.nodes} == {"tensor", "mul", "sum"}  # the rest imports
    nested = script.replace("RMSprop([w], lr=0.1)", "SGD([w], lr=0.1)").replace(
        "for epoch in range(3):\n", "for epoch in range(3):\n  for i in range(2):\n"
    )
    nested = nested.replace("\n    opt.", "\n      opt.").replace("\n    loss", "\n      loss")
    back = from_python(nested)
    assert back.training is None and "it has a loop inside" in back.description
