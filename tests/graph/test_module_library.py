"""The module library (backend/graph/document/module_library.py): each entry, built with its
defaults and with other arguments, is a definition that validates and runs forward and backward, and
an instance of it gives the values and gradients of the PyTorch it mirrors (nn.Sequential of
the layers, nn.MultiheadAttention, nn.TransformerEncoderLayer, ...) loaded with the weights
the instance's layers started from. Bad arguments are refused, each named, in PyTorch's
words where PyTorch has them."""

import json
import subprocess
import sys
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from _docs import edge, node, tensor
from _numbers import close, npy
from torch import nn

import engine as eg
from backend.graph import GraphInvalid, parse, registry, run_records, validate
from backend.graph.document import module_library
from backend.graph.document.module_library import LibraryArgsError, build
from backend.graph.document.modules import flatten
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.op_context import OpContext
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]


def document(definition, x, state=None, seed=0, training=None):
    """in (float64, requires grad) -> instance b of `definition` -> tanh -> sum."""
    params = {"module": definition["name"], "seed": seed}
    if state:
        params["state"] = state
    return parse(
        {
            "version": 2,
            "modules": [definition],
            "nodes": [
                tensor("in", value=x.tolist(), dtype="float64", requires_grad=True),
                node("b", "module", **params),
                node("t", "tanh"),
                node("s", "sum"),
            ],
            "edges": [
                edge("e_in", "in", "b", "x"),
                edge("e_out", "b", "t", source_port="y"),
                edge("t-s", "t", "s"),
            ],
            "target": "s",
            **({"training": training} if training else {}),
        }
    )


class _Grab(OpContext):
    def module(self, key, factory):
        self.layer = factory()
        return self.layer


def started_state(flat, res, node_id):
    """The state_dict of the engine module flat layer node `node_id` started the run with: the
    node run again on the input it had (same seed, same init, same stored state)."""
    n = flat.node(node_id)
    spec = registry.get(n.op)
    source = next(e.source for e in flat.edges if e.target == node_id)
    x = eg.tensor(npy(res.values[source]), dtype=eg.float64)
    ctx = _Grab()
    with eg.no_grad():
        spec.run(ctx, [x], resolved_params(spec, n.params))
    return {k: torch.tensor(npy(v)) for k, v in ctx.layer.state_dict().items()}


def compare(definition, reference, x, *, state=None, train=False, rtol=1e-5):
    """Runs instance b of `definition` on x backward, loads each of `reference`'s children
    named as an inner layer node with that node's starting weights, and compares the output,
    the gradient into the instance and every parameter's gradient."""
    d = document(definition, x, state)
    assert validate(d) == []
    flat = flatten(d)
    res, _ = run_records(flat, "backward", "s")
    assert res.status == "ok", res.error
    for name, child in reference.named_children():
        if any(True for _ in child.parameters()) or any(True for _ in child.buffers()):
            child.load_state_dict(started_state(flat, res, f"b/{name}"))
    reference.double().train(train).zero_grad(set_to_none=True)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = reference(xt)
    torch.tanh(out).sum().backward()
    close(res.values["b/y"], out, rtol=rtol)
    close(res.edge_grads["e_in"], xt.grad, rtol=rtol)
    grads = {k[2:]: v for k, v in res.leaf_grads.items() if k.startswith("b/")}
    assert set(grads) == {name for name, _ in reference.named_parameters()}
    for name, p in reference.named_parameters():
        close(grads[name], p.grad, rtol=rtol)
    return res


def rand(*shape):
    return np.random.default_rng(sum(shape)).normal(size=shape)


ACT = {"relu": nn.ReLU, "gelu": nn.GELU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}
ACT["leaky_relu"] = nn.LeakyReLU


