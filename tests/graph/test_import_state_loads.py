"""Scripts written by hand (not by code export) whose module instances get values of their own
after they are made, and whose training loop is read into settings: the import runs to
PyTorch's numbers, and what cannot be read is named at its line."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backend.graph import run_records
from backend.graph.document.modules import flatten
from backend.graph.importing.importer import ImportFailed, from_python

ROOT = Path(__file__).parents[2]

SCRIPT = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.w = nn.Parameter(torch.tensor([1.0, -1.0]))

    def forward(self, x):
        return torch.tanh(self.fc(x)) * self.w


a = Net()
b = Net()
with torch.no_grad():  # every value given: PyTorch's random init is not the engine's
    a.fc.weight.copy_(torch.tensor([[0.5, -0.2], [0.1, 0.3]]))
    a.fc.bias.copy_(torch.tensor([0.0, 0.1]))
    b.fc.weight.copy_(torch.tensor([[-0.4, 0.6], [0.2, 0.2]]))
    b.fc.bias.copy_(torch.tensor([0.3, -0.3]))
    b.w.copy_(torch.tensor([2.0, 0.5]))
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
total = (a(x) + b(x)).sum()
total.backward()
print(total.item(), x.grad.tolist())
"""


def test_values_loaded_into_instances_run_to_pytorchs_numbers():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    want_total, want_grad = proc.stdout.split(" ", 1)
    doc = from_python(SCRIPT)
    inst = {n.id: n.params for n in doc.nodes if n.op == "module"}
    assert [p["module"] for p in inst.values()] == ["Net", "Net"]
    states = [p.get("state") for p in inst.values()]
    assert states[1]["w"]["value"] == [2.0, 0.5]
    assert states[1]["fc"]["weight"] == [[-0.4, 0.6], [0.2, 0.2]]
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    total = next(n.id for n in doc.nodes if n.op == "sum")
    assert res.values[total].item() == pytest.approx(float(want_total), rel=1e-6)
    np.testing.assert_allclose(res.leaf_grads["x"].tolist(), json.loads(want_grad), rtol=1e-5)


def test_a_seed_loaded_is_the_seed_the_layer_runs_with():
    """The importer gives a second instance a seed offset of its own (as two Net()s start
    apart in PyTorch); a seed set by a line is the layer's own, not moved by that offset."""
    script = """import engine as eg
from engine import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


a = Net()
b = Net()
b.fc.reset_parameters(eg.Generator().manual_seed(7))
x = eg.ones(2, 2)
y = a(x) + b(x)
"""
    doc = from_python(script)
    seeds = {n.id: n.params["seed"] for n in doc.nodes if n.op == "module"}
    assert sorted(seeds.values()) == [0, 1]  # the importer's offsets
    flat = {n.id: n.params for n in flatten(doc).nodes}
    fc = [k for k in flat if k.endswith("/fc")]
    got = sorted(flat[k]["seed"] for k in fc)
    assert got == [0, 7]  # a: Net()'s own (0), b: the seed its line set


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "    a.nope.copy_(torch.tensor([1.0]))",
            "Net has no node 'nope' (the attribute names its node)",
        ),
        ("    a.w.copy_(x)", "copy_ takes a tensor made here: torch.tensor(<values>)"),
    ],
)
def test_a_load_that_cannot_be_read_is_named_at_its_line(line, message):
    script = SCRIPT.replace("    b.w.copy_(torch.tensor([2.0, 0.5]))", line)
    script = script.replace("with torch.no_grad():", "x = torch.ones(2)\nwith torch.no_grad():")
    with pytest.raises(ImportFailed) as err:
        from_python(script)
    assert any(message in p.message for p in err.value.problems), err.value.problems


def test_a_load_after_the_call_is_refused():
    script = SCRIPT.replace(
        "total.backward()",
        "total.backward()\nwith torch.no_grad():\n    a.w.copy_(torch.tensor([0.0, 0.0]))",
    )
    with pytest.raises(ImportFailed) as err:
        from_python(script)
    assert any("set a's values before calling it" in p.message for p in err.value.problems)


def test_a_hand_written_loop_is_read_into_the_settings():
    script = SCRIPT.split("total.backward()")[0] + (
        "opt = torch.optim.SGD([*a.parameters(), *b.parameters()], lr=0.05, momentum=0.9)\n"
        "for step in range(100):\n"
        "    opt.zero_grad()\n"
        "    total = (a(x) + b(x)).sum()\n"
        "    total.backward()\n"
        "    opt.step()\n"
    )
    doc = from_python(script)
    t = doc.training
    assert (t.optimizer, t.lr, t.momentum, t.steps, t.batch_size) == ("sgd", 0.05, 0.9, 100, 0)
    assert t.loss == next(n.id for n in doc.nodes if n.op == "sum")
