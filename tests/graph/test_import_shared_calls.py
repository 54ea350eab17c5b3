"""An nn.Module instance called more than once shares its parameters between the calls, as in
PyTorch: the importer makes its parameters nodes of their own, wired into each call's node
(importing/shared_calls.py), so their gradients add up. Each script runs in PyTorch (a
subprocess, test_import_pytorch's runner) and, imported, in the executor: the same values and
the same summed gradients. Parameters a node keeps inside (a layer's weights) cannot be shared:
that is refused at the line, saying what to write."""

import pytest
from test_import_pytorch import HEAD, _script, compare, pytorch_numbers, run_imported

from backend.graph.importing.importer import ImportFailed, from_python

_GATE = """
class Gate(nn.Module):
    def __init__(self, k=1.0):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -1.5]))
        self.b = nn.Parameter(torch.tensor([0.1, 0.2]))
        self.k = k

    def forward(self, x):
        return torch.tanh(x * self.w + self.b) * self.k
"""

CASES = {
    "called-twice": (
        _GATE
        + """
blk = Gate()
with torch.no_grad():
    blk.b.copy_(torch.tensor([0.3, -0.2]))
x = torch.tensor([1.0, -2.0], requires_grad=True)
y = blk(blk(x))
for _ in range(2):
    y = blk(y) + x
other = Gate(2.0)
L = (other(y) * torch.tensor([1.0, 3.0])).sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:blk.w": "blk.w.grad",
            "grad:blk.b": "blk.b.grad",
            "grad:other/w": "other.w.grad",
        },
    ),
    "in-if-branches": (
        _GATE
        + """
blk = Gate()
x = torch.tensor([1.0, -2.0], requires_grad=True)
if x.sum() > 0:
    y = blk(x)
else:
    y = blk(x * 2)
z = blk(y)
L = z.sum()
L.backward()
""",
        {"target": "L", "grad:x": "x.grad", "grad:blk.w": "blk.w.grad", "grad:blk.b": "blk.b.grad"},
    ),
    "nested-and-twice": (
        _GATE
        + """
class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = Gate(2.0)
        self.v = nn.Parameter(torch.tensor([1.0, 2.0]))

    def forward(self, x):
        return self.g(self.g(x) * self.v) + self.v

t = Twice()
x = torch.tensor([1.0, -2.0], requires_grad=True)
z = t(t(x) * 0.5)
L = (z * torch.tensor([1.0, 3.0])).sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:t.v": "t.v.grad",
            "grad:t.g.w": "t.g.w.grad",
            "grad:t.g.b": "t.g.b.grad",
        },
    ),
    "lists-and-sequential": (
        _GATE
        + """
class Loop(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList([Gate(1.0 + i) for i in range(n)])
        self.seq = nn.Sequential(Gate(0.5), nn.Tanh())

    def forward(self, x):
        for _ in range(2):
            for layer in self.layers:
                x = layer(x) - x
        return self.seq(self.seq(x))

net = Loop(2)
x = torch.tensor([[1.0, -2.0], [0.5, 0.25]], requires_grad=True)
y = net(x)
L = (y ** 2).sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:y/layers.0.w": "net.layers[0].w.grad",
            "grad:y/layers.1.b": "net.layers[1].b.grad",
            "grad:y/seq.0.w": "net.seq[0].w.grad",
            "grad:y/seq.0.b": "net.seq[0].b.grad",
        },
    ),
}


@pytest.fixture(scope="module")
def torch_numbers():
    return pytorch_numbers({name: (HEAD + src, w) for name, (src, w) in CASES.items()})


@pytest.mark.parametrize("case", sorted(CASES))
def test_shared_parameters_get_pytorchs_summed_gradients(torch_numbers, case):
    doc = from_python(HEAD + CASES[case][0])
    compare(doc, run_imported(doc), torch_numbers[case])


def test_a_shared_instance_is_one_set_of_parameter_nodes_wired_into_each_call():
    doc = from_python(HEAD + CASES["called-twice"][0])
    defs = {m.name: m for m in doc.modules}
    # Gate() with other arguments (Gate(2.0)) is its own definition, not shared
    assert sorted(defs) == ["Gate_2", "Gate_shared"]
    assert defs["Gate_shared"].inputs == ["x", "w", "b"]
    calls = [n.id for n in doc.nodes if n.params.get("module") == "Gate_shared"]
    assert len(calls) == 4
    for param in ("blk.w", "blk.b"):
        fed = sorted(e.target for e in doc.edges if e.source == param)
        assert fed == sorted(calls)
    n = {x.id: x for x in doc.nodes}
    assert n["blk.b"].params["value"] == [0.3, -0.2]  # the value loaded before the calls
    assert all("state" not in n[c].params for c in calls)


def _problems(src):
    with pytest.raises(ImportFailed) as info:
        from_python(_script(src))
    return {p.line - 3: p.message for p in info.value.problems}  # lines of `src` (after HEAD)


def test_weights_kept_in_a_node_cannot_be_shared_and_say_what_to_write():
    problems = _problems(
        """\
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(x)

        x = torch.tensor([[1.0, -1.0]], requires_grad=True)
        blk = Block()
        y = blk(blk(x))
        fc = nn.Linear(2, 2)
        z = fc(fc(x))
        seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        a = seq(x)
        b = seq(a)
        ok = Block()
        c = ok(x)
        """
    )
    assert set(problems) == {11, 13, 16}, problems
    assert "'blk' is called a second time" in problems[11]
    assert "'fc' is a linear layer" in problems[11] and "x @ self.w.T + self.b" in problems[11]
    assert "one Block(...) per call" in problems[11]
    assert "layer 'fc' is called a second time" in problems[13]
    assert "one nn.Linear(...) per call" in problems[13]
    assert "layer 'seq[0]' is called a second time" in problems[16]


def test_a_module_without_parameters_called_twice_stays_its_definition():
    doc = from_python(
        HEAD
        + """
class Act(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2

a = Act()
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = a(a(x))
"""
    )
    assert [m.name for m in doc.modules] == ["Act"]
    assert [n.params["module"] for n in doc.nodes if n.op == "module"] == ["Act", "Act"]
    assert [(e.source, e.target) for e in doc.edges] == [("x", "a"), ("a", "y")]