@pytest.mark.parametrize(
    "args",
    [{}, {"in_features": 5, "out_features": 3, "bias": False, "activation": "gelu"}]
    + [{"activation": a} for a in ("tanh", "sigmoid", "leaky_relu")],
)
def test_linear_act_is_linear_then_its_activation(args):
    v = module_library.arguments("LinearAct", args)
    ref = nn.Sequential(
        OrderedDict(
            linear=nn.Linear(v["in_features"], v["out_features"], bias=v["bias"]),
            activation=ACT[v["activation"]](),
        )
    )
    compare(build("LinearAct", args), ref, rand(3, v["in_features"]))


class _ConvBlock(nn.Module):
    def __init__(self, v):
        super().__init__()
        pad = (v["kernel_size"] - 1) // 2 if v["padding"] is None else v["padding"]
        self.conv = nn.Conv2d(
            v["in_channels"], v["out_channels"], v["kernel_size"], v["stride"], pad, bias=v["bias"]
        )
        self.norm = nn.BatchNorm2d(v["out_channels"]) if v["norm"] == "batch" else nn.Identity()
        self.relu = nn.ReLU()
        pools = {"max": nn.MaxPool2d, "avg": nn.AvgPool2d}
        self.pool = pools[v["pool"]](v["pool_size"]) if v["pool"] != "none" else nn.Identity()

    def forward(self, x):
        return self.pool(self.relu(self.norm(self.conv(x))))


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"in_channels": 2, "out_channels": 3, "kernel_size": 5, "stride": 2, "padding": 1,
         "bias": False, "norm": "none", "pool": "avg", "pool_size": 2},
        {"in_channels": 3, "out_channels": 4, "pool": "none", "kernel_size": 2},
    ],
)  # fmt: skip
def test_conv_block_is_conv_batch_norm_relu_pool(args):
    v = module_library.arguments("ConvBlock", args)
    compare(build("ConvBlock", args), _ConvBlock(v), rand(2, v["in_channels"], 7, 7))


def test_conv_blocks_batch_norm_in_train_mode_uses_the_batchs_statistics():
    """A forward or backward run is eval() (running statistics); an instance whose norm is
    set to train() normalises by the batch's, as model.train() does."""
    v = module_library.arguments("ConvBlock", {"in_channels": 2, "out_channels": 3})
    state = {"norm": {"mode": "train"}}
    compare(build("ConvBlock", v), _ConvBlock(v), rand(3, 2, 6, 6), state=state, train=True)


