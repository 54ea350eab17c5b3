"""Training-step lines outside a training loop (importer.py): an optimizer no loop steps is a
note and its zero_grad() changes nothing; its step() would change the parameters, so it is a
problem at its line (never skipped as a line that reads no tensor). `loss.backward()` on a
module's output (`logits, loss = model(x, y)`) makes a sum node the target (the sum of the
scalar PyTorch requires there is itself); with a gradient it is a problem. A training loop
that computes its loss inside (first_step.py) is read as its first step: PyTorch's numbers of
that step."""

import textwrap

import pytest
from test_import_corpus import assert_imports_to_pytorchs_numbers, fixed_layers  # noqa: F401

from backend.graph.importing.importer import ImportFailed, from_python

HEAD = (
    "import torch\nimport torch.nn as nn\nfc = nn.Linear(2, 1)\n"
    "opt = torch.optim.SGD(fc.parameters(), lr=0.1)\nopt.zero_grad()\n"
    "loss = fc(torch.ones(3, 2)).sum()\nloss.backward()\n"
)


def test_an_optimizer_no_loop_steps_is_a_note():
    doc = from_python(HEAD)
    assert "line 4: opt: an optimizer no training loop steps, skipped" in doc.description
    assert {n.op for n in doc.nodes} == {"linear", "tensor", "sum"}


def test_its_step_is_a_problem_at_its_line():
    with pytest.raises(ImportFailed) as failed:
        from_python(HEAD + "opt.step()\n")
    problems = [(p.line, p.message) for p in failed.value.problems]
    assert any(ln == 8 and "opt.step() outside a training loop" in m for ln, m in problems)


MODEL = (
    "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 1)\n"
    "    def forward(self, x):\n        y = self.fc(x)\n        return y, y.mean()\n"
    "m = M()\ny, loss = m(torch.ones(3, 2))\n"
)


def test_backward_on_a_modules_output_targets_a_sum_of_it():
    doc = from_python(MODEL + "loss.backward()\n")
    target = next(n for n in doc.nodes if n.id == doc.target)
    assert target.op == "sum"
    assert "line 12: loss.backward() on a module's output: a sum node" in doc.description


def test_backward_with_a_gradient_on_a_modules_output_is_a_problem():
    with pytest.raises(ImportFailed) as failed:
        from_python(MODEL + "y.backward(torch.ones(y.shape))\n")
    assert any(
        p.line == 12 and "one output of a module" in p.message for p in failed.value.problems
    )


LOOP = """
    import torch
    import torch.nn as nn

    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    X = torch.tensor([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], [[0.0, 1.0, 1.0], [2.0, 0.5, 0.1]]])
    Y = torch.tensor([[1, 0], [0, 1]])
    batches = [(X[k], Y[k]) for k in range(2)]
    for epoch in range(1):
        total = 0.0
        for step, (xb, yb) in enumerate(batches):
            optimizer.zero_grad()
            loss = loss_fn(net(xb * (epoch + 1)), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
"""


def test_a_loop_computing_its_loss_inside_is_read_as_its_first_step(fixed_layers):  # noqa: F811
    # (PyTorch's loss after the loop is its last step's; one epoch of one batch here)
    one_batch = LOOP.replace("for k in range(2)", "for k in range(1)")
    assert_imports_to_pytorchs_numbers(one_batch)
    doc = from_python(textwrap.dedent(LOOP))
    assert "the graph is its first step" in doc.description
    assert sum(n.op == "linear" for n in doc.nodes) == 2  # (one step: each layer once)


@pytest.mark.parametrize(
    ("loop", "line", "words"),
    [
        ("for xb, yb in loader:\n", 7, "'loader' is no list of batches"),
        ("for k in range(2):\n    opt.step() if k else None\n", 7, "a line of its own"),
    ],
)
def test_a_first_step_not_read_is_a_problem_at_the_loop(loop, line, words):
    head = (
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(fc.parameters(), lr=0.1)\nxb = torch.ones(3, 2)\n"
        "yb = torch.ones(3, 1)\n"
    )
    body = "    loss = (fc(xb) - yb).pow(2).mean()\n    loss.backward()\n    opt.step()\n"
    with pytest.raises(ImportFailed) as failed:
        from_python(head + loop + body)
    first = failed.value.problems[0]
    assert (first.line, words in first.message) == (line, True), str(failed.value)
