"""Which weights an exported script starts from. A graph a training wrote its values into is
exported so that the PyTorch script starts from exactly those values (each stored float32 the
same bits), and its loss and gradients are the engine's run of that graph; the docstring says
whether the weights are the initial or the trained ones."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backend.graph.document.templates import load_template
from backend.graph.export import stores_weights, to_python
from backend.graph.running.executor import run_records
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]


def _trained(template, steps):
    doc = load_template(template)
    doc = doc.model_copy(update={"training": doc.training.model_copy(update={"steps": steps})})
    trainer = Trainer(doc)
    assert trainer.run() == "ok"
    return trainer.written_back()


def _run(script):
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = {}
    for line in proc.stdout.splitlines():
        kind, key, data = line.split(" ", 2)
        out[(kind, key)] = json.loads(data)
    return out


def _docstring(script):
    return script.split('\n"""\n', 1)[0].replace("\n", " ")


def test_a_trained_lenet_exports_its_trained_weights_exactly():
    doc = _trained("lenet-digits", 3)
    assert stores_weights(doc)
    script = to_python(doc, "torch", training=False, weights="trained", trace=True)
    assert "It starts from the trained weights" in _docstring(script)
    # print the model's own parameters, as the script made them, beside the results
    layers = {n.id: n.params for n in doc.nodes if n.op in ("conv2d", "linear")}
    extra = [
        f"show('stored', '{nid}.{attr}', model.{nid}.{attr})"
        for nid in layers
        for attr in ("weight", "bias")
    ]
    got = _run(script + "\n".join(extra) + "\n")
    for nid, p in layers.items():
        for attr, param in (("weight", "weight"), ("bias", "bias_value")):
            want = np.asarray(p[param], dtype=np.float32)
            have = np.asarray(got[("stored", f"{nid}.{attr}")], dtype=np.float32)
            assert have.shape == want.shape and (have == want).all(), f"{nid}.{attr}"
    # the loss and every gradient: the engine's run of the trained graph
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    loss = got[("value", "loss")]
    np.testing.assert_allclose(loss, res.values["loss"].item(), rtol=1e-5)
    untrained = run_records(load_template("lenet-digits"), "forward")[0].values["loss"].item()
    assert abs(loss - untrained) > 1e-3, "the script starts from the trained weights"
    for key, g in res.leaf_grads.items():
        np.testing.assert_allclose(
            np.asarray(got[("grad", key)]), g.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=key
        )


def test_the_docstring_says_which_weights():
    fresh = load_template("mlp-xor")
    assert not stores_weights(fresh)
    said = _docstring(to_python(fresh, "torch"))
    assert "It starts from the initial weights" in said
    assert "Then it trains the model" in said  # (its training loop follows)
    trained = _trained("mlp-xor", 2)
    assert "the weights the graph stores (trained or edited" in _docstring(
        to_python(trained, "torch")
    )
    assert "It starts from the trained weights" in _docstring(
        to_python(trained, "torch", weights="trained")
    )
    # the page sends the graph before its training with "initial": said so
    assert "It starts from the initial weights" in _docstring(
        to_python(fresh, "engine", weights="initial")
    )
    with pytest.raises(ValueError, match="weights must be one of"):
        to_python(fresh, "torch", weights="best")