class _BasicBlock(nn.Module):
    """torchvision's BasicBlock, its layers named as the definition's nodes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = stride != 1 or cin != cout
        if self.short:
            self.downsample_conv = nn.Conv2d(cin, cout, 1, stride, bias=False)
            self.downsample_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        out = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        skip = self.downsample_bn(self.downsample_conv(x)) if self.short else x
        return torch.relu(out + skip)


@pytest.mark.parametrize(
    "args, shortcut",
    [({}, False), ({"in_channels": 3, "out_channels": 5, "stride": 2}, True),
     ({"in_channels": 4, "out_channels": 4, "stride": 2}, True)],
)  # fmt: skip
def test_residual_block_is_torchvisions_basic_block(args, shortcut):
    v = module_library.arguments("ResidualBlock", args)
    definition = build("ResidualBlock", args)
    assert any(n["id"] == "downsample_conv" for n in definition["nodes"]) == shortcut
    ref = _BasicBlock(v["in_channels"], v["out_channels"], v["stride"])
    for mode in (False, True):  # eval(): a run's; train(): an instance set to train()
        state = {k: {"mode": "train"} for k in ("bn1", "bn2", "downsample_bn")} if mode else None
        compare(definition, ref, rand(2, v["in_channels"], 6, 6), state=state, train=mode)


class _SelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(embed_dim, num_heads, bias=bias, batch_first=True)

    def forward(self, x):
        return self.self_attn(x, x, x, need_weights=False)[0]


@pytest.mark.parametrize("args", [{}, {"embed_dim": 6, "num_heads": 3, "bias": False}])
def test_multi_head_attention_is_torchs_self_attention(args):
    v = module_library.arguments("MultiHeadAttention", args)
    ref = _SelfAttention(v["embed_dim"], v["num_heads"], v["bias"])
    compare(build("MultiHeadAttention", args), ref, rand(2, 3, v["embed_dim"]))


def _encoder_layer(v):
    return nn.TransformerEncoderLayer(
        v["d_model"], v["nhead"], v["dim_feedforward"], dropout=v["dropout"],
        activation=v["activation"], layer_norm_eps=v["layer_norm_eps"], batch_first=True,
        norm_first=v["norm_first"],
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"d_model": 8, "nhead": 4, "dim_feedforward": 12, "activation": "gelu",
         "layer_norm_eps": 1e-3, "norm_first": True},
        {"d_model": 6, "nhead": 1, "dim_feedforward": 10, "dropout": 0.3},
    ],
)  # fmt: skip
def test_transformer_encoder_block_is_torchs_encoder_layer(args):
    """nn.TransformerEncoderLayer(batch_first=True) with the same weights: post-norm (and
    pre-norm); a dropout > 0 is off in a run, as in eval()."""
    v = module_library.arguments("TransformerEncoderBlock", args)
    ref = _encoder_layer(v)
    compare(build("TransformerEncoderBlock", args), ref, rand(2, 3, v["d_model"]))


def test_transformer_default_is_post_norm_relu_with_pytorchs_feed_forward_size():
    d = build("TransformerEncoderBlock", {})
    ops = {n["id"]: n for n in d["nodes"]}
    assert ops["activation"]["op"] == "relu"
    assert ops["linear1"]["params"]["out_features"] == 2048
    assert ops["linear2"]["params"]["out_features"] == 16
    into = {e["target"]: e["source"] for e in d["edges"] if e["targetPort"] == "input"}
    assert into["y"] == "norm2" and into["norm1"] == "add1"  # the norms come after the adds
    assert not any(n["op"] == "dropout" for n in d["nodes"])


@pytest.mark.parametrize(
    "args, shape",
    [({}, (3, 16)),
     ({"in_features": 12, "hidden_features": [8, 6], "out_features": 3, "activation": "tanh",
       "dropout": 0.1, "flatten": True}, (2, 3, 2, 2)),
     ({"in_features": 5, "hidden_features": [], "out_features": 2}, (4, 5))],
)  # fmt: skip
def test_mlp_head_is_linears_with_activations_between(args, shape):
    v = module_library.arguments("MLPHead", args)
    layers = OrderedDict()
    if v["flatten"]:
        layers["flatten"] = nn.Flatten()
    sizes = [v["in_features"], *v["hidden_features"], v["out_features"]]
    for i in range(len(sizes) - 1):
        layers[f"linear{i + 1}"] = nn.Linear(sizes[i], sizes[i + 1])
        if i < len(sizes) - 2:
            layers[f"activation{i + 1}"] = ACT[v["activation"]]()
            if v["dropout"]:
                layers[f"dropout{i + 1}"] = nn.Dropout(v["dropout"])
    compare(build("MLPHead", args), nn.Sequential(layers), rand(*shape))


@pytest.mark.parametrize("entry", [e.name for e in module_library.ENTRIES])
def test_every_entry_validates_and_two_instances_start_apart(entry):
    """Built with its defaults: the definition validates; two instances (seeds 0 and 1) of it
    have different weights."""
    d = build(entry, {})
    assert d["name"] == entry and d["inputs"] == ["x"] and d["outputs"] == ["y"]
    assert d["doc"].startswith(f"{entry}(")
    v = module_library.arguments(entry, {})
    shapes = {
        "LinearAct": (3, v.get("in_features")),
        "ConvBlock": (2, v.get("in_channels"), 6, 6),
        "ResidualBlock": (2, v.get("in_channels"), 4, 4),
        "MultiHeadAttention": (2, 3, v.get("embed_dim")),
        "TransformerEncoderBlock": (2, 3, v.get("d_model")),
        "MLPHead": (3, v.get("in_features")),
    }
    first = flatten(document(d, rand(*shapes[entry]), seed=0))
    second = flatten(document(d, rand(*shapes[entry]), seed=1))
    res0, _ = run_records(first, "forward")
    res1, _ = run_records(second, "forward")
    assert res0.status == res1.status == "ok"
    assert not np.allclose(npy(res0.values["b/y"]), npy(res1.values["b/y"]))


@pytest.mark.parametrize(
    "entry, args, field, message",
    [
        ("MultiHeadAttention", {"embed_dim": 10, "num_heads": 3}, "num_heads",
         "embed_dim must be divisible by num_heads"),
        ("TransformerEncoderBlock", {"d_model": 10, "nhead": 4}, "nhead",
         "embed_dim must be divisible by num_heads"),
        ("TransformerEncoderBlock", {"dropout": 1.5}, "dropout",
         "dropout probability has to be between 0 and 1, but got 1.5"),
        ("MLPHead", {"dropout": -0.1}, "dropout",
         "dropout probability has to be between 0 and 1, but got -0.1"),
        ("LinearAct", {"out_features": 0}, "out_features", "out_features must be at least 1"),
        ("LinearAct", {"activation": "swish"}, "activation", "activation must be one of relu"),
        ("ConvBlock", {"kernel_size": 2.5}, "kernel_size", "kernel_size must be a whole number"),
        ("ConvBlock", {"bias": "yes"}, "bias", "bias must be true or false"),
        ("ConvBlock", {"kernels": 3}, "kernels",
         "ConvBlock() got an unexpected keyword argument 'kernels'"),
        ("MLPHead", {"hidden_features": [8, 0]}, "hidden_features",
         "hidden_features must be sizes from 1 to 65536"),
        ("ResidualBlock", {"in_channels": -2}, "in_channels", "in_channels must be at least 1"),
    ],
)  # fmt: skip
def test_bad_arguments_are_named_in_pytorchs_words(entry, args, field, message):
    with pytest.raises(LibraryArgsError) as caught:
        build(entry, args)
    assert set(caught.value.errors) == {field}
    assert caught.value.errors[field].startswith(message)
    assert str(caught.value).startswith(f"{entry}: ")


def test_pytorch_itself_refuses_the_heads_and_dropout_with_these_words():
    """The messages above are PyTorch's: its layers raise them for the same arguments."""
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.TransformerEncoderLayer(10, 4)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_an_unknown_entry_is_a_key_error_and_whole_floats_are_whole_numbers():
    with pytest.raises(KeyError):
        build("NoSuchBlock", {})
    assert build("LinearAct", {"out_features": 3.0})["nodes"][1]["params"]["out_features"] == 3
    with pytest.raises(LibraryArgsError):
        build("LinearAct", [1, 2])


