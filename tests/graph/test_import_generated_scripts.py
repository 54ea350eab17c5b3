"""Hypothesis writes small sequential PyTorch scripts (Linear layers, activations in their
function / method / module forms, arithmetic with numbers, residual sums, a loss), top-level
lines or one nn.Module class; the importer reads each and the document, run backward, must
give the loss and gradients PyTorch computes for the same steps. PyTorch computes them here
from the generated steps themselves (not from the script's text, which is never run), with
the corpus test's fixed fill for the layers on both sides."""

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_import_corpus import _fill, assert_same_numbers, fixed_layers  # noqa: F401

from backend.graph.importing.importer import from_python

# activation -> (F. function, torch. function or None, method or None, nn. module)
ACTS = {
    "relu": ("F.relu", "torch.relu", "relu", "nn.ReLU()"),
    "tanh": ("torch.tanh", "torch.tanh", "tanh", "nn.Tanh()"),
    "sigmoid": ("torch.sigmoid", "torch.sigmoid", "sigmoid", "nn.Sigmoid()"),
    "gelu": ("F.gelu", None, None, "nn.GELU()"),
    "silu": ("F.silu", None, None, "nn.SiLU()"),
    "softplus": ("F.softplus", None, None, "nn.Softplus()"),
    "elu": ("F.elu", None, None, "nn.ELU()"),
}
_TORCH_ACT = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "gelu": torch.nn.functional.gelu,
    "silu": torch.nn.functional.silu,
    "softplus": torch.nn.functional.softplus,
    "elu": torch.nn.functional.elu,
}
NUMBERS = st.sampled_from([0.5, 2.0, -1.5, 3.0, 0.25])

step = st.one_of(
    st.tuples(st.just("linear"), st.integers(1, 5), st.booleans()),
    st.tuples(st.just("act"), st.sampled_from(sorted(ACTS)), st.integers(0, 3)),
    st.tuples(st.just("number"), st.sampled_from(["+", "-", "*", "/"]), NUMBERS),
    st.tuples(st.just("square"), st.just(None), st.just(None)),
    st.tuples(st.just("residual"), st.just(None), st.just(None)),
)
spec = st.fixed_dictionaries(
    {
        "batch": st.integers(1, 3),
        "width": st.integers(1, 4),
        "steps": st.lists(step, min_size=1, max_size=6),
        "loss": st.sampled_from(["mean_square", "sum", "mse", "mse_like"]),
        "in_class": st.booleans(),
    }
)


def _act_form(name, form, x):
    f, t, m, mod = ACTS[name]
    choices = [f"{f}({x})", f"{t}({x})" if t else None, f"{x}.{m}()" if m else None, None]
    return choices[form] or f"{f}({x})"


def _x(s):
    n = s["batch"] * s["width"]
    flat = [round((i - n / 2) / n, 4) for i in range(n)]
    return [flat[r * s["width"] : (r + 1) * s["width"]] for r in range(s["batch"])]


def _widths(s):
    """Per step: whether a residual step adds (the value before the last other step has the
    same width as the current one), and the width after it."""
    width, before, out = s["width"], s["width"], []
    for kind, a, _ in s["steps"]:
        if kind == "residual":
            out.append(before == width)
            continue
        before = width
        width = a if kind == "linear" else width
        out.append(None)
    return out, width


def script(s):
    """The PyTorch script of a generated spec (its lines, each step one line)."""
    width, lines, layers, init = s["width"], ["prev = h"], [], []
    adds, last = _widths(s)
    for k, (kind, a, b) in enumerate(s["steps"]):
        if kind == "residual" and not adds[k]:
            continue
        if kind != "residual":
            lines.append("prev = h")
        if kind == "linear":
            init.append(f"self.fc{k} = nn.Linear({width}, {a}, bias={b})")
            layers.append(f"fc{k}")
            lines.append(f"h = self.fc{k}(h)")
            width = a
        elif kind == "act" and b == 3:  # the module form
            init.append(f"self.act{k} = {ACTS[a][3]}")
            lines.append(f"h = self.act{k}(h)")
        elif kind == "act":
            lines.append(f"h = {_act_form(a, b, 'h')}")
        elif kind == "number":
            lines.append(f"h = h {a} {b}")
        elif kind == "square":
            lines.append("h = h * h")
        else:  # residual: the sum with the value before the last other step
            lines.append("h = h + prev")
    head = [
        "import torch",
        "import torch.nn as nn",
        "import torch.nn.functional as F",
        "",
        f"x = torch.tensor({_x(s)!r}, requires_grad=True)",
    ]
    loss = {
        "mean_square": "loss = out.pow(2).mean()",
        "sum": "loss = out.sum()",
        "mse": f"loss = F.mse_loss(out, torch.zeros({s['batch']}, {last}))",
        "mse_like": "loss = F.mse_loss(out, torch.ones_like(out) * 0.5)",
    }[s["loss"]]
    if s["in_class"]:
        body = ["class Net(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        body += [f"        {ln}" for ln in init] or ["        pass"]
        body += ["", "    def forward(self, h):"]
        body += [f"        {ln}" for ln in lines] + ["        return h", "", "net = Net()"]
        body += ["out = net(x)"]
    else:
        body = [ln.replace("self.", "") for ln in init] + ["h = x"]
        body += [ln.replace("self.", "") for ln in lines] + ["out = h"]
    return "\n".join(head + body + [loss, "loss.backward()", ""])


def pytorch(s):
    """{loss, grads} of the spec computed by PyTorch directly from its steps."""
    x = torch.tensor(_x(s), requires_grad=True)
    h, prev, width, params = x, x, s["width"], []
    adds, _ = _widths(s)
    for k, (kind, a, b) in enumerate(s["steps"]):
        if kind != "residual":
            prev = h
        if kind == "linear":
            layer = torch.nn.Linear(width, a, bias=b)
            _fill(torch, layer)
            params += list(layer.parameters())
            h, width = layer(h), a
        elif kind == "act":
            h = _TORCH_ACT[a](h)
        elif kind == "number":
            h = {"+": h + b, "-": h - b, "*": h * b, "/": h / b}[a]
        elif kind == "square":
            h = h * h
        elif adds[k]:
            h = h + prev
    out = h
    loss = {
        "mean_square": lambda: out.pow(2).mean(),
        "sum": lambda: out.sum(),
        "mse": lambda: torch.nn.functional.mse_loss(out, torch.zeros_like(out)),
        "mse_like": lambda: torch.nn.functional.mse_loss(out, torch.ones_like(out) * 0.5),
    }[s["loss"]]()
    loss.backward()
    return {"loss": loss.item(), "grads": [p.grad.tolist() for p in [x, *params]]}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec)
def test_a_generated_script_imports_to_pytorchs_numbers(fixed_layers, s):  # noqa: F811
    text = script(s)
    doc = from_python(text)
    want = pytorch(s)
    assert np.isfinite(want["loss"])
    assert_same_numbers(doc, want)
