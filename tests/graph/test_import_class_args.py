"""Import of nn.Module classes as PyTorch users write them: constructor arguments (by position,
keyword and default, worked out as constants, `if` on them), nn.ModuleList (lists,
comprehensions, generators, append, indexing, `for layer in self.layers`), classes inside
nn.Sequential, and forward returning several tensors. Each script has explicit values; PyTorch
runs it in a subprocess (test_import_pytorch's runner) and the imported document, run backward
in the executor, must give its numbers and gradients."""

import numpy as np
import pytest
from test_import_pytorch import HEAD, _script, compare, pytorch_numbers, run_imported

from backend.graph.importing.importer import ImportFailed, from_python

# a Linear whose weights are set for the sizes it is built with (an `if` on the arguments)
_BLOCK = """
class Block(nn.Module):
    def __init__(self, d_in, d_out, act=True, scale=1.0):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.scale = scale
        self.act = act
        if d_out == 3:
            with torch.no_grad():
                self.fc.weight.copy_(torch.tensor([[0.1, 0.2], [0.3, -0.4], [-0.5, 0.6]]))
                self.fc.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
        else:
            with torch.no_grad():
                self.fc.weight.copy_(torch.tensor([[0.2, -0.1, 0.4]]))
                self.fc.bias.copy_(torch.tensor([0.05]))

    def forward(self, x):
        h = self.fc(x) * self.scale
        if self.act:
            h = torch.relu(h)
        return h
"""

_CELL = """
class Cell(nn.Module):
    def __init__(self, d, gain=1.0):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.gain = gain
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[0.5, -0.2], [0.1, 0.3]]))
            self.fc.bias.copy_(torch.tensor([0.1, -0.1]))

    def forward(self, x):
        return torch.tanh(self.fc(x)) * self.gain + x
"""

_SCALE = """
class Scale(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.w = nn.Parameter(torch.tensor([0.5, -1.5]))

    def forward(self, x):
        return x * self.w * self.k + self.k ** 2
"""

CASES = {
    "arguments": (
        _BLOCK
        + """
b1 = Block(2, 3)
b2 = Block(d_in=3, d_out=1, act=False, scale=0.5)
b3 = Block(2, d_out=3, scale=1.0)
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
h = b1(x)
y = b2(h + b3(x))
L = (y * y).sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:h/fc.weight": "b1.fc.weight.grad",
            "grad:h/fc.bias": "b1.fc.bias.grad",
            "grad:b3/fc.weight": "b3.fc.weight.grad",
            "grad:y/fc.weight": "b2.fc.weight.grad",
            "grad:y/fc.bias": "b2.fc.bias.grad",
        },
    ),
    "constants-and-nesting": (
        _SCALE
        + """
class Stack(nn.Module):
    def __init__(self, n, k0=1.0, squash=True):
        super().__init__()
        step = k0 / 2
        self.squash = squash and n > 1
        self.layers = nn.ModuleList([Scale(k0 + i * step) for i in range(n)])
        self.last = len(self.layers) - 1

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
            if self.squash and i < self.last:
                x = torch.tanh(x)
        return x

net = Stack(3)
x = torch.tensor([0.3, -0.2], requires_grad=True)
y = net(x)
L = y.sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:y/x_2/w": "net.layers[0].w.grad",
            "grad:y/x_4/w": "net.layers[1].w.grad",
            "grad:y/x_6/w": "net.layers[2].w.grad",
        },
    ),
    "module-lists": (
        _SCALE
        + _CELL
        + """
class Deep(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Cell(2, gain=0.5 * (i + 1)) for i in range(depth))
        self.heads = nn.ModuleList()
        for i in range(3):
            self.heads.append(Scale(i + 1))

    def forward(self, x):
        for i, blk in enumerate(self.blocks):
            x = blk(x) * (i + 1)
        a = self.heads[0](x)
        for head in self.heads[1:]:
            a = head(a) - x
        return a

net = Deep(2)
x = torch.tensor([[1.0, -2.0], [0.5, 0.25]], requires_grad=True)
y = net(x)
L = (y ** 2).mean()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:y/blocks.0/fc.weight": "net.blocks[0].fc.weight.grad",
            "grad:y/blocks.1/fc.weight": "net.blocks[1].fc.weight.grad",
            "grad:y/blocks.1/fc.bias": "net.blocks[1].fc.bias.grad",
            "grad:y/a/w": "net.heads[0].w.grad",
            "grad:y/heads.1/w": "net.heads[1].w.grad",
            "grad:y/heads.2/w": "net.heads[2].w.grad",
        },
    ),
    "sequential-of-classes": (
        _CELL
        + """
class Body(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.body = nn.Sequential(Cell(2), *[Cell(2, gain=-1.0) for _ in range(depth)], nn.ReLU())

    def forward(self, x):
        return self.body(x)

net = Body(2)
top = nn.Sequential(Cell(2, gain=2.0), nn.Tanh())
x = torch.tensor([[1.0, -2.0], [0.5, 0.25]], requires_grad=True)
y = top(net(x))
L = (y * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:net/body.0/fc.weight": "net.body[0].fc.weight.grad",
            "grad:net/body.1/fc.weight": "net.body[1].fc.weight.grad",
            "grad:net/body.2/fc.bias": "net.body[2].fc.bias.grad",
            "grad:top.0/fc.weight": "top[0].fc.weight.grad",
        },
    ),
    "several-outputs": (
        """
class Split(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([[1.0, -0.5], [0.25, 2.0]]))

    def forward(self, x, y):
        h = x @ self.w
        return torch.relu(h) + y, h.sum(dim=1)

class Uses(nn.Module):
    def __init__(self):
        super().__init__()
        self.split = Split()

    def forward(self, x):
        a, b = self.split(x, x * 2)
        return b, a.mean(dim=1), a

net = Uses()
top = Split()
x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
p, q, r = net(x)
s, t = top(r, x)
L = (p * q).sum() + (s * t[:, None]).sum() + t.mean()
L.backward()
""",
        {
            "target": "L",
            "grad:x": "x.grad",
            "grad:net/split/w": "net.split.w.grad",
            "grad:top/w": "top.w.grad",
        },
    ),
}


