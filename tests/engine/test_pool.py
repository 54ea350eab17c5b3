"""Pooling, interpolate, unfold and fold against torch: values, grads, grad_fn names, returned
indices, argument checks word for word, gradcheck and double backward, and the layers' reprs."""

import numpy as np
import pytest
import torch
from _torch_compare import D, R, case, compare_with_torch, eg, eg_F, f32, grad_fn_name, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.nn as enn


def _f(name, **kw):
    return lambda m, F, x: getattr(F, name)(x, **kw)


def _first(name, **kw):
    return lambda m, F, x: getattr(F, name)(x, **kw)[0]


CASES = [
    case("max_pool2d", _f("max_pool2d", kernel_size=2), D(2, 3, 8, 8)),
    case("max_pool2d_odd", _f("max_pool2d", kernel_size=2), D(2, 3, 7, 9)),
    case(
        "max_pool2d_args",
        _f("max_pool2d", kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2)),
        D(2, 3, 7, 8),
    ),
    case("max_pool2d_overlap", _f("max_pool2d", kernel_size=3, stride=1, padding=1), D(1, 2, 5, 6)),
    case(
        "max_pool2d_ceil", _f("max_pool2d", kernel_size=3, stride=2, ceil_mode=True), D(2, 3, 8, 8)
    ),
    case("max_pool2d_unbatched", _f("max_pool2d", kernel_size=2, stride=1), D(3, 5, 5)),
    case("max_pool2d_f32", _f("max_pool2d", kernel_size=2), f32(D(2, 3, 6, 6))),
    case(
        "max_pool2d_indices",
        _first("max_pool2d", kernel_size=2, return_indices=True),
        D(2, 3, 6, 6),
    ),
    case("max_pool1d", _f("max_pool1d", kernel_size=3, stride=2, padding=1), D(2, 3, 10)),
    case(
        "max_pool1d_ceil", _f("max_pool1d", kernel_size=2, ceil_mode=True, dilation=2), D(2, 3, 10)
    ),
    case("max_pool1d_unbatched", _f("max_pool1d", kernel_size=2), D(3, 10)),
    case("avg_pool2d", _f("avg_pool2d", kernel_size=2), R(2, 3, 8, 8)),
    case("avg_pool2d_pad", _f("avg_pool2d", kernel_size=3, stride=2, padding=1), R(2, 3, 7, 8)),
    case(
        "avg_pool2d_no_pad_count",
        _f("avg_pool2d", kernel_size=3, stride=2, padding=1, count_include_pad=False),
        R(2, 3, 7, 8),
    ),
    case(
        "avg_pool2d_ceil",
        _f("avg_pool2d", kernel_size=(3, 2), stride=2, padding=(1, 0), ceil_mode=True),
        R(2, 3, 8, 7),
    ),
    case(
        "avg_pool2d_ceil_nocount",
        _f(
            "avg_pool2d",
            kernel_size=3,
            stride=2,
            padding=1,
            ceil_mode=True,
            count_include_pad=False,
        ),
        R(2, 3, 8, 8),
    ),
    case(
        "avg_pool2d_divisor",
        _f("avg_pool2d", kernel_size=2, stride=1, divisor_override=3),
        R(2, 3, 5, 5),
    ),
    case("avg_pool2d_unbatched", _f("avg_pool2d", kernel_size=2), R(3, 6, 6)),
    case(
        "avg_pool1d",
        _f(
            "avg_pool1d",
            kernel_size=3,
            stride=2,
            padding=1,
            ceil_mode=True,
            count_include_pad=False,
        ),
        R(2, 3, 10),
    ),
    case("adaptive_avg_pool2d", _f("adaptive_avg_pool2d", output_size=(3, 5)), R(2, 3, 7, 8)),
    case("adaptive_avg_pool2d_int", _f("adaptive_avg_pool2d", output_size=1), R(2, 3, 7, 8)),
    case("adaptive_avg_pool2d_none", _f("adaptive_avg_pool2d", output_size=(None, 3)), R(3, 7, 8)),
    case("adaptive_avg_pool2d_up", _f("adaptive_avg_pool2d", output_size=(9, 4)), R(2, 3, 7, 3)),
    case("adaptive_avg_pool1d", _f("adaptive_avg_pool1d", output_size=4), R(2, 3, 7)),
    case("adaptive_max_pool2d", _f("adaptive_max_pool2d", output_size=(3, 5)), D(2, 3, 7, 8)),
    case("adaptive_max_pool2d_unbatched", _f("adaptive_max_pool2d", output_size=2), D(3, 5, 6)),
    case("adaptive_max_pool1d", _f("adaptive_max_pool1d", output_size=3), D(2, 3, 7)),
    case("nearest_scale", _f("interpolate", scale_factor=2), R(2, 3, 4, 5)),
    case("nearest_frac", _f("interpolate", scale_factor=1.7), R(2, 3, 4, 5)),
    case("nearest_size", _f("interpolate", size=(7, 3)), R(2, 3, 4, 5)),
    case("nearest_1d", _f("interpolate", size=9), R(2, 3, 4)),
    case("nearest_exact", _f("interpolate", scale_factor=1.5, mode="nearest-exact"), R(2, 3, 4, 5)),
    case("bilinear", _f("interpolate", scale_factor=2, mode="bilinear"), R(2, 3, 4, 5)),
    case("bilinear_down", _f("interpolate", size=(3, 2), mode="bilinear"), R(2, 3, 7, 5)),
    case(
        "bilinear_align",
        _f("interpolate", size=(7, 9), mode="bilinear", align_corners=True),
        R(2, 3, 4, 5),
    ),
    case(
        "bilinear_frac", _f("interpolate", scale_factor=(1.5, 2.5), mode="bilinear"), R(1, 2, 4, 5)
    ),
    case(
        "bilinear_recompute",
        _f("interpolate", scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
        R(1, 2, 4, 5),
    ),
    case("linear", _f("interpolate", scale_factor=2.5, mode="linear"), R(2, 3, 5)),
    case("linear_align", _f("interpolate", size=8, mode="linear", align_corners=True), R(2, 3, 5)),
    case("linear_f32", _f("interpolate", size=8, mode="linear"), f32(R(2, 3, 5))),
    case("area", _f("interpolate", size=(3, 2), mode="area"), R(2, 3, 7, 5)),
    case("trilinear", _f("interpolate", size=(5, 3, 7), mode="trilinear"), R(2, 3, 3, 4, 5)),
    case(
        "trilinear_align",
        _f("interpolate", scale_factor=(1.5, 2, 0.7), mode="trilinear", align_corners=True),
        R(1, 2, 3, 4, 5),
    ),
    case(
        "trilinear_f32", _f("interpolate", scale_factor=2, mode="trilinear"), f32(R(1, 2, 2, 3, 4))
    ),
    case("nearest_3d", _f("interpolate", size=(5, 3, 7)), R(2, 3, 3, 4, 5)),
    case(
        "nearest_exact_3d",
        _f("interpolate", scale_factor=1.6, mode="nearest-exact"),
        R(1, 2, 3, 4, 5),
    ),
    case("area_3d", _f("interpolate", size=(2, 3, 7), mode="area"), R(2, 3, 3, 4, 5)),
    case("bicubic", _f("interpolate", size=(7, 9), mode="bicubic"), R(2, 3, 4, 5)),
    case("bicubic_down", _f("interpolate", size=(3, 2), mode="bicubic"), R(2, 3, 6, 5)),
    case("bicubic_scale", _f("interpolate", scale_factor=1.7, mode="bicubic"), R(2, 3, 4, 5)),
    case(
        "bicubic_align",
        _f("interpolate", size=(7, 3), mode="bicubic", align_corners=True),
        R(2, 3, 4, 5),
    ),
    case("bicubic_f32", _f("interpolate", size=(9, 11), mode="bicubic"), f32(R(2, 3, 6, 5))),
    case(
        "unfold",
        _f("unfold", kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
        R(2, 3, 7, 8),
    ),
    case("unfold_unbatched", _f("unfold", kernel_size=2), R(3, 5, 4)),
    case("fold", _f("fold", output_size=(5, 6), kernel_size=2), R(2, 12, 20)),
    case(
        "fold_args",
        _f("fold", output_size=(6, 5), kernel_size=(2, 3), stride=2, padding=1, dilation=1),
        R(2, 6, 12),
    ),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_pool_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)
    _, (t_in, t_out), (e_in, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


INDICES = [
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 8, 7)),
    ("max_pool2d", {"kernel_size": 2, "dilation": 2}, (3, 7, 7)),
    ("max_pool1d", {"kernel_size": 3, "stride": 2, "padding": 1}, (2, 3, 9)),
    ("adaptive_max_pool2d", {"output_size": (3, 4)}, (2, 3, 7, 9)),
    ("adaptive_max_pool1d", {"output_size": 4}, (2, 3, 7)),
]


