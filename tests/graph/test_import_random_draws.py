"""Random draws read from a script (importing/random_draws.py): a generator variable, a
generator made in place and the global stream after torch.manual_seed give PyTorch's numbers
(PyTorch runs the script in a subprocess and prints them); a draw that cannot be PyTorch's
keeps a seeded init and says so in a note at its line."""

import textwrap

import numpy as np
import pytest
from test_import_pytorch import run_imported, run_pytorch

from backend.graph.importing.importer import from_python

SCRIPT = textwrap.dedent(
    """
    import torch
    g = torch.Generator().manual_seed(2147483647)
    C = torch.randn((27, 3), generator=g, requires_grad=True)
    W = torch.rand(3, 5, generator=g)
    b = torch.randn(5, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(42)
    a = torch.randn(20)
    d = torch.rand(2, 2, dtype=torch.float64)
    loss = ((C @ W + b).tanh() * a[:5]).sum() + d.sum()
    loss.backward()
    """
).lstrip()
_RUNNER = """
import json, sys, torch
scope = {}
exec(compile(sys.stdin.read(), "script", "exec"), scope)
print(json.dumps({k: scope[k].tolist() for k in ("C", "W", "b", "a", "d", "loss")}
                 | {"C.grad": scope["C"].grad.tolist()}))
"""


@pytest.fixture(scope="module")
def pytorch_numbers():
    return run_pytorch(_RUNNER, SCRIPT)


def test_seeded_draws_are_pytorchs_numbers(pytorch_numbers):
    doc = from_python(SCRIPT)
    res = run_imported(doc)
    for k in ("C", "W", "b", "a", "d"):
        assert res.values[k].tolist() == pytorch_numbers[k], k  # bit for bit
    np.testing.assert_allclose(
        float(res.values[doc.target].item()), pytorch_numbers["loss"], rtol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(res.leaf_grads["C"].tolist()), pytorch_numbers["C.grad"], rtol=1e-5, atol=1e-6
    )
    assert "manual_seed(42) read" in doc.description


def _notes(src):
    doc = from_python("import torch\nimport torch.nn as nn\n" + textwrap.dedent(src))
    return doc, doc.description


def test_an_unseeded_draw_says_it_is_a_fresh_one():
    doc, notes = _notes("x = torch.randn(3, requires_grad=True)\nL = x.sum()\nL.backward()\n")
    assert "line 3: randn: the values are a fresh draw" in notes
    assert "sets no seed" in notes
    assert next(n for n in doc.nodes if n.id == "x").params["init"] == "randn"


def test_a_draw_after_a_layer_took_from_the_stream_says_so():
    _, notes = _notes(
        "torch.manual_seed(0)\nfc = nn.Linear(2, 2)\nx = torch.randn(3, 2)\n"
        "L = fc(x).sum()\nL.backward()\n"
    )
    assert "line 5: randn: the values are a fresh draw" in notes
    assert "a layer's init, a module or a dropout drew" in notes


def test_a_draw_too_large_to_write_out_says_so():
    _, notes = _notes(
        "torch.manual_seed(0)\nx = torch.rand(400, 300, requires_grad=True)\n"
        "L = x.sum()\nL.backward()\n"
    )
    assert "120,000 numbers" in notes


def test_a_generator_in_another_form_is_a_problem():
    from backend.graph.importing.importer import ImportFailed

    with pytest.raises(ImportFailed) as failed:
        from_python("import torch\ng = make()\nx = torch.randn(3, generator=g)\n")
    assert any(p.line == 3 and "generator" in p.message for p in failed.value.problems), str(
        failed.value
    )


SEEDED_LAYERS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 1, 5, 5, generator=g)
    torch.manual_seed(3)
    fc = nn.Linear(18, 4)
    act = nn.ReLU()
    torch.manual_seed(11)
    conv = nn.Conv2d(1, 2, 3)
    torch.manual_seed(5)
    emb = nn.Embedding(6, 4)
    h = act(conv(x)).reshape(1, 18)
    loss = (fc(h) * emb(torch.tensor([2]))).sum()
    loss.backward()
    """
).lstrip()
_LAYERS_RUNNER = """
import json, sys, torch
scope = {}
exec(compile(sys.stdin.read(), "script", "exec"), scope)
grads = [p.grad.tolist() for k in ("fc", "conv", "emb") for p in scope[k].parameters()]
print(json.dumps({"loss": scope["loss"].item(), "grads": grads}))
"""


def test_a_layer_made_right_after_manual_seed_starts_from_pytorchs_init():
    from test_import_corpus import assert_same_numbers

    doc = from_python(SEEDED_LAYERS)
    seeds = {n.id: n.params.get("seed") for n in doc.nodes if n.op != "tensor"}
    assert (seeds["fc"], seeds["conv"], seeds["emb"]) == (3, 11, 5)
    assert_same_numbers(doc, run_pytorch(_LAYERS_RUNNER, SEEDED_LAYERS))


def test_a_layer_made_after_a_draw_says_its_init_is_not_pytorchs():
    _, notes = _notes(
        "torch.manual_seed(0)\nfc = nn.Linear(2, 2)\nfc2 = nn.Linear(2, 2)\n"
        "L = fc2(fc(torch.ones(1, 2))).sum()\nL.backward()\n"
    )
    assert "line 5: fc2: its default init is the document's own seeded draw" in notes
    assert "line 4: fc:" not in notes


def test_a_draw_after_a_dropout_ran_or_in_a_branch_is_not_called_pytorchs():
    _, notes = _notes(
        "torch.manual_seed(0)\nx = torch.randn(3, requires_grad=True)\ndrop = nn.Dropout(0.5)\n"
        "y = drop(x)\nz = torch.randn(3)\nL = (y * z).sum()\nL.backward()\n"
    )
    assert "line 7: randn: the values are a fresh draw" in notes
    assert "line 4: randn" not in notes and "drop:" not in notes
    _, notes = _notes(
        "g = torch.Generator().manual_seed(1)\nx = torch.ones(2, requires_grad=True)\n"
        "if x.sum() > 0:\n    y = x * torch.randn(2, generator=g)\nelse:\n    y = x\n"
        "z = torch.randn(2, generator=g)\nL = (y * z).sum()\nL.backward()\n"
    )
    assert "line 6: randn: the values are a fresh draw" in notes
    assert "line 9: randn: the values are a fresh draw" in notes


def test_a_class_of_two_layers_after_manual_seed_says_its_init_is_not_pytorchs():
    doc, notes = _notes(
        "class M(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.a = nn.Linear(2, 2)\n        self.b = nn.Linear(2, n)\n"
        "    def forward(self, x):\n        return self.b(self.a(x))\n"
        "torch.manual_seed(4)\nm = M(1)\nL = m(torch.ones(1, 2)).sum()\nL.backward()\n"
    )
    assert "line 11: M(): its layers' default init is the document's own seeded draw" in notes
    one, notes = _notes(
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.a = nn.Linear(2, 2)\n        self.act = nn.ReLU()\n"
        "    def forward(self, x):\n        return self.act(self.a(x))\n"
        "torch.manual_seed(4)\nm = M()\nL = m(torch.ones(1, 2)).sum()\nL.backward()\n"
    )
    assert "M():" not in notes
    assert next(n for n in one.nodes if n.op == "module").params["seed"] == 4