@pytest.fixture(scope="module")
def torch_numbers():
    return pytorch_numbers({name: (HEAD + src, w) for name, (src, w) in CASES.items()})


@pytest.mark.parametrize("case", sorted(CASES))
def test_imported_class_gives_pytorchs_numbers(torch_numbers, case):
    doc = from_python(HEAD + CASES[case][0])
    compare(doc, run_imported(doc), torch_numbers[case])


def _modules(doc):
    return {m.name: m for m in doc.modules}


def test_each_set_of_arguments_is_one_definition():
    doc = from_python(HEAD + CASES["arguments"][0])
    defs = _modules(doc)
    assert sorted(defs) == ["Block", "Block_2"]
    n = {x.id: x.params for x in doc.nodes if x.op == "module"}
    # b1 and b3 are built with the same arguments (a default written out or not)
    assert n == {
        "h": {"module": "Block", "seed": 0},
        "b3": {"module": "Block", "seed": 1},
        "y": {"module": "Block_2", "seed": 0},
    }
    # the branch each was built with: Block_2 has no relu (act=False) and its own sizes
    ops = {name: [x.op for x in d.nodes] for name, d in defs.items()}
    assert "relu" in ops["Block"] and "relu" not in ops["Block_2"]
    fc = {name: next(x for x in d.nodes if x.op == "linear").params for name, d in defs.items()}
    assert fc["Block"]["out_features"] == 3 and fc["Block_2"]["out_features"] == 1
    scale = [x.params for x in defs["Block_2"].nodes if x.op == "mul"]
    assert scale == [{"scalar": 0.5}]


def test_several_outputs_are_ports_out0_out1():
    doc = from_python(HEAD + CASES["several-outputs"][0])
    defs = _modules(doc)
    assert defs["Split"].outputs == ["out0", "out1"]
    assert defs["Uses"].outputs == ["out0", "out1", "out2"]
    ports = sorted((e.source, e.sourcePort) for e in doc.edges if e.source in ("net", "top"))
    assert (
        ports
        == [("net", "out0"), ("net", "out1"), ("net", "out2"), ("top", "out0")]
        + [("top", "out1")] * 2
    )


def _problems(src):
    with pytest.raises(ImportFailed) as info:
        from_python(_script(src))
    return {p.line - 3: p.message for p in info.value.problems}  # lines of `src` (after HEAD)