def test_describe_lists_every_entry_with_its_arguments_as_op_params():
    entries = {e["name"]: e for e in module_library.describe()}
    assert list(entries) == [
        "LinearAct", "ConvBlock", "ResidualBlock", "MultiHeadAttention",
        "TransformerEncoderBlock", "MLPHead",
    ]  # fmt: skip
    enc = {a["name"]: a for a in entries["TransformerEncoderBlock"]["args"]}
    assert enc["nhead"]["type"] == "int" and enc["dim_feedforward"]["default"] == 2048
    assert enc["activation"]["choices"] == ["relu", "gelu"]
    for e in entries.values():
        assert e["doc"] and e["torch"] and e["args"]


@pytest.mark.parametrize(
    "entry, args, shape, expected",
    [
        ("LinearAct", {"in_features": 4}, (3, 5), "[*, 4]"),
        ("ConvBlock", {"in_channels": 3}, (2, 5, 6, 6), "[*, 3, any, any]"),
        ("ResidualBlock", {"in_channels": 8}, (2, 8, 6), "[*, 8, any, any]"),
        ("MultiHeadAttention", {"embed_dim": 8, "num_heads": 2}, (2, 3, 6), "[*, 8]"),
        ("TransformerEncoderBlock", {"d_model": 8, "nhead": 2}, (2, 3, 16), "[*, 8]"),
        ("MLPHead", {"in_features": 12}, (2, 10), "[*, 12]"),
    ],
)
def test_an_input_of_another_size_is_refused_at_the_modules_input(entry, args, shape, expected):
    """ConvBlock(in_channels=3) takes 3 channels, as nn.Conv2d(3, ...) does: another input is
    refused at the instance's input node (b/x), before any layer makes weights of its size."""
    d = document(build(entry, args), rand(*shape))
    problems = validate(d)
    assert [(p.node, p.message) for p in problems] == [
        ("b/x", f"expected input with shape {expected}, but got input of size {list(shape)}")
    ]
    with pytest.raises(GraphInvalid, match=r"b/x: expected input with shape"):
        run_records(flatten(d), "forward")  # a run checks first, and says the same


