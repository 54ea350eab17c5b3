"""Layer nodes through export and import (backend/graph/export/layers.py,
importing/layer_forms.py): the script declares each layer as a PyTorch user would
(`nn.Conv2d(1, 3, 3, padding=1)`), runs in the engine and in PyTorch to the executor's numbers,
and reads back to the same document from its code alone (no params in the node comments); a
hand-written PyTorch script with these layers imports to a graph that computes what PyTorch
prints."""

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _printout import printed as printout
from test_model_layers import _cnn_doc, _seq_doc

from backend.graph import parse, registry, run_records
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.export.layers import REORDERED, draws_init, made, seed_lines
from backend.graph.importing.importer import from_python
from backend.graph.importing.layout_block import node_hints
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]


def _trained_cnn():
    tr = Trainer(_cnn_doc(steps=2))
    tr.run()
    return tr.written_back()


def _dropout_in_train():
    data = _cnn_doc().model_dump(mode="json")
    next(n for n in data["nodes"] if n["id"] == "drop")["params"]["mode"] = "train"
    return parse(data)


DOCS = {"cnn": _cnn_doc, "sequence": _seq_doc, "trained-cnn": _trained_cnn}


def _hints(script):
    """The hints of the script's layout block (what its code alone could not say)."""
    return node_hints(script)


# how a layer is named: flat, one line per node (`conv_layer`), or as one model class
# (export/model.py: `self.conv`, declared, loaded and called in the class)
FORMS = {"flat": "{}_layer", "model": "self.{}"}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("flavor", ["engine", "torch"])
@pytest.mark.parametrize("case", sorted(DOCS))
def test_layers_export_run_and_read_back(case, flavor, form):
    doc = DOCS[case]()
    # (the loop: test_export_training.py)
    script = to_python(doc, flavor, training=False, model=form == "model", trace=True)
    layer = FORMS[form].format
    # each layer declared once, as PyTorch code writes it
    if "cnn" in case:
        assert f"{layer('conv')} = nn.Conv2d(1, 3, 3, padding=1)" in script
        assert f"{layer('bn')} = nn.BatchNorm2d(3)" in script
        assert f"{layer('bn')}.eval()" in script
        assert f"{layer('drop')} = nn.Dropout(p=0.2)" in script
        assert f"{layer('ln')} = nn.LayerNorm([48])" in script
    else:
        assert f"{layer('att')} = nn.MultiheadAttention(4, 2, batch_first=True)" in script
        assert f"att = {layer('att')}(emb, emb, emb, need_weights=False)[0]" in script
        assert f"manual_seed(1)\n{layer('emb')} = nn.Embedding(" in script.replace("    ", "")
        # attention: the seed after its constructor, the init in the node's order
        assert f"nn.init.xavier_uniform_({layer('att')}.in_proj_weight)" in script
        assert "init_like_engine" not in script
    if case == "trained-cnn":
        assert f"{layer('bn')}.running_mean.copy_(" in script
    assert ("class Untitled(nn.Module):" in script) == (form == "model")
    # the code alone says every layer's params: no hint in the node comments, but that
    # layer_norm's normalized_shape is null (the input's last dim), which code writes as [48]
    layers = {n.id for n in doc.nodes if n.op not in ("dataset", "labels", "tensor")}
    hints = {k: h["params"] for k, h in _hints(script).items() if k in layers and "params" in h}
    assert hints in ({}, {"ln": {"normalized_shape": None}})

    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = printout(proc.stdout)
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    # (a model prints what is reached from outside forward: data, prediction, loss)
    inner = "conv" if "cnn" in case else "att"
    assert ("value", "loss") in printed
    assert (("value", inner) in printed) == (form == "flat")
    for nid, t in res.values.items():
        if ("value", nid) not in printed:
            continue
        np.testing.assert_allclose(
            printed[("value", nid)], np.asarray(t.detach().tolist()), rtol=1e-4, atol=1e-5
        )
    for key, g in res.leaf_grads.items():
        np.testing.assert_allclose(
            printed[("grad", key)], np.asarray(g.tolist()), rtol=1e-4, atol=1e-5
        )

    back = from_python(script)
    got = {n.id: n for n in back.nodes}
    for n in doc.nodes:
        spec = registry.get(n.op)
        assert got[n.id].op == n.op
        assert resolved_params(spec, got[n.id].params) == resolved_params(spec, n.params), n.id
    again, _ = run_records(back, "forward")
    np.testing.assert_allclose(again.values["loss"].item(), res.values["loss"].item(), rtol=1e-6)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_dropout_in_train_mode_exports_without_eval_and_reads_back_so(form):
    script = to_python(_dropout_in_train(), "torch", model=form == "model")
    layer = FORMS[form].format
    assert f"{layer('drop')}.eval()" not in script and f"{layer('bn')}.eval()" in script
    back = {n.id: n for n in from_python(script).nodes}
    assert back["drop"].params["mode"] == "train"
    assert back["bn"].params.get("mode", "auto") == "auto"