def test_what_cannot_be_read_says_what_to_write():
    problems = _problems(
        """\
        class Block(nn.Module):
            def __init__(self, d, scale=1.0):
                super().__init__()
                self.w = nn.Parameter(torch.tensor([1.0, 2.0]))
                self.scale = scale

            def forward(self, x):
                return x * self.w * self.scale, x

        x = torch.tensor([1.0, -1.0], requires_grad=True)
        blk = Block(2)
        a, b = blk(x)
        c, d = blk(a)
        e = Block(x)
        f = Block()
        g = Block(2, 1.0, 3)
        h = Block(2, size=3)
        y = blk(x)
        layers = nn.ModuleList([Block(2)] * 3)
        L = a.sum() + b.sum()
        L.backward()
        """
    )
    # (blk called again shares its parameters: test_import_shared_calls.py)
    assert set(problems) == {14, 15, 16, 17, 18, 19}, problems
    assert "returns 2 tensors" in problems[18]
    assert "argument d must be a constant" in problems[14]
    assert "needs its argument 'd'" in problems[15]
    assert "at most 2 positional" in problems[16]
    assert "no argument 'size'" in problems[17]
    assert "for _ in range(n)" in problems[19]


def test_several_outputs_must_be_unpacked():
    problems = _problems(
        """\
        class Two(nn.Module):
            def forward(self, x):
                return x * 2, x + 1

        x = torch.tensor([1.0, -1.0], requires_grad=True)
        a = Two()
        b = Two()
        c = Two()
        y = a(x)
        p, q, r = b(x)
        s, t = c(x)
        t.backward()
        """
    )
    assert set(problems) == {9, 10, 12}, problems
    assert "returns 2 tensors" in problems[9] and "y0, y1 = a(...)" in problems[9]
    assert "not 3" in problems[10]
    assert "L = t.sum()" in problems[12]


def test_module_lists_out_of_range_and_non_constant_loops():
    problems = _problems(
        """\
        class Net(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = nn.ModuleList([nn.Tanh() for _ in range(n)])

            def forward(self, x):
                x = self.layers[2](x)
                return x

        net = Net(2)
        x = torch.tensor([1.0, -1.0], requires_grad=True)
        y = net(x)
        """
    )
    assert set(problems) == {7, 10, 12}, problems
    assert "index 2 is out of range: layers holds 2 modules" in problems[7]
    assert "Net could not be read" in problems[10]
    assert "'net'" in problems[12]


@pytest.mark.parametrize(
    "line",
    [
        "class Net(nn.Module):\n"
        "    def __init__(self, n=__import__('os').system('touch {p}')):\n"
        "        super().__init__()\n"
        "    def forward(self, x):\n        return x\nnet = Net()\ny = net(x)",
        "class Net(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.n = n\n    def forward(self, x):\n        return x * self.n\n"
        "net = Net(__import__('os').system('touch {p}'))\ny = net(x)",
        "class Net(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        if __import__('os').system('touch {p}'):\n            self.n = n\n"
        "        self.layers = nn.ModuleList([nn.Tanh() for _ in range(open('{p}', 'w'))])\n"
        "    def forward(self, x):\n        return x\nnet = Net(1)\ny = net(x)",
    ],
)
def test_import_never_runs_a_class(tmp_path, line):
    marker = tmp_path / "x"
    src = "x = torch.tensor(1.0)\n" + line.format(p=marker) + "\n"
    with pytest.raises(ImportFailed):
        from_python(HEAD + src)
    assert not marker.exists()


def test_the_rest_still_imports_where_a_class_cannot_be_read():
    src = _script(
        """\
        class Bad(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.w = nn.Parameter(torch.tensor([1.0, 2.0]))

            def forward(self, x):
                return x.frob() * self.w

        x = torch.tensor([1.0, -1.0], requires_grad=True)
        bad = Bad(2)
        y = bad(x)
        blk = nn.Sequential(nn.Tanh())
        z = blk(x) * 2
        L = z.sum()
        L.backward()
        """
    )
    with pytest.raises(ImportFailed) as info:
        from_python(src)
    lines = {p.line - 3: p.message for p in info.value.problems}
    assert sorted(lines) == [7, 10, 11], lines
    assert "frob" in lines[7] and "Bad could not be read" in lines[10]
    doc = info.value.document
    assert [m.name for m in doc.modules] == [] and doc.target == "L"
    assert {n.op for n in doc.nodes} == {"tensor", "tanh", "mul", "sum"}
    res = run_imported(doc)
    assert res.leaf_grads["x"].tolist() == pytest.approx(
        [2 * (1 - np.tanh(1.0) ** 2), 2 * (1 - np.tanh(-1.0) ** 2)]
    )