def test_a_flattening_mlp_head_takes_any_maps_whose_size_is_in_features():
    d = build("MLPHead", {"in_features": 12, "flatten": True})
    assert "shape" not in d["nodes"][0]["params"]
    assert validate(document(d, rand(2, 3, 2, 2))) == []
    assert validate(document(d, rand(2, 12))) == []


EXPORT_SHAPES = {
    "LinearAct": (3, 4),
    "ConvBlock": (2, 1, 6, 6),
    "ResidualBlock": (2, 8, 4, 4),
    "MultiHeadAttention": (2, 3, 8),
    "TransformerEncoderBlock": (2, 3, 16),
    "MLPHead": (3, 16),
}


def _script_run(text):
    return subprocess.run(
        [sys.executable, "-c", text], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_every_entry_exports_to_a_pytorch_script_that_computes_the_same_loss():
    """An instance of each entry, exported as PyTorch code and run in its own process, prints
    the value the executor gives the sum at the end."""
    docs = {e: document(build(e, {}), rand(*EXPORT_SHAPES[e])) for e in EXPORT_SHAPES}
    with ThreadPoolExecutor(max_workers=2) as pool:
        scripts = [to_python(d, "torch", trace=True) for d in docs.values()]
        procs = dict(zip(docs, pool.map(_script_run, scripts), strict=True))
    for entry, d in docs.items():
        proc = procs[entry]
        assert proc.returncode == 0, (entry, proc.stderr[-2000:])
        printed = [ln for ln in proc.stdout.splitlines() if ln.startswith("value s ")]
        assert len(printed) == 1, (entry, proc.stdout[-500:])
        res, _ = run_records(d, "forward")
        close(json.loads(printed[0].split(" ", 2)[2]), res.values["s"])


@pytest.mark.parametrize("entry", [e.name for e in module_library.ENTRIES])
def test_an_instance_trains_and_its_trained_weights_go_back_into_its_state(entry):
    """Adam on the sum of tanh of the output: the loss falls in 3 steps; the trained weights
    of the layers inside are written into the instance's state, and the next run starts
    from them (it computes what the trainer's evaluation computes)."""
    training = {"loss": "s", "optimizer": "adam", "lr": 0.01, "steps": 3}
    d = document(build(entry, {}), rand(*EXPORT_SHAPES[entry]), training=training)
    tr = Trainer(d)
    before = tr.evaluate()
    tr.run()
    after = tr.evaluate()
    assert after < before
    back = tr.written_back()
    state = back.node("b").params["state"]
    layers = {n["id"] for n in build(entry, {})["nodes"] if registry.get(n["op"]).layer}
    assert layers and layers <= set(state), (layers, set(state))
    res, _ = run_records(back, "forward")
    np.testing.assert_allclose(res.values["s"].item(), after, rtol=1e-5)
