"""Training-step lines outside a training loop (importer.py): an optimizer no loop steps is a
note and its zero_grad() changes nothing; its step() would change the parameters, so it is a
problem at its line (never skipped as a line that reads no tensor). `loss.backward()` on a
module's output (`logits, loss = model(x, y)`) makes a sum node the target (the sum of the
scalar PyTorch requires there is itself); with a gradient it is a problem."""

import pytest

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
