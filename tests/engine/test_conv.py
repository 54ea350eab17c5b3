"""Convolutions against torch: conv1d/2d/3d and conv_transpose1d/2d (values, grads of input,
weight and bias, grad_fn names), argument checks word for word, gradcheck and double backward,
the Conv layers' shapes, init and repr, and a tiny conv net trained for 3 steps beside torch."""

import math

import numpy as np
import pytest
import torch
from _torch_compare import R, case, compare_with_torch, eg, eg_F, f32, grad_fn_name, run_both

import engine.nn as enn
import engine.optim as eoptim


def _conv(name, **kw):
    return lambda m, F, x, w, *b: getattr(F, name)(x, w, *(b or (None,)), **kw)


CASES = [
    case("conv2d", _conv("conv2d"), R(2, 4, 8, 7), R(6, 4, 3, 3), R(6)),
    case("conv2d_nobias", _conv("conv2d"), R(2, 4, 8, 7), R(6, 4, 3, 2)),
    case(
        "conv2d_stride_pad",
        _conv("conv2d", stride=2, padding=1),
        R(2, 3, 9, 8),
        R(4, 3, 3, 3),
        R(4),
    ),
    case(
        "conv2d_tuple_args",
        _conv("conv2d", stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
        R(2, 3, 9, 8),
        R(4, 3, 2, 3),
        R(4),
    ),
    case(
        "conv2d_dilation",
        _conv("conv2d", dilation=2, padding=2),
        R(1, 2, 9, 9),
        R(3, 2, 3, 3),
        R(3),
    ),
    case("conv2d_groups", _conv("conv2d", groups=2, padding=1), R(2, 4, 6, 6), R(6, 2, 3, 3), R(6)),
    case("conv2d_depthwise", _conv("conv2d", groups=4), R(2, 4, 6, 6), R(8, 1, 3, 3), R(8)),
    case("conv2d_same", _conv("conv2d", padding="same"), R(2, 3, 7, 6), R(4, 3, 3, 3), R(4)),
    case(
        "conv2d_same_even",
        _conv("conv2d", padding="same", dilation=(1, 3)),
        R(2, 3, 7, 9),
        R(4, 3, 2, 4),
        R(4),
    ),
    case("conv2d_valid", _conv("conv2d", padding="valid"), R(2, 3, 7, 6), R(4, 3, 3, 3)),
    case("conv2d_unbatched", _conv("conv2d", padding=1), R(3, 5, 6), R(4, 3, 3, 3), R(4)),
    case("conv2d_1x1", _conv("conv2d"), R(2, 5, 4, 4), R(3, 5, 1, 1), R(3)),
    case(
        "conv2d_f32", _conv("conv2d", padding=1), f32(R(2, 3, 6, 6)), f32(R(4, 3, 3, 3)), f32(R(4))
    ),
    case("conv2d_no_input_grad", _conv("conv2d"), R(2, 3, 6, 6, grad=False), R(4, 3, 3, 3), R(4)),
    case("conv2d_only_input_grad", _conv("conv2d"), R(2, 3, 6, 6), R(4, 3, 3, 3, grad=False)),
    case("conv1d", _conv("conv1d", stride=2, padding=1), R(2, 4, 11), R(6, 4, 3), R(6)),
    case("conv1d_groups_dil", _conv("conv1d", groups=2, dilation=3), R(2, 4, 11), R(4, 2, 3), R(4)),
    case("conv1d_same", _conv("conv1d", padding="same"), R(2, 4, 11), R(3, 4, 4), R(3)),
    case("conv1d_unbatched", _conv("conv1d"), R(4, 11), R(3, 4, 4), R(3)),
    case(
        "conv3d",
        _conv("conv3d", stride=(1, 2, 1), padding=1),
        R(2, 2, 4, 5, 4),
        R(3, 2, 2, 3, 2),
        R(3),
    ),
    case("conv_transpose2d", _conv("conv_transpose2d"), R(2, 4, 5, 6), R(4, 3, 3, 3), R(3)),
    case(
        "conv_transpose2d_args",
        _conv(
            "conv_transpose2d",
            stride=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            dilation=(1, 2),
        ),
        R(2, 4, 5, 4),
        R(4, 3, 3, 2),
        R(3),
    ),
    case(
        "conv_transpose2d_groups",
        _conv("conv_transpose2d", stride=2, groups=2),
        R(2, 4, 3, 3),
        R(4, 3, 2, 2),
        R(6),
    ),
    case(
        "conv_transpose2d_outpad_dil",
        _conv("conv_transpose2d", output_padding=1, dilation=2),
        R(2, 2, 3, 3),
        R(2, 3, 2, 2),
    ),
    case(
        "conv_transpose2d_unbatched",
        _conv("conv_transpose2d", stride=2),
        R(4, 3, 3),
        R(4, 2, 3, 3),
        R(2),
    ),
    case(
        "conv_transpose1d",
        _conv("conv_transpose1d", stride=3, padding=1, output_padding=2),
        R(2, 4, 5),
        R(4, 3, 4),
        R(3),
    ),
    case(
        "conv_transpose1d_groups", _conv("conv_transpose1d", groups=4), R(2, 4, 5), R(4, 1, 3), R(4)
    ),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_conv_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)
    _, (t_in, t_out), (e_in, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


def _err(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - comparing whatever each raises
        return type(exc).__name__, str(exc)
    return None


def _x(m, *shape, dtype=None):
    return m.ones(*shape, dtype=dtype or m.float32)


ERRORS = {
    "channels": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 3, 3, 3)),
    "channels_unbatched": lambda m, F: F.conv2d(_x(m, 4, 8, 8), _x(m, 6, 3, 3, 3)),
    "groups_in": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 1, 3, 3), groups=3),
    "groups_out": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 5, 2, 3, 3), groups=2),
    "groups_zero": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 5, 2, 3, 3), groups=0),
    "too_small": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 9, 9)),
    "too_small_dil": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), dilation=4),
    "too_small_1d": lambda m, F: F.conv1d(_x(m, 2, 4, 8), _x(m, 6, 4, 9)),
    "rank": lambda m, F: F.conv2d(_x(m, 8, 8), _x(m, 6, 4, 3, 3)),
    "rank5": lambda m, F: F.conv2d(_x(m, 1, 2, 4, 8, 8), _x(m, 6, 4, 3, 3)),
    "weight_rank": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3)),
    "stride_len": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), stride=(1, 1, 1)),
    "dtype_double_float": lambda m, F: F.conv2d(
        _x(m, 2, 4, 8, 8, dtype=m.float64), _x(m, 6, 4, 3, 3)
    ),
    "dtype_float_double": lambda m, F: F.conv2d(
        _x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3, dtype=m.float64)
    ),
    "bias_size": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), _x(m, 5)),
    "bias_dtype": lambda m, F: F.conv2d(
        _x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), _x(m, 6, dtype=m.float64)
    ),
    "same_strided": lambda m, F: F.conv2d(
        _x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), stride=2, padding="same"
    ),
    "bad_padding": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), padding="foo"),
    "neg_padding": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), padding=-1),
    "zero_stride": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), stride=0),
    "zero_dilation": lambda m, F: F.conv2d(_x(m, 2, 4, 8, 8), _x(m, 6, 4, 3, 3), dilation=0),
    "ct_channels": lambda m, F: F.conv_transpose2d(_x(m, 2, 4, 8, 8), _x(m, 3, 3, 3, 3)),
    "ct_output_padding": lambda m, F: F.conv_transpose2d(
        _x(m, 2, 4, 8, 8), _x(m, 4, 3, 3, 3), output_padding=1
    ),
    "ct_output_padding_1d": lambda m, F: F.conv_transpose1d(
        _x(m, 2, 4, 8), _x(m, 4, 3, 3), output_padding=1
    ),
    "ct_groups": lambda m, F: F.conv_transpose2d(_x(m, 2, 4, 8, 8), _x(m, 4, 3, 3, 3), groups=3),
    "ct_same": lambda m, F: F.conv_transpose2d(
        _x(m, 2, 4, 8, 8), _x(m, 4, 3, 3, 3), padding="same"
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    fn = ERRORS[name]
    expected = _err(lambda: fn(torch, torch.nn.functional))
    assert expected is not None
    assert _err(lambda: fn(eg, eg_F)) == expected


def _tensors(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [eg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


GRADCHECK = [
    (
        "conv2d",
        lambda x, w, b: eg_F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
        (2, 4, 5, 6),
        (4, 2, 2, 3),
        (4,),
        {"groups": 2},
    ),
    (
        "conv1d",
        lambda x, w, b: eg_F.conv1d(x, w, b, padding="same"),
        (2, 2, 6),
        (3, 2, 4),
        (3,),
        {},
    ),
    (
        "conv_transpose2d",
        lambda x, w, b: eg_F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (2, 2, 3, 3),
        (2, 3, 3, 3),
        (3,),
        {},
    ),
    (
        "conv_transpose1d",
        lambda x, w, b: eg_F.conv_transpose1d(x, w, b, stride=2, dilation=2),
        (1, 2, 4),
        (2, 2, 3),
        (2,),
        {},
    ),
]


@pytest.mark.parametrize("name, fn, xs, ws, bs, extra", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn, xs, ws, bs, extra):
    x, w, b = _tensors(3, xs, ws, bs)
    if extra.get("groups"):
        g = extra["groups"]

        def f(x, w, b):
            return eg_F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=g)

        fn = f
    assert eg.autograd.gradcheck(fn, (x, w, b)) is True


@pytest.mark.parametrize("transposed", [False, True])
def test_double_backward_matches_torch(transposed):
    rng = np.random.default_rng(5)
    xa, wa = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    out = {}
    for m in (torch, eg):
        F = torch.nn.functional if m is torch else eg_F
        x = m.tensor(xa, requires_grad=True)
        w = m.tensor(wa, requires_grad=True)
        conv = F.conv_transpose2d if transposed else F.conv2d
        kw = {"stride": 2, "padding": 1} if transposed else {"padding": 1}
        y = conv(x, w if transposed else w.transpose(0, 1), **kw)
        gx, gw = m.autograd.grad((y**2).sum(), (x, w), create_graph=True)
        names = (grad_fn_name(gx), grad_fn_name(gw))
        ((gx**2).sum() + (gw * gw).sum()).backward()
        out[m.__name__] = (x.grad.numpy(), w.grad.numpy(), names)
    np.testing.assert_allclose(out["engine"][0], out["torch"][0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out["engine"][1], out["torch"][1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("which", [0, 1])
def test_gradcheck_of_the_gradient(which):
    x, w = _tensors(7, (1, 2, 4, 4), (2, 2, 2, 2))

    def grad_of(x, w):
        with eg.enable_grad():  # gradcheck evaluates the function under no_grad too
            y = eg_F.conv2d(x, w, padding=1, stride=2)
            return eg.autograd.grad((y * y).sum(), (x, w), create_graph=True)[which]

    assert eg.autograd.gradcheck(grad_of, (x, w)) is True


# -- layers -------------------------------------------------------------------------------------
LAYERS = [
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": "same" if False else 1}),
    ("Conv2d", (4, 6, 3), {}),
    (
        "Conv2d",
        (4, 6, (3, 2)),
        {"stride": 2, "padding": 1, "dilation": 2, "groups": 2, "bias": False},
    ),
    ("Conv2d", (4, 6, 3), {"padding": "same"}),
    ("Conv3d", (2, 4, 2), {}),
    ("ConvTranspose1d", (4, 6, 3), {}),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "output_padding": 1, "groups": 2}),
]


@pytest.mark.parametrize(
    "cls, args, kw", LAYERS, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(LAYERS)]
)
def test_layer_shapes_repr_and_init(cls, args, kw):
    t = getattr(torch.nn, cls)(*args, **kw)
    e = getattr(enn, cls)(*args, **kw)
    assert repr(e) == repr(t)
    names = [n for n, _ in e.named_parameters()]
    assert names == [n for n, _ in t.named_parameters()]
    for (_, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        assert tuple(pe.shape) == tuple(pt.shape)
    # kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight and bias
    fan_in = t.weight.shape[1] * math.prod(t.weight.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    for p in e.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound + 1e-7
    big = getattr(enn, cls)(*args, **kw).weight.detach().numpy()
    assert np.abs(big).max() > 0.5 * bound


def test_layer_init_distribution():
    w = enn.Conv2d(16, 64, 3).weight.detach().numpy()  # 9216 draws
    bound = 1 / math.sqrt(16 * 9)
    assert np.abs(w).max() <= bound
    assert abs(w.mean()) < 0.05 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound


def test_layer_errors_match_torch():
    cases = [
        lambda nn: nn.Conv2d(4, 6, 3, groups=3),
        lambda nn: nn.Conv2d(4, 6, 3, groups=4),
        lambda nn: nn.Conv2d(4, 6, 3, groups=0),
        lambda nn: nn.Conv2d(4, 6, 3, padding="same", stride=2),
        lambda nn: nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
    ]
    for c in cases:
        assert _err(lambda c=c: c(enn)) == _err(lambda c=c: c(torch.nn))
    # padding_mode reflect/replicate/circular are accepted: tests/engine/test_conv_padding_mode.py


def test_conv_transpose_output_size():
    t = torch.nn.ConvTranspose2d(4, 3, 3, stride=2)
    e = enn.ConvTranspose2d(4, 3, 3, stride=2)
    assert tuple(e(eg.ones(1, 4, 5, 5), output_size=(12, 12)).shape) == tuple(
        t(torch.ones(1, 4, 5, 5), output_size=(12, 12)).shape
    )


class _Flatten(enn.Module):
    def forward(self, x):
        return x.flatten(1)


def _tiny_net(nn, flatten):
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=1, groups=2),
        nn.ReLU(),
        nn.AvgPool2d(2, ceil_mode=True),
        nn.ConvTranspose2d(6, 3, 2, stride=2),
        flatten,
        nn.Linear(3 * 4 * 4, 5),
    )


def test_tiny_conv_net_trains_like_torch():
    torch.manual_seed(0)
    tnet = _tiny_net(torch.nn, torch.nn.Flatten()).double()
    enet = _tiny_net(enn, _Flatten()).double()
    enet.load_state_dict({k: eg.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    rng = np.random.default_rng(1)
    xa, ya = rng.standard_normal((4, 1, 10, 10)), rng.integers(0, 5, 4)
    topt = torch.optim.SGD(tnet.parameters(), lr=0.1, momentum=0.9)
    eopt = eoptim.SGD(enet.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        for net, opt, m, F in ((tnet, topt, torch, torch.nn.functional), (enet, eopt, eg, eg_F)):
            opt.zero_grad()
            F.cross_entropy(net(m.tensor(xa)), m.tensor(ya)).backward()
            opt.step()
    for (n, pt), (_, pe) in zip(tnet.named_parameters(), enet.named_parameters()):
        np.testing.assert_allclose(
            pe.detach().numpy(), pt.detach().numpy(), rtol=1e-9, atol=1e-11, err_msg=n
        )


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    xa, wa, ba = (
        rng.standard_normal((2, 4, 7, 7)),
        rng.standard_normal((6, 2, 3, 3)),
        rng.standard_normal(6),
    )
    res = {}
    for dev in ("cpu", "cuda"):
        x = eg.tensor(xa, device=dev, requires_grad=True)
        w = eg.tensor(wa, device=dev, requires_grad=True)
        b = eg.tensor(ba, device=dev, requires_grad=True)
        y = eg_F.conv2d(x, w, b, stride=2, padding=1, groups=2)
        z = eg_F.conv_transpose2d(y, w, stride=2)  # w as (in 6, out 2) channels
        (z.sum() + y.sum()).backward()
        res[dev] = [t.detach().cpu().numpy() for t in (y, z, x.grad, w.grad, b.grad)]
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
