"""Lists of tensors (importing/tensor_lists.py), model.eval() on a class instance
(importing/module_modes.py), self.register_buffer and .contiguous(): each script runs in
PyTorch (layers from the corpus test's fixed fill on both sides) and its import must give the
same loss and gradients; a list changed in a way not read is a problem at its line."""

import pytest
from test_import_corpus import (  # noqa: F401
    assert_same_numbers,
    fixed_layers,
    pytorch_numbers_of,
    script_text,
)

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPTS = {
    "append-and-cat": """
        import torch
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
        outs = []
        for i in range(3):
            outs.append(torch.tanh(x * (i + 1)))
        outs += [x.exp()]
        y = torch.cat(outs, dim=-1)
        z = torch.stack([outs[0], outs[-1]], dim=0)
        loss = y.pow(2).sum() / len(outs) + z.mean()
        loss.backward()
    """,
    "tuples of tensors": """
        import torch

        def init_state(batch, hidden):
            return (torch.zeros((batch, hidden)),)

        def step(x, state, w):
            H, = state
            H = torch.tanh(x @ w + H)
            return H * 2, (H,)

        w = torch.tensor([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)
        x = torch.tensor([[1.0, 0.5], [-0.5, 2.0]])
        state = init_state(x.shape[0], 2)
        y, state = step(x, state, w)
        y2, (h,) = step(y, state, w)
        pair = (y, h)
        loss = torch.cat(pair, dim=1).pow(2).sum() + y2.sum()
        loss.backward()
    """,
    "a list of tuples of tensors": """
        import torch
        x = torch.tensor([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)
        y = torch.tensor([1.0, -1.0])
        batches = [(x, y), (x * 2, y + 1)]
        xb, yb = batches[1]
        first = batches[0]
        loss = (xb @ yb).sum() + (first[0] * batches[0][1]).sum() + len(batches[1])
        loss.backward()
    """,
    "a list written out and a loop over it": """
        import torch
        W1 = torch.tensor([[0.5, -1.0], [2.0, 0.1]], requires_grad=True)
        b1 = torch.tensor([0.1, -0.2])
        parameters = [W1, b1]
        for p in parameters:
            p.requires_grad = True
        total = torch.zeros(1)
        for p in parameters:
            total = total + (p ** 2).sum()
        loss = total.sum()
        loss.backward()
    """,
    "heads in a module list": """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, n_in, size):
                super().__init__()
                self.key = nn.Linear(n_in, size, bias=False)

            def forward(self, x):
                return torch.tanh(self.key(x))

        class MultiHead(nn.Module):
            def __init__(self, n_heads, n_in, size):
                super().__init__()
                self.heads = nn.ModuleList([Head(n_in, size) for _ in range(n_heads)])
                self.proj = nn.Linear(n_heads * size, n_in)

            def forward(self, x):
                out = torch.cat([h(x) for h in self.heads], dim=-1)
                return self.proj(out)

        mh = MultiHead(3, 4, 2)
        x = (torch.arange(8, dtype=torch.float32).reshape(2, 4) - 4.0) / 4.0
        loss = mh(x).pow(2).mean()
        loss.backward()
    """,
    "eval before the call": """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 4)
                self.bn = nn.BatchNorm1d(4)
                self.drop = nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(self.bn(self.fc(x)))

        net = Net()
        net.eval()
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3]])
        loss = net(x).pow(2).sum()
        loss.backward()
    """,
    "train mode by default, and train() kept": """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 4)
                self.bn = nn.BatchNorm1d(4)

            def forward(self, x):
                return self.bn(self.fc(x))

        net = Net()
        net.train()
        x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3]])
        loss = net(x).pow(2).sum()
        loss.backward()
    """,
    "a buffer": """
        import torch
        import torch.nn as nn

        class Scaled(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Linear(n, n)
                self.register_buffer("scale", torch.arange(n, dtype=torch.float32) / n)

            def forward(self, x):
                return self.fc(x).transpose(0, 1).contiguous() * self.scale.reshape(4, 1)

        m = Scaled(4)
        x = torch.tensor([[0.5, -1.0, 2.0, 0.3], [1.5, 0.25, -0.5, 0.7]])
        loss = m(x).pow(2).sum()
        loss.backward()
    """,
}


@pytest.fixture(scope="module")
def pytorch_results():
    return pytorch_numbers_of(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_imports_to_pytorchs_numbers(name, pytorch_results, fixed_layers):  # noqa: F811
    doc = from_python(script_text(SCRIPTS[name]))
    assert_same_numbers(doc, pytorch_results[name])


def test_eval_makes_a_variant_and_the_train_definition_is_left_out():
    doc = from_python(script_text(SCRIPTS["eval before the call"]))
    assert [d.name for d in doc.modules] == ["Net_eval"]
    modes = {n.id: n.params.get("mode") for n in doc.modules[0].nodes}
    assert (modes["bn"], modes["drop"]) == ("auto", "auto")


def _problems(src):
    with pytest.raises(ImportFailed) as failed:
        from_python(script_text(src))
    return [(p.line, p.message) for p in failed.value.problems]


REFUSED = {
    "pop": ("outs = []\nouts.append(x)\nouts.pop()\n", 6, "pop() of a list of tensors"),
    "item set": ("outs = [x, x]\nouts[0] = x * 2\n", 5, "an item of a list set in place"),
    "index out of range": ("outs = [x]\ny = outs[3]\n", 5, "index 3 is out of range"),
    "index by a tensor": ("outs = [x]\ny = outs[x]\n", 5, "constant whole number"),
    "eval after the call": (
        "class N(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
        "n = N()\ny = n(x)\nn.eval()\n",
        9,
        "n.eval() after n was called",
    ),
}
HEAD = "import torch\nimport torch.nn as nn\nx = torch.ones(2, requires_grad=True)\n"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_forms_not_read_are_a_problem_at_their_line(case):
    src, line, words = REFUSED[case]
    problems = _problems(HEAD + src)
    assert any(ln == line and words in msg for ln, msg in problems), problems