@pytest.mark.parametrize("name, kw, shape", INDICES, ids=[i[0] for i in INDICES])
def test_returned_indices(name, kw, shape):
    a = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    vt, it = getattr(torch.nn.functional, name)(torch.tensor(a), return_indices=True, **kw)
    ve, ie = getattr(eg_F, name)(eg.tensor(a), return_indices=True, **kw)
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    assert ie.dtype == eg.int64
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())


def test_max_pool_nan_and_ties_like_torch():
    a = np.array([[[[1.0, 1.0, np.nan, 2.0], [1.0, 0.0, 3.0, np.nan]]]])
    vt, it = torch.nn.functional.max_pool2d(torch.tensor(a), 2, return_indices=True)
    ve, ie = eg_F.max_pool2d(eg.tensor(a), 2, return_indices=True)
    np.testing.assert_array_equal(ie.numpy(), it.numpy())
    np.testing.assert_array_equal(ve.numpy(), vt.numpy())


def _err(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - comparing whatever each raises
        return type(exc).__name__, str(exc)
    return None


def _x(m, *shape):
    return m.ones(*shape)


ERRORS = {
    "mp_pad": lambda m, F: F.max_pool2d(_x(m, 2, 4, 8, 8), 2, padding=2),
    "mp_pad_w": lambda m, F: F.max_pool2d(_x(m, 2, 4, 8, 8), (2, 3), padding=(1, 2)),
    "mp_small": lambda m, F: F.max_pool2d(_x(m, 2, 4, 8, 8), 9),
    "mp_rank": lambda m, F: F.max_pool2d(_x(m, 8), 2),
    "mp_stride0": lambda m, F: F.max_pool2d(_x(m, 2, 4, 8, 8), 2, stride=0),
    "mp1_small": lambda m, F: F.max_pool1d(_x(m, 2, 4, 8), 9),
    "mp1_rank": lambda m, F: F.max_pool1d(_x(m, 2, 4, 8, 8), 2),
    "mp1_pad": lambda m, F: F.max_pool1d(_x(m, 2, 4, 8), 2, padding=2),
    "ap_pad": lambda m, F: F.avg_pool2d(_x(m, 2, 4, 8, 8), 2, padding=2),
    "ap_small": lambda m, F: F.avg_pool2d(_x(m, 2, 4, 8, 8), 9),
    "ap1_small": lambda m, F: F.avg_pool1d(_x(m, 2, 4, 8), 9),
    "ap1_rank": lambda m, F: F.avg_pool1d(_x(m, 2, 4, 8, 8), 2),
    "aap_rank": lambda m, F: F.adaptive_avg_pool2d(_x(m, 8), 2),
    "aap1_rank": lambda m, F: F.adaptive_avg_pool1d(_x(m, 2, 4, 8, 8), 2),
    "amp_rank": lambda m, F: F.adaptive_max_pool2d(_x(m, 8), 2),
    "aap_size": lambda m, F: F.adaptive_avg_pool2d(_x(m, 2, 4, 8, 8), (2, 2, 2)),
    "interp_both": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8), size=4, scale_factor=2),
    "interp_none": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8)),
    "interp_mode": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8), size=4, mode="foo"),
    "interp_bilinear_3d": lambda m, F: F.interpolate(_x(m, 2, 4, 8), size=4, mode="bilinear"),
    "interp_linear_4d": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8), size=4, mode="linear"),
    "interp_align_nearest": lambda m, F: F.interpolate(
        _x(m, 2, 4, 8, 8), size=4, align_corners=True
    ),
    "interp_trilinear_4d": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8), size=4, mode="trilinear"),
    "interp_bicubic_5d": lambda m, F: F.interpolate(_x(m, 1, 2, 3, 3, 3), size=4, mode="bicubic"),
    "interp_nearest_6d": lambda m, F: F.interpolate(_x(m, 1, 1, 2, 2, 2, 2), size=4),
    "interp_uint8_trilinear": lambda m, F: F.interpolate(
        m.zeros(1, 1, 2, 2, 2, dtype=m.uint8), size=4, mode="trilinear"
    ),
    "interp_int64_bilinear": lambda m, F: F.interpolate(
        m.zeros(1, 1, 2, 2, dtype=m.int64), size=4, mode="bilinear"
    ),
    "interp_size_len": lambda m, F: F.interpolate(_x(m, 2, 4, 8, 8), size=(4, 4, 4)),
    "unfold_small": lambda m, F: F.unfold(_x(m, 2, 4, 8, 8), 9),
    "fold_blocks": lambda m, F: F.fold(_x(m, 2, 36, 10), (8, 8), 3),
    "fold_channels": lambda m, F: F.fold(_x(m, 2, 35, 36), (8, 8), 3),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    fn = ERRORS[name]
    expected = _err(lambda: fn(torch, torch.nn.functional))
    assert expected is not None
    assert _err(lambda: fn(eg, eg_F)) == expected


