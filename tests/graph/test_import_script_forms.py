"""Forms of real scripts the importer reads (issue 37), each checked against PyTorch (the
corpus test's runner, layers from its fixed fill on both sides): dtype and device constants,
.to(device), unbind / chunk / a tensor unpacked, arange(start, end, step), torch.normal after a
seed, a no_grad block of running statistics, a Sequential walked by a loop, a layer made and
called in one expression, max of two tensors, keepdims=, x.float(), F.one_hot, a string
module constant and chained item writes, a method of an instance called outside its class."""

import pytest
from test_import_corpus import (  # noqa: F401
    assert_imports_to_pytorchs_numbers,
    fixed_layers,
)

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPTS = {
    "constants, devices and unpacking": """
        import torch
        dtype = torch.float
        device = torch.device("cpu")
        x = torch.arange(24, dtype=dtype).reshape(2, 3, 4).to(device).requires_grad_()
        a, b, c = x.unbind(1)
        q, k = (x * 2).chunk(2, dim=-1)
        u, v = x
        s = torch.arange(0.5, 2, 0.25, device=device)
        loss = (a * b + c).sum() + (q * k).mean() + (u - v).pow(2).sum() + s.sum()
        loss.backward()
    """,
    "draws, running statistics and casts": """
        import torch
        import torch.nn.functional as F
        torch.manual_seed(0)
        W = torch.normal(0, 0.1, size=(4, 3), requires_grad=True)
        h = torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]]) @ W
        running = torch.zeros(1, 3)
        with torch.no_grad():
            running = 0.9 * running + 0.1 * h.mean(0, keepdim=True)
        ids = torch.tensor([2, 0])
        onehot = F.one_hot(ids, num_classes=3).float()
        m = torch.max(h, torch.zeros_like(h))
        loss = (m * onehot).sum(1, keepdims=True).mean() + running.sum()
        loss.backward()
    """,
    "a Sequential walked by a loop and a layer called where made": """
        import torch
        from torch import nn
        net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
        X = torch.tensor([[0.5, -1.0, 2.0, 0.1], [1.5, 0.25, -0.5, 3.0]])
        for layer in net:
            X = layer(X)
        loss = nn.CrossEntropyLoss()(X, torch.tensor([1, 0]))
        loss.backward()
    """,
    "rows of a tensor walked by a loop, requires_grad_(True)": """
        import torch
        W = (torch.arange(6, dtype=torch.float32).reshape(3, 2) / 6).requires_grad_(True)
        inputs = torch.tensor([[[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]], [[0.5, 0.5, 1.0]]])
        H = torch.zeros(1, 2)
        outputs = []
        for X in inputs:
            H = torch.tanh(torch.mm(X, W) + H)
            outputs.append(H)
        loss = torch.cat(outputs, dim=0).sum()
        loss.backward()
    """,
    "strings, chained item writes and an instance's method": """
        import string
        import torch
        import torch.nn as nn
        letters = string.ascii_lowercase[:5] + "."

        def to_tensor(word):
            t = torch.zeros(len(word), 1, len(letters))
            for i, ch in enumerate(word):
                t[i][0][letters.find(ch)] = 1
            return t

        class Cell(nn.Module):
            def __init__(self, n_in, n_hidden):
                super().__init__()
                self.n_hidden = n_hidden
                self.w = nn.Parameter(torch.ones(n_in + n_hidden, n_hidden) * 0.1)

            def forward(self, x, h):
                return torch.tanh(torch.cat((x, h), 1) @ self.w)

            def init_hidden(self):
                return torch.zeros(1, self.n_hidden)

        cell = Cell(len(letters), 3)
        word = to_tensor("bad.")
        h = cell.init_hidden()
        h = cell(word[0], h)
        loss = h.sum()
        loss.backward()
    """,
    "functions defined inside functions and methods, reshape(-1)": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def get_params(n_in, n_out):
            def filled(shape, v):
                return torch.ones(size=shape) * v

            W = filled((n_in, n_out), 0.1)
            b = torch.zeros(n_out)
            params = [W, b]
            for p in params:
                p.requires_grad_(True)
            return params

        class Net(nn.Module):
            def __init__(self, d):
                super().__init__()

                def lin(i, o, scale=1):
                    return nn.Linear(i, o * scale)

                self.fc1 = lin(d, 2, scale=2)
                self.fc2 = lin(4, 3)

            def forward(self, x):
                def act(h):
                    return torch.tanh(h) * 2

                return self.fc2(act(self.fc1(x)))

        params = get_params(3, 3)
        W, b = params
        net = Net(3)
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
        y = net(x @ W + b)
        loss = F.cross_entropy(y, torch.tensor([[2, 0]]).T.reshape(-1))
        loss.backward()
    """,
    "a list of layers made by a function inside __init__, unpacked into nn.Sequential": """
        import numpy as np
        import torch
        import torch.nn as nn

        out_shape = (2, 3)

        class Decoder(nn.Module):
            def __init__(self, width):
                super().__init__()

                def stage(n_in, n_out, norm=False):
                    parts = []
                    parts.append(nn.Linear(n_in, n_out))
                    if norm:
                        parts += [nn.LayerNorm(n_out)]
                    return parts + [nn.ELU()]

                tail = [nn.Linear(width, int(np.prod(out_shape)))]
                self.net = nn.Sequential(*stage(4, width), *stage(width, width, norm=True), *tail)

            def forward(self, h):
                return self.net(h).reshape(h.shape[0], *out_shape)

        dec = Decoder(5)
        h = (torch.arange(12, dtype=torch.float32).reshape(3, 4) - 6.0) / 6.0
        loss = dec(h).pow(2).mean()
        loss.backward()
    """,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_imports_to_pytorchs_numbers(name, fixed_layers):  # noqa: F811
    assert_imports_to_pytorchs_numbers(SCRIPTS[name])


def test_a_sequence_index_of_a_non_integer_or_a_cast_to_an_unknown_dtype_is_refused():
    head = "import torch\nx = torch.ones(3, requires_grad=True)\n"
    with pytest.raises(ImportFailed) as failed:
        from_python(head + "y = x.to(torch.float16)\n")
    assert failed.value.problems[0].line == 3


def test_a_view_of_one_negative_size_is_that_shape():
    src = "import torch\nx = torch.ones(2, 3, requires_grad=True)\n"
    doc = from_python(src + "y = x.reshape(-1)\nz = x.view(-1)\nL = (y * z).sum()\n")
    assert [n.params for n in doc.nodes if n.op == "reshape"] == [{"shape": [-1]}] * 2


HEAD = "import torch\nimport torch.nn as nn\nx = torch.ones(2, requires_grad=True)\n"
REFUSED = {
    # (Python: a NameError; the importer: no function of that name at the top)
    "a function inside, called outside": (
        "def outer(t):\n    def inner(u):\n        return u * 2\n    return inner(t)\n"
        "y = outer(x)\nz = inner(y)\n",
        9,
        "'inner'",
    ),
    "an inner function passed on": (
        "def f(t):\n    def g(u):\n        return u\n    return g\nh = f(x)\n",
        8,
        "f() passes on its inner function g()",
    ),
    "a lambda inside a function": (
        "def f(t):\n    g = lambda u: u * 2\n    return g(t)\ny = f(x)\n",
        7,
        "defines a class or lambda inside",
    ),
    "a list of layers taken twice": (
        "layers = [nn.Linear(2, 2), nn.ReLU()]\n"
        "a = nn.Sequential(*layers)\nb = nn.Sequential(*layers)\n",
        6,
        "are taken a second time",
    ),
    "a list of layers changed after it is taken": (
        "layers = [nn.Linear(2, 2)]\na = nn.Sequential(*layers)\nlayers.append(nn.Tanh())\n",
        6,
        "changed after a Sequential took its modules",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_forms_not_read_are_a_problem_at_their_line(case):
    src, line, words = REFUSED[case]
    with pytest.raises(ImportFailed) as failed:
        from_python(HEAD + src)
    first = failed.value.problems[0]
    assert (first.line, words in first.message) == (line, True), str(failed.value)
