"""wiregrad.trace: live PyTorch models traced into documents that the engine runs to PyTorch's
output and to every parameter's gradient (float32 tolerances)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import wiregrad as wg
from backend.graph.tracing import CaptureError


def _check(model, inputs, loss=None, rtol=1e-4, atol=1e-5):
    """Trace `loss(model(*inputs))` (or the model's summed output), run the document with
    backward in the engine, compare the loss and every parameter's gradient with PyTorch."""
    model.zero_grad()
    fn = loss or (lambda *xs: model(*xs).sum())
    doc = wg.trace(fn, *inputs)
    out = wg.run(doc, backward=True)
    assert out.status == "ok", out.error
    expected = fn(*inputs)
    expected.backward()
    np.testing.assert_allclose(out.loss, expected.item(), rtol=rtol, atol=atol)
    named = dict(model.named_parameters())
    prefix = _prefix(fn, model)
    for name, p in named.items():
        got = out.grads.get(prefix + name)
        assert got is not None, f"no gradient for {name}: {sorted(out.grads)}"
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)
    return doc, out


def _prefix(fn, model):
    """The name the traced function knows the model by (its closure variable)."""
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        if cell.cell_contents is model:
            return name + "."
    return ""


def test_mlp_with_cross_entropy():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3)
    )
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    doc, _ = _check(model, (x, y), loss=lambda x, y: F.cross_entropy(model(x), y))
    ops = [n["op"] for n in doc["nodes"]]
    assert ops.count("linear") == 3 and "cross_entropy" in ops
    assert doc["target"] == "cross_entropy"


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_cnn_with_batch_norm(mode):
    torch.manual_seed(1)
    model = ConvNet()
    model.bn1.running_mean.uniform_(-0.5, 0.5)
    model.bn1.running_var.uniform_(0.5, 1.5)
    getattr(model, mode)()
    before = model.bn1.running_mean.clone()
    x, y = torch.randn(3, 1, 8, 8), torch.tensor([0, 4, 2])
    doc, _ = _check(model, (x, y), loss=lambda x, y: F.cross_entropy(model(x), y))
    (net,) = [d for d in doc["modules"] if d["name"] == "ConvNet"]
    (bn,) = [n for n in net["nodes"] if n["op"] == "batch_norm"]
    assert bn["params"]["mode"] == mode
    # the statistics as they were before the traced run (tracing leaves the model as it was)
    np.testing.assert_allclose(bn["params"]["running_mean"], before.tolist())