GRADCHECK = [
    ("max_pool2d", lambda x: eg_F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool1d", lambda x: eg_F.max_pool1d(x[:, :, 0], 2, stride=1)),
    ("avg_pool2d", lambda x: eg_F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool1d", lambda x: eg_F.avg_pool1d(x[:, :, 0], 3, 2, 1)),
    ("adaptive_avg_pool2d", lambda x: eg_F.adaptive_avg_pool2d(x, (2, 3))),
    ("adaptive_max_pool2d", lambda x: eg_F.adaptive_max_pool2d(x, (2, 3))),
    ("bilinear", lambda x: eg_F.interpolate(x, scale_factor=1.5, mode="bilinear")),
    (
        "bilinear_align",
        lambda x: eg_F.interpolate(x, size=(3, 7), mode="bilinear", align_corners=True),
    ),
    ("nearest", lambda x: eg_F.interpolate(x, size=(7, 3))),
    ("linear", lambda x: eg_F.interpolate(x[:, 0], size=7, mode="linear")),
    ("unfold", lambda x: eg_F.unfold(x, 2, padding=1, stride=2)),
    ("fold", lambda x: eg_F.fold(x.reshape(1, 4, 10), (3, 6), 2)),
]


@pytest.mark.parametrize("name, fn", GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck(name, fn):
    rng = np.random.default_rng(11)
    n = 40  # distinct values, so that no max is tied
    x = eg.tensor(
        (rng.permutation(n) * 0.1 + rng.uniform(0, 0.01, n)).reshape(1, 2, 4, 5), requires_grad=True
    )
    assert eg.autograd.gradcheck(fn, (x,)) is True


@pytest.mark.parametrize(
    "name, kw",
    [
        ("max_pool2d", {"kernel_size": 3, "stride": 1, "padding": 1}),
        ("avg_pool2d", {"kernel_size": 2, "stride": 1}),
        ("adaptive_avg_pool2d", {"output_size": (2, 3)}),
        ("interpolate", {"scale_factor": 2, "mode": "bilinear"}),
    ],
)
def test_double_backward_matches_torch(name, kw):
    a = np.random.default_rng(2).permutation(60).reshape(1, 3, 4, 5) * 0.1
    res = {}
    for m, F in ((torch, torch.nn.functional), (eg, eg_F)):
        x = m.tensor(a, requires_grad=True)
        y = getattr(F, name)(x, **kw)
        (gx,) = m.autograd.grad((y * y).sum(), (x,), create_graph=True)
        name_gx = grad_fn_name(gx)
        (gx * gx).sum().backward()
        res[m.__name__] = (x.grad.numpy(), name_gx)
    np.testing.assert_allclose(res["engine"][0], res["torch"][0], rtol=1e-10, atol=1e-12)


LAYERS = [
    ("MaxPool1d", (3, 2), {}),
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "dilation": 1, "ceil_mode": True}),
    ("AvgPool1d", (3,), {}),
    ("AvgPool2d", (2,), {}),
    ("AvgPool2d", (3, 1, 1, True, False, 2), {}),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveAvgPool2d", ((2, None),), {}),
    ("AdaptiveMaxPool1d", (3,), {}),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": False}),
    ("Upsample", (), {"scale_factor": 2}),
    ("Upsample", (), {"size": (3, 4), "mode": "bilinear", "align_corners": True}),
]


@pytest.mark.parametrize(
    "cls, args, kw", LAYERS, ids=[f"{c}-{i}" for i, (c, *_) in enumerate(LAYERS)]
)
def test_layers_repr_and_forward(cls, args, kw):
    t = getattr(torch.nn, cls)(*args, **kw)
    e = getattr(enn, cls)(*args, **kw)
    assert repr(e) == repr(t)
    shape = (2, 3, 7) if "1d" in cls else (2, 3, 7, 8)
    a = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape) * 0.5
    np.testing.assert_allclose(e(eg.tensor(a)).numpy(), t(torch.tensor(a)).numpy(), rtol=1e-12)


