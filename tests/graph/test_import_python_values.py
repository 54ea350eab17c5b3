"""The Python values around tensor code (importing/python_values.py, constants.py): dataclass
and plain config classes, math on numbers, names imported one by one from torch / torch.nn /
F, class attributes of modules, the script's constants read inside a class (and a method's own
names that hide them). Each script runs in PyTorch (its layers from the corpus test's fixed
fill, on both sides) and its import must give the same loss and gradients; the forms that are
not read are a problem at their line."""

import time

import pytest
from test_import_corpus import (  # noqa: F401
    assert_same_numbers,
    fixed_layers,
    pytorch_numbers_of,
    script_text,
)

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPTS = {
    "dataclass-config": """
        import math
        from dataclasses import dataclass

        import torch
        import torch.nn as nn
        from torch.nn import functional as F

        @dataclass
        class Config:
            n_in: int
            n_embd: int = 4
            bias: bool = True
            scale: float = 0.5

        class MLP(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.c_fc = nn.Linear(config.n_in, 4 * config.n_embd, bias=config.bias)
                self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
                self.config = config

            def forward(self, x):
                x = F.gelu(self.c_fc(x))
                return self.c_proj(x) * self.config.scale / math.sqrt(self.config.n_embd)

        cfg = Config(3, n_embd=2)
        cfg.bias = False
        mlp = MLP(cfg)
        x = (torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5) / 3.0
        loss = mlp(x).pow(2).mean()
        loss.backward()
    """,
    "plain-config-class": """
        import torch
        from torch import nn

        class Config:
            '''sizes'''
            width = 5
            depth: int = 2

        cfg = Config()
        net = nn.Sequential(nn.Linear(3, Config.width), nn.Tanh(), nn.Linear(cfg.width, cfg.depth))
        x = torch.ones(2, 3) * 0.3
        loss = net(x).sum()
        loss.backward()
    """,
    "names-imported-one-by-one": """
        import torch
        import torch.nn
        from torch import tensor
        from torch.nn import Linear, Module, ReLU
        from torch.nn.functional import mse_loss

        class Net(Module):
            def __init__(self):
                super().__init__()
                self.fc = Linear(3, 2)
                self.act = ReLU()

            def forward(self, x):
                return self.act(self.fc(x))

        net = Net()
        head = torch.nn.Linear(2, 1)
        x = tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
        loss = mse_loss(head(net(x)), tensor([[1.0], [0.0]]))
        loss.backward()
    """,
    "math-constants": """
        import math
        from math import log, pi, sqrt

        import torch

        d = 4
        w = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
        scale = 1 / math.sqrt(d) + math.log(2.0) - pi / 10 + sqrt(2) * log(3) + math.e
        h = torch.tanh(w * scale) * math.cos(math.pi / 3) + math.floor(2.7)
        loss = (h * math.exp(-1.0)).sum()
        loss.backward()
    """,
    "class-attribute": """
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            expansion: int = 2
            scale = 0.5

            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d * self.expansion)

            def forward(self, x):
                return self.fc(x) * self.scale

        b = Block(3)
        x = torch.tensor([[0.5, -1.0, 2.0]])
        loss = b(x).sum()
        loss.backward()
    """,
    "functions-and-classes-under-other-names": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        loss_func = F.cross_entropy
        act = torch.tanh
        norm_layer = nn.LayerNorm

        def nll(a, b):
            return F.nll_loss(a, b)

        lf2 = nll
        norm = norm_layer(3)
        x = torch.tensor([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]], requires_grad=True)
        h = act(norm(x))
        a = loss_func(h, torch.tensor([1, 2]))
        loss = a + lf2(F.log_softmax(x, dim=1), torch.tensor([0, 1]))
        loss.backward()
    """,
    "globals-in-a-class-and-a-local-hiding-one": """
        import torch
        import torch.nn as nn

        n_embd = 3
        T = 8  # the method's own T (from the shape) is read there, not this one

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(n_embd, n_embd)

            def forward(self, x):
                B, T, C = x.shape
                return self.fc(x).sum(dim=1) / T

        head = Head()
        x = torch.arange(2 * 5 * n_embd, dtype=torch.float32).reshape(2, 5, n_embd) / 30.0
        loss = head(x).pow(2).sum()
        loss.backward()
    """,
    "functions worked out on constants (a closure made by a function)": """
        import collections.abc
        import itertools
        from itertools import repeat

        import torch
        import torch.nn as nn

        def repeated(count):
            def as_tuple(value):
                if isinstance(value, (tuple, list)):
                    return tuple(value)
                if isinstance(value, collections.abc.Sequence):
                    return ()  # (a string: never taken here)
                return tuple(repeat(value, count))
            return as_tuple

        pair = repeated(2)
        triple = repeated(3)

        def widen(n, by=2):
            if n > 4:
                return n  # (a return inside an if: worked out, never inlined)
            return n * by

        def twice(v):
            return tuple(itertools.repeat(v, 2))

        class Patches(nn.Module):
            def __init__(self, size=4, patch=2, bias=True):
                super().__init__()
                size, patch, bias = pair(size), pair(patch), triple(bias)
                self.grid = (size[0] // patch[0], size[1] // patch[1])
                self.proj = nn.Conv2d(1, widen(2), kernel_size=patch, stride=patch, bias=bias[0])
                self.fc = nn.Linear(widen(2) * self.grid[0] * self.grid[1], widen(5), bias=bias[2])

            def forward(self, x):
                return self.fc(self.proj(x).flatten(1))

        net = Patches(size=(4, 4), patch=twice(2))
        x = (torch.arange(32, dtype=torch.float32).reshape(2, 1, 4, 4) - 16.0) / 16.0
        loss = net(x).pow(2).mean()
        loss.backward()
    """,
    "a layer class as a class's argument": """
        import torch
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self, d, act_layer=nn.GELU, norm_layer=None):
                super().__init__()
                self.fc = nn.Linear(d, d)
                self.act = act_layer()
                self.norm = norm_layer(d) if norm_layer else nn.Identity()

            def forward(self, x):
                return self.norm(self.act(self.fc(x)))

        a = Mlp(3)
        b = Mlp(3, act_layer=nn.Tanh, norm_layer=nn.LayerNorm)
        x = (torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2.5) / 2.0
        loss = (b(a(x)) * torch.arange(3, dtype=torch.float32)).sum()
        loss.backward()
    """,
}


@pytest.fixture(scope="module")
def pytorch_results():
    return pytorch_numbers_of(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_python_values_import_to_pytorchs_numbers(name, pytorch_results, fixed_layers):  # noqa: F811
    doc = from_python(script_text(SCRIPTS[name]))
    assert_same_numbers(doc, pytorch_results[name])


def _problems(src):
    with pytest.raises(ImportFailed) as failed:
        from_python(script_text(src))
    return [(p.line, p.message) for p in failed.value.problems]


HEAD = (
    "import math\nfrom dataclasses import dataclass, field\nimport torch\nimport torch.nn as nn\n"
)
REFUSED = {
    # a config class with a method: Python would compute what its fields are
    "a method in a config class": (
        "@dataclass\nclass C:\n    n: int = 2\n    def double(self):\n        return 2 * self.n\n"
        "c = C()\nfc = nn.Linear(c.n, 1)\n",
        6,
        "C.double (line 8) is not",
    ),
    "field(default_factory=...)": (
        "@dataclass\nclass C:\n    sizes: list = field(default_factory=list)\n",
        6,
        "dataclasses.field(...) is not read",
    ),
    "a config built from a tensor": (
        "@dataclass\nclass C:\n    n: int = 2\nx = torch.ones(2)\nc = C(n=x)\n",
        9,
        "C()'s arguments must be constants",
    ),
    "a field the config has not": (
        "@dataclass\nclass C:\n    n: int = 2\nc = C()\nfc = nn.Linear(c.m, 1)\n",
        9,
        "C has no field 'm'",
    ),
    "a missing field": (
        "@dataclass\nclass C:\n    n: int\nc = C()\n",
        8,
        "C() needs its field 'n'",
    ),
    "math of a tensor": (
        "x = torch.ones(2, requires_grad=True)\ny = math.sqrt(x)\n",
        6,
        "of a tensor, write torch.sqrt",
    ),
    "a math function not read": (
        "n = math.factorial(5)\nfc = nn.Linear(n, 1)\n",
        5,
        "math.factorial is not read",
    ),
    "a function made by a function, called on a tensor, holding a function": (
        "def sq(x):\n    return x * x\n"
        "def compose(g):\n    def f(x):\n        return g(g(x))\n    return f\n"
        "h = compose(sq)\nx = torch.ones(2, requires_grad=True)\ny = h(x)\n",
        13,
        "f() (made by compose()) reads its 'g', which the importer holds as no value",
    ),
    "an inner function passed on": (
        "def make():\n    w = torch.ones(2)\n    def f(x):\n        return x * w\n"
        "    return f\ng = make()\n",
        10,
        "make() passes on its inner function f()",
    ),
    "a recursion without end": (
        "def f(n):\n    return f(n + 1)\nm = f(1)\n",
        7,
        "calls functions more than 16 deep",
    ),
    "a layer class's argument that is no layer": (
        "class B(nn.Module):\n    def __init__(self, act=nn.functional):\n"
        "        super().__init__()\n    def forward(self, x):\n        return x\nb = B()\n",
        10,
        "the default of B's act must be a constant",
    ),
    "a class attribute that is no constant": (
        "class B(nn.Module):\n    w = torch.ones(2)\n    def forward(self, x):\n        return x\n",
        5,
        "B's class attribute must be a constant",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_forms_not_read_are_a_problem_at_their_line(case):
    src, line, words = REFUSED[case]
    problems = _problems(HEAD + src)
    assert any(ln == line and words in msg for ln, msg in problems), problems


def test_math_with_a_huge_argument_is_no_number_and_costs_nothing():
    # math.pow overflows, math.sqrt(-1) is Python's error: the expression is not a constant,
    # and the layer line that needs one says so
    problems = _problems(HEAD + "n = int(math.pow(10, 400))\nfc = nn.Linear(n, 1)\n")
    assert problems and problems[0][0] == 5, problems


def test_a_closure_called_on_a_tensor_reads_its_constants():
    # scaled(2.0)(x): its k written in as 2.0 where the call is inlined
    doc = from_python(
        script_text(
            """
            import torch
            def scaled(k):
                def f(x):
                    return x * k
                return f
            k = 5.0
            double = scaled(2.0)
            x = torch.ones(2, requires_grad=True)
            y = double(x).sum()
            """
        )
    )
    assert [n.params.get("scalar") for n in doc.nodes if n.op == "mul"] == [2.0]


@pytest.mark.parametrize("calls", [1, 300])
def test_a_function_not_worked_out_costs_little(calls):
    # (a function calling itself twice per call: each value stops at its budget of steps, and
    # the walker's reading at its budget in all, however many calls a line makes)
    values = ", ".join(["f(40)"] * calls)
    f = "def f(n):\n    return f(n - 1) + f(n - 1) if n else 1\n"
    src = HEAD + f + f"fc = nn.Linear(max({values}), 1)\n"
    started = time.perf_counter()
    problems = _problems(src)
    assert time.perf_counter() - started < 10.0
    assert problems[0][0] == 7, problems


def test_a_layer_class_in_a_variable_is_called_as_the_class():
    doc = from_python(
        script_text(
            """
            import torch
            import torch.nn as nn
            norm_layer = nn.LayerNorm
            n = norm_layer(3)
            y = n(torch.ones(2, 3)).sum()
            """
        )
    )
    assert "layer_norm" in [node.op for node in doc.nodes]
