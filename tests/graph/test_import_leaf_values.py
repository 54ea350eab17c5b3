"""A leaf made from a computed value (importing/leaf_values.py): `w = <computed>;
w.requires_grad_()`, `w.requires_grad = True`, `(<computed>).requires_grad_()` and
`nn.Parameter(<computed>)` become tensor nodes of the values PyTorch's leaf starts from; the
import gives PyTorch's loss and gradients, and the nodes only the leaf read are gone. A leaf
frozen by requires_grad_(False) (or `= False`) needs no gradient, as in PyTorch."""

import pytest
from test_import_corpus import (  # noqa: F401
    assert_same_numbers,
    fixed_layers,
    pytorch_numbers_of,
    script_text,
)

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPT = """
    import math
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    W = torch.randn(4, 3) / math.sqrt(4)
    W.requires_grad_()
    b = torch.zeros(3, requires_grad=True)
    V = (torch.arange(6.0).reshape(3, 2) / 6 - 0.5).requires_grad_()
    U = torch.ones(2) * 0.5
    U.requires_grad = True


    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.Parameter(torch.ones(2) * 0.1)
            self.m = nn.Parameter(torch.tril(torch.ones(2, 2)))

        def forward(self, x):
            return torch.tanh(x @ self.m + self.h)


    cell = Cell()
    x = torch.arange(8.0).reshape(2, 4) / 8
    loss = cell(torch.tanh(x @ W + b) @ V * U).sum()
    loss.backward()
"""


def test_leaves_of_computed_values_give_pytorchs_numbers(fixed_layers):  # noqa: F811
    want = pytorch_numbers_of({"leaves": SCRIPT})["leaves"]
    doc = from_python(script_text(SCRIPT))
    assert_same_numbers(doc, want)
    ops = {n.id: n.op for n in doc.nodes}
    assert [ops[k] for k in ("W", "V", "U")] == ["tensor"] * 3
    # what computed W, V and U went with their lines: x's own arange is all that is left
    assert sorted(ops.values()).count("tensor") == 5  # W, b, V, U and x's arange
    assert "line 7: W: a leaf made from a computed value" in doc.description


FROZEN = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2) * 0.5)
            self.b = nn.Parameter(torch.zeros(2))
            self.b.requires_grad_(False)

        def forward(self, x):
            return x * self.w + self.b


    a = torch.ones(2, requires_grad=True)
    a.requires_grad_(False)
    c = torch.ones(2) * 0.5
    c.requires_grad = True
    c.requires_grad = False
    d = torch.arange(2.0).requires_grad_(False)
    e = torch.tensor([1.0, -2.0], requires_grad=True)
    net = Net()
    loss = net(a * c + d * e).pow(2).sum()
    loss.backward()
"""


def test_frozen_leaves_give_pytorchs_numbers(fixed_layers):  # noqa: F811
    want = pytorch_numbers_of({"frozen": FROZEN})["frozen"]
    doc = from_python(script_text(FROZEN))
    assert_same_numbers(doc, want)
    frozen = {n.id: n.params.get("requires_grad", False) for n in doc.nodes if n.id in "acd"}
    assert frozen == {"a": False, "c": False, "d": False}


HEAD = "import torch\nw = torch.ones(2, requires_grad=True)\n"


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ("v = w * 2\nv.requires_grad = True\n", 4, "only change requires_grad flags of leaf"),
        ("v = torch.arange(3) * 2\nv.requires_grad_()\n", 4, "floating point dtype"),
        ("v = w * 2\nv.requires_grad_(False)\n", 4, "only change requires_grad flags of leaf"),
        ("v = w * 2\nw.requires_grad_(False)\n", 4, "w.requires_grad_(False) after w is used"),
        ("w.requires_grad_(w.sum() > 0)\n", 3, "write w.requires_grad_(True) or (False)"),
    ],
)
def test_a_leaf_pytorch_refuses_is_a_problem_at_its_line(lines, line, words):
    with pytest.raises(ImportFailed) as failed:
        from_python(HEAD + lines + "loss = w.sum()\nloss.backward()\n")
    first = failed.value.problems[0]
    assert (first.line, words in first.message) == (line, True), str(failed.value)


def test_requires_grad_on_a_tensor_that_requires_grad_changes_nothing():
    doc = from_python(HEAD + "v = w * 2\nv.requires_grad_()\nloss = v.sum()\nloss.backward()\n")
    assert {n.id: n.op for n in doc.nodes}["v"] == "mul"