def test_max_pool_layer_return_indices():
    a = np.random.default_rng(0).standard_normal((2, 3, 6, 6))
    vt, it = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(a))
    ve, ie = enn.MaxPool2d(2, return_indices=True)(eg.tensor(a))
    np.testing.assert_array_equal(ie.numpy(), it.numpy())


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    a = np.random.default_rng(0).permutation(2 * 3 * 8 * 9).reshape(2, 3, 8, 9) * 0.1
    ops = [
        lambda x: eg_F.max_pool2d(x, 3, 2, 1),
        lambda x: eg_F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
        lambda x: eg_F.adaptive_avg_pool2d(x, (3, 4)),
        lambda x: eg_F.adaptive_max_pool2d(x, (3, 4)),
        lambda x: eg_F.interpolate(x, scale_factor=2, mode="bilinear"),
        lambda x: eg_F.unfold(x, 2),
    ]
    for op in ops:
        res = {}
        for dev in ("cpu", "cuda"):
            x = eg.tensor(a, device=dev, requires_grad=True)
            y = op(x)
            (y * y).sum().backward()
            res[dev] = (y.detach().cpu().numpy(), x.grad.cpu().numpy())
        for u, v in zip(res["cuda"], res["cpu"]):
            np.testing.assert_allclose(u, v, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    mode=st.sampled_from(["bilinear", "bicubic"]),
    channels=st.integers(1, 4),
    hw=st.tuples(st.integers(1, 8), st.integers(1, 8)),
    align_corners=st.booleans(),
    size=st.one_of(st.tuples(st.integers(1, 13), st.integers(1, 13)), st.none()),
    scale=st.floats(0.4, 3.0),
    seed=st.integers(0, 2**16),
)
def test_uint8_resize_matches_torch(mode, channels, hw, align_corners, size, scale, seed):
    """uint8 images resize as PyTorch's fixed-point kernel does, bit for bit (it used to give
    zeros everywhere but the corners). Up to 4 channels: PyTorch's kernel for more channels
    disagrees with its own at an output width of 1."""
    a = np.random.default_rng(seed).integers(0, 256, (2, channels, *hw))
    kw = dict(mode=mode, align_corners=align_corners)
    kw.update(size=size) if size else kw.update(scale_factor=scale)
    try:
        want = torch.nn.functional.interpolate(torch.tensor(a, dtype=torch.uint8), **kw)
    except RuntimeError:  # an empty output
        return
    got = eg_F.interpolate(eg.tensor(a, dtype=eg.uint8), **kw)
    assert got.dtype == eg.uint8
    np.testing.assert_array_equal(got.numpy(), want.numpy())