HANDWRITTEN = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.tensor([[[[0.0, 1.0, 2.0, 3.0], [1.0, 0.5, 0.0, 1.0], [2.0, 1.0, 0.0, 3.0],
                    [0.5, 0.5, 2.0, 1.0]]],
                  [[[1.0, 0.0, 0.0, 2.0], [0.5, 1.5, 1.0, 0.0], [0.0, 2.0, 1.0, 1.0],
                    [1.0, 0.0, 0.5, 0.5]]]])
conv = nn.Conv2d(1, 2, kernel_size=(3, 3), padding=1)
with torch.no_grad():
    conv.weight.copy_(torch.tensor([[[[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.2, -0.3]]],
                                    [[[-0.4, 0.1, 0.0], [0.3, -0.2, 0.1], [0.1, 0.0, 0.2]]]]))
    conv.bias.copy_(torch.tensor([0.05, -0.05]))
bn = nn.BatchNorm2d(2)
h = conv(x)
h = bn(h)
h = F.max_pool2d(F.relu(h), kernel_size=2)
h = h.flatten(1)
y = F.gelu(h)
loss = y.sum()
loss.backward()
print(loss.item())
"""


def test_a_handwritten_pytorch_script_imports_to_pytorchs_numbers():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(HANDWRITTEN, "<handwritten>", "exec"), {})  # our own test script
    expected = float(out.getvalue().split()[-1])
    back = from_python(HANDWRITTEN)
    ops = [n.op for n in back.nodes]
    assert ops.count("conv2d") == 1 and ops.count("batch_norm") == 1
    (bn,) = [n for n in back.nodes if n.op == "batch_norm"]
    assert bn.params["mode"] == "train"  # no .eval(): PyTorch's module is in train()
    res, _ = run_records(back, "forward")
    np.testing.assert_allclose(res.values["loss"].item(), expected, rtol=1e-5)


@pytest.mark.parametrize(
    "op", [s.name for s in registry.all_ops() if s.layer is not None and draws_init(s)]
)
def test_the_seed_line_gives_every_layer_its_nodes_values(op):
    # what the script writes for a layer: its node's seed on the line before PyTorch's own
    # constructor (MultiheadAttention: after it, then its init in the node's order); the
    # values must be the node's, bit for bit, for every layer op whose init draws
    import torch

    import engine as eg

    spec = registry.get(op)
    params = {**{p.name: p.default for p in spec.params}, "seed": 7}
    x = eg.zeros(2, 3, 4, dtype=eg.int64) if op == "embedding" else eg.zeros(2, 3, 4)
    if op == "conv2d":
        x = eg.zeros(1, 2, 5, 5)
    node = {k: v.detach().numpy() for k, v in made(spec, params, x).named_parameters()}
    cls, args = spec.layer.cls(x, params), spec.layer.args(x, params)
    lines = seed_lines("torch", cls, "layer", 7, made=cls == REORDERED)
    if cls != REORDERED:
        torch.manual_seed(7)
        layer = getattr(torch.nn, cls)(**args)
    else:
        layer = getattr(torch.nn, cls)(**args)
        exec("\n".join(lines), {"torch": torch, "nn": torch.nn, "layer": layer})
    got = {k: v.detach().numpy() for k, v in layer.named_parameters()}
    assert set(got) == set(node)
    for k in node:
        np.testing.assert_array_equal(got[k], node[k], err_msg=f"{op} {k}")