class Residual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList([Residual(d) for _ in range(n)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def test_residual_blocks_share_one_definition():
    torch.manual_seed(2)
    model = Stack(6, 3)
    x = torch.randn(4, 6)
    doc, out = _check(model, (x,), loss=lambda x: model(x).pow(2).mean())
    names = sorted(d["name"] for d in doc["modules"])
    assert names == ["Residual", "Stack"], names
    (stack,) = [d for d in doc["modules"] if d["name"] == "Stack"]
    blocks = [n for n in stack["nodes"] if n["op"] == "module"]
    assert [b["id"] for b in blocks] == ["blocks.0", "blocks.1", "blocks.2"]
    assert all(b["params"]["module"] == "Residual" for b in blocks)
    # the first instance's weights are the definition's, the others' their own state
    assert "state" not in blocks[0]["params"] and "fc1" in blocks[1]["params"]["state"]


class EncoderBlock(nn.Module):
    """A pre-norm transformer block with PyTorch's attention layer."""

    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_transformer_block():
    torch.manual_seed(3)
    model = EncoderBlock(8, 2)
    x = torch.randn(2, 5, 8)
    doc, _ = _check(model, (x,), loss=lambda x: model(x).pow(2).mean())
    (block,) = doc["modules"]
    assert "multi_head_attention" in [n["op"] for n in block["nodes"]]


class Tied(nn.Module):
    """Nested modules, and one weight used by two of them (an embedding tied to the output)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 4))
        self.inner = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())

    def forward(self, x):
        h = self.inner(x @ self.w)
        return h @ self.w.T


def test_nested_modules_and_shared_weights():
    torch.manual_seed(4)
    model = Tied()
    x = torch.randn(3, 5)
    doc, out = _check(model, (x,), loss=lambda x: model(x).sum())
    assert "model.w" in out.grads  # one leaf, both uses' gradients summed


def test_control_flow_is_the_run_s_and_said():
    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            h = self.fc(x)
            if h.sum() > 0:
                return h.relu().sum()
            return (h * 2).sum()

    torch.manual_seed(5)
    model = Gate()
    x = torch.randn(2, 3)
    doc, _ = _check(model, (x,))
    assert "was " in doc["description"] and "if h.sum() > 0" in doc["description"]


def test_unsupported_op_names_its_module_path():
    class Odd(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Identity(), Odd()])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x.sum()

    with pytest.raises(CaptureError, match=r"^model\.blocks\.1: torch\.cumsum is not an op"):
        wg.trace(Outer(), torch.randn(3))


def test_layer_settings_the_node_cannot_say_are_refused():
    model = nn.Sequential(nn.Conv2d(1, 2, 3, dilation=2))
    with pytest.raises(CaptureError, match=r"model\.0: Conv2d\(.*dilation=\(2, 2\)"):
        wg.trace(model, torch.randn(1, 1, 8, 8))


def test_a_layer_called_twice_is_refused():
    fc = nn.Linear(3, 3)
    with pytest.raises(CaptureError, match="called 2 times"):
        wg.trace(lambda x: fc(fc(x)).sum(), torch.randn(2, 3))


def test_trace_then_code_round_trip():
    torch.manual_seed(6)
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    doc = wg.trace(lambda x, y: F.mse_loss(model(x), y), x, y)
    code = wg.to_code(doc, flavor="torch")
    back = wg.from_code(code)
    a, b = wg.run(doc, backward=True), wg.run(back, backward=True)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-6)
    for name, g in a.grads.items():
        if g.ndim:  # the parameters: under the same names after the round trip
            same = [h for h in b.grads.values() if h.shape == g.shape and np.allclose(g, h)]
            assert same, name


def test_load_save_and_run(tmp_path):
    torch.manual_seed(7)
    model = nn.Linear(2, 1)
    doc = wg.trace(lambda x: model(x).sum(), torch.randn(3, 2))
    path = wg.save(doc, tmp_path / "g.json")
    again = wg.load(path)
    assert wg.run(again).loss == pytest.approx(wg.run(doc).loss)
    with pytest.raises(wg.DocumentError, match="not a graph document"):
        wg.load(_write(tmp_path / "bad.json", '{"format": "nope"}'))


def _write(path, text):
    path.write_text(text)
    return path


def test_a_target_inside_a_module_and_a_module_called_twice():
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3, 3))

        def forward(self, x):
            return torch.tanh(x @ self.w)

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.blk = Inner()

        def forward(self, x):
            return self.blk(self.blk(x)).sum()

    torch.manual_seed(8)
    model = Twice()
    doc, out = _check(model, (torch.randn(2, 3),))
    assert list(out.grads) == ["model.blk.w"]  # one parameter, both calls' gradients summed

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Twice()

        def forward(self, x):
            return self.inner(x)

    torch.manual_seed(9)
    outer, x = Outer(), torch.randn(2, 3)
    doc = wg.trace(outer, x)  # the module itself: its output is its inner module's
    assert doc["target"] == "inner/out"  # that module's output node, in the flat graph
    out = wg.run(doc, backward=True)
    loss = outer(x)
    loss.backward()
    np.testing.assert_allclose(out.loss, loss.item(), rtol=1e-5)
    np.testing.assert_allclose(out.grads["inner.blk.w"], outer.inner.blk.w.grad, rtol=1e-5)


def test_pytorch_modules_without_a_node_are_named():
    shuffle = nn.PixelShuffle(2)
    with pytest.raises(CaptureError, match=r"^model\.shuffle \(nn\.PixelShuffle, which has no"):
        wg.trace(lambda x: shuffle(x).sum(), torch.randn(1, 4, 2, 2))


def test_dropout_in_train_mode_is_noted():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    doc = wg.trace(lambda x: model(x).sum(), torch.randn(2, 3))
    assert "model.1 (Dropout, p=0.5) was in train()" in doc["description"]
    model.eval()
    doc = wg.trace(lambda x: model(x).sum(), torch.randn(2, 3))
    assert "train()" not in doc["description"]


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention, written out: the causal mask a buffer of torch.tril, filled with
    -inf by masked_fill."""

    def __init__(self, d, heads, block):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x)
        q, k, v = qkv[..., :C], qkv[..., C : 2 * C], qkv[..., 2 * C :]
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


def test_causal_attention_and_its_code_round_trip():
    torch.manual_seed(10)
    model = CausalSelfAttention(8, 2, block=6)
    x = torch.randn(2, 5, 8)  # T = 5 of a block of 6: the mask is sliced to the run's size
    doc, out = _check(model, (x,), loss=lambda x: model(x).pow(2).mean())
    (attn,) = doc["modules"]
    (fill,) = [n for n in attn["nodes"] if n["op"] == "masked_fill"]
    assert fill["params"]["value"] == "-inf"
    back = wg.from_code(wg.to_code(doc, flavor="torch"))
    np.testing.assert_allclose(wg.run(back, backward=True).loss, out.loss, rtol=1e-6)
