"""Tensor creation, attributes, in-place ops, repr and devices, compared with PyTorch."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
import torch
from _semantics_helpers import (
    AGAINST_TORCH,
    LIBS,
    check_same,
    dtype_name,
    eg,
    torch_repr_as_engine,
)


def _describe(t):
    """dtype name, shape and values of a tensor."""
    return [dtype_name(t.dtype), tuple(t.shape), t]


# --------------------------------------------------------------------------------------
# creation
# --------------------------------------------------------------------------------------

CREATION_CASES = {
    "zeros_varargs": lambda lib: lib.zeros(2, 3),
    "zeros_tuple": lambda lib: lib.zeros((2, 3)),
    "zeros_list": lambda lib: lib.zeros([4]),
    "zeros_scalar_shape": lambda lib: lib.zeros(()),
    "zeros_float64": lambda lib: lib.zeros(2, dtype=lib.float64),
    "zeros_int64": lambda lib: lib.zeros(2, 2, dtype=lib.int64),
    "zeros_bool": lambda lib: lib.zeros(3, dtype=lib.bool),
    "ones_varargs": lambda lib: lib.ones(3, 1),
    "ones_tuple": lambda lib: lib.ones((1, 2, 3)),
    "ones_int64": lambda lib: lib.ones(3, dtype=lib.int64),
    "ones_bool": lambda lib: lib.ones(2, dtype=lib.bool),
    "full_float": lambda lib: lib.full((2, 2), 7.5),
    "full_int_fill": lambda lib: lib.full((3,), 7),
    "full_bool_fill": lambda lib: lib.full((2,), True),
    "full_dtype": lambda lib: lib.full((2, 3), 2, dtype=lib.float64),
    "full_list_shape": lambda lib: lib.full([2], -1.25),
    "arange_stop": lambda lib: lib.arange(5),
    "arange_start_stop": lambda lib: lib.arange(2, 7),
    "arange_step": lambda lib: lib.arange(1, 10, 3),
    "arange_negative_step": lambda lib: lib.arange(5, 0, -2),
    "arange_float_stop": lambda lib: lib.arange(0.0, 5),
    "arange_float_step": lambda lib: lib.arange(0, 1, 0.25),
    "arange_float_step_inexact": lambda lib: lib.arange(0, 1, 0.3),
    "arange_float_dtype": lambda lib: lib.arange(4, dtype=lib.float32),
    "arange_float64": lambda lib: lib.arange(0, 2, 0.5, dtype=lib.float64),
    "arange_empty": lambda lib: lib.arange(3, 3),
    "linspace": lambda lib: lib.linspace(0, 1, 5),
    "linspace_negative": lambda lib: lib.linspace(-2.0, 2.0, 9),
    "linspace_one": lambda lib: lib.linspace(-1, 1, 1),
    "linspace_float64": lambda lib: lib.linspace(0, 1, 3, dtype=lib.float64),
    "eye": lambda lib: lib.eye(3),
    "eye_rect": lambda lib: lib.eye(2, 3),
    "eye_dtype": lambda lib: lib.eye(2, dtype=lib.int64),
    "zeros_like": lambda lib: lib.zeros_like(lib.tensor([[1.0, 2.0]], dtype=lib.float64)),
    "zeros_like_int": lambda lib: lib.zeros_like(lib.tensor([1, 2, 3])),
    "ones_like": lambda lib: lib.ones_like(lib.tensor([[1, 2], [3, 4]])),
    "ones_like_dtype": lambda lib: lib.ones_like(lib.tensor([1, 2]), dtype=lib.float32),
    "tensor_scalar_float": lambda lib: lib.tensor(1.5),
    "tensor_scalar_int": lambda lib: lib.tensor(3),
    "tensor_scalar_bool": lambda lib: lib.tensor(True),
    "tensor_list_float": lambda lib: lib.tensor([1.0, 2.0]),
    "tensor_list_int": lambda lib: lib.tensor([1, 2, 3]),
    "tensor_list_bool": lambda lib: lib.tensor([True, False]),
    "tensor_mixed_int_float": lambda lib: lib.tensor([1, 2.5]),
    "tensor_mixed_bool_int": lambda lib: lib.tensor([True, 2]),
    "tensor_nested": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "tensor_empty": lambda lib: lib.tensor([]),
    "tensor_dtype_float64": lambda lib: lib.tensor([1, 2], dtype=lib.float64),
    "tensor_dtype_int_from_float": lambda lib: lib.tensor([1.7, -2.7], dtype=lib.int64),
    "tensor_dtype_bool": lambda lib: lib.tensor([0, 3], dtype=lib.bool),
    "np_float64": lambda lib: lib.tensor(np.array([1.0, 2.0])),
    "np_float32": lambda lib: lib.tensor(np.array([1.0, 2.0], dtype=np.float32)),
    "np_int64": lambda lib: lib.tensor(np.array([[1, 2]], dtype=np.int64)),
    "np_bool": lambda lib: lib.tensor(np.array([True, False])),
    "np_scalar_float64": lambda lib: lib.tensor(np.float64(2.5)),
    "np_float64_cast": lambda lib: lib.tensor(np.array([1.0, 2.0]), dtype=lib.float32),
    "tensor_from_tensor_values": lambda lib: lib.tensor(lib.ones(2).numpy()),
}


@pytest.mark.parametrize("case", sorted(CREATION_CASES))
def test_creation_dtype_shape_values(case):
    check_same(lambda lib: _describe(CREATION_CASES[case](lib)))


def test_dtype_objects_compare_equal():
    assert eg.tensor(1.0).dtype == eg.float32
    assert eg.tensor(1).dtype == eg.int64
    assert eg.tensor(True).dtype == eg.bool
    assert eg.tensor(np.array([1.0])).dtype == eg.float64
    assert eg.float32 != eg.float64
    assert dtype_name(eg.float64) == "float64"
    assert str(eg.float32) == f"{eg.__name__}.float32"


def test_numpy_input_is_copied():
    a = np.array([1.0, 2.0])
    t = eg.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0]


def test_requires_grad_at_creation():
    def scenario(lib):
        return [
            lib.zeros(2, requires_grad=True).requires_grad,
            lib.ones(2).requires_grad,
            lib.full((2,), 1.0, requires_grad=True).requires_grad,
            lib.tensor([1.0], requires_grad=True).requires_grad,
            lib.zeros_like(lib.ones(2), requires_grad=True).requires_grad,
            lib.randn(2, requires_grad=True).requires_grad,
        ]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# attributes
# --------------------------------------------------------------------------------------


def test_shape_and_size():
    for lib in LIBS:
        t = lib.zeros(2, 3, 4)
        assert t.shape == (2, 3, 4), lib.__name__
        assert tuple(t.shape) == (2, 3, 4)
        assert t.size() == (2, 3, 4)
        assert isinstance(t.shape, tuple)
        assert len(t.shape) == 3 and t.shape[1] == 3 and list(t.shape) == [2, 3, 4]
        assert (t.size(0), t.size(1), t.size(2), t.size(-1)) == (2, 3, 4, 4)
        assert t.ndim == 3
        assert t.numel() == 24
        s = lib.tensor(1.0)
        assert s.shape == () and s.ndim == 0 and s.numel() == 1


ATTRIBUTE_CASES = {
    "scalar_float": lambda lib: lib.tensor(2.5),
    "scalar_int": lambda lib: lib.tensor(-4),
    "scalar_bool": lambda lib: lib.tensor(False),
    "vector": lambda lib: lib.tensor([1.0, 2.0, 3.0]),
    "matrix_int": lambda lib: lib.tensor([[1, 2], [3, 4]]),
    "one_element_matrix": lambda lib: lib.tensor([[7.0]]),
    "empty": lambda lib: lib.zeros(0, 3),
    "float64": lambda lib: lib.tensor([0.1, 0.2], dtype=lib.float64),
}


@pytest.mark.parametrize("case", sorted(ATTRIBUTE_CASES))
def test_attributes_match_torch(case):
    def scenario(lib):
        t = ATTRIBUTE_CASES[case](lib)
        return [tuple(t.shape), t.ndim, t.numel(), t.tolist(), len(t.size()), dtype_name(t.dtype)]

    check_same(scenario)


ITEM_CASES = {
    "float": lambda lib: lib.tensor(2.5),
    "int": lambda lib: lib.tensor(7),
    "bool": lambda lib: lib.tensor(True),
    "one_element_vector": lambda lib: lib.tensor([3.25]),
    "one_element_matrix": lambda lib: lib.tensor([[4]]),
    "float64": lambda lib: lib.tensor(0.1, dtype=lib.float64),
    "requires_grad": lambda lib: lib.tensor(1.5, requires_grad=True),
    "sum": lambda lib: lib.tensor([1.0, 2.0]).sum(),
}


@pytest.mark.parametrize("case", sorted(ITEM_CASES))
def test_item_returns_python_scalar(case):
    def scenario(lib):
        v = ITEM_CASES[case](lib).item()
        return [type(v).__name__, v]

    check_same(scenario)


def test_item_on_multi_element_raises():
    for lib in LIBS:
        with pytest.raises((RuntimeError, ValueError)):
            lib.tensor([1.0, 2.0]).item()


def test_tolist_types():
    def scenario(lib):
        out = []
        for t in (
            lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
            lib.tensor([1, 2]),
            lib.tensor([True, False]),
            lib.tensor(5.0),
            lib.tensor([]),
        ):
            val = t.tolist()
            out.append([val, type(val).__name__, repr(val)])
        return out

    check_same(scenario)


def test_numpy_conversion():
    def scenario(lib):
        out = []
        for t in (
            lib.tensor([1.0, 2.0]),
            lib.tensor([1, 2]),
            lib.tensor([[True]]),
            lib.tensor(3.0),
        ):
            a = t.numpy()
            out.append([type(a).__name__, str(a.dtype), a.shape, a.tolist()])
        return out

    check_same(scenario)


def test_numpy_shares_memory():
    def scenario(lib):
        t = lib.tensor([1.0, 2.0])
        a = t.numpy()
        a[0] = 10.0
        t.add_(1)
        return [t, a.tolist()]

    check_same(scenario)


def test_numpy_on_requires_grad_tensor_raises():
    from _semantics_helpers import assert_same_error

    assert_same_error(lambda lib: lib.tensor([1.0], requires_grad=True).numpy())


def test_device_attribute_and_cpu_moves():
    def scenario(lib):
        t = lib.tensor([1.0, 2.0])
        return [
            str(t.device),
            str(t.cpu().device),
            str(t.to("cpu").device),
            t.device.type,
            t.to("cpu"),
            str(lib.zeros(2, device="cpu").device),
            str(lib.tensor([1.0], device="cpu").device),
        ]

    check_same(scenario)


def test_to_dtype():
    def scenario(lib):
        t = lib.tensor([1.5, -2.5])
        return [
            _describe(t.to(lib.float64)),
            _describe(t.to(lib.int64)),
            _describe(t.to(lib.bool)),
        ]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# in-place ops on tensors without grad
# --------------------------------------------------------------------------------------

INPLACE_CASES = {
    "add_scalar": lambda lib, t: t.add_(2),
    "add_tensor": lambda lib, t: t.add_(lib.tensor([1.0, -1.0, 0.5])),
    "add_broadcast_row": lambda lib, t: t.add_(lib.tensor(10.0)),
    "sub_scalar": lambda lib, t: t.sub_(0.5),
    "sub_tensor": lambda lib, t: t.sub_(lib.tensor([3.0, 2.0, 1.0])),
    "mul_scalar": lambda lib, t: t.mul_(-2),
    "mul_tensor": lambda lib, t: t.mul_(lib.tensor([0.0, 1.0, 2.0])),
    "div_scalar": lambda lib, t: t.div_(4),
    "div_tensor": lambda lib, t: t.div_(lib.tensor([2.0, 4.0, 8.0])),
    "clamp_min_max": lambda lib, t: t.clamp_(min=-1.0, max=1.0),
    "clamp_min": lambda lib, t: t.clamp_(min=0.0),
    "clamp_max": lambda lib, t: t.clamp_(max=0.0),
    "fill_": lambda lib, t: t.fill_(9.0),
    "zero_": lambda lib, t: t.zero_(),
    "copy_": lambda lib, t: t.copy_(lib.tensor([7.0, 8.0, 9.0])),
    "copy_broadcast": lambda lib, t: t.copy_(lib.tensor(4.0)),
    "copy_from_float64": lambda lib, t: t.copy_(lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64)),
    "iadd": lambda lib, t: operator.iadd(t, 1),
    "iadd_tensor": lambda lib, t: operator.iadd(t, lib.tensor([1.0, 2.0, 3.0])),
    "isub": lambda lib, t: operator.isub(t, 1.5),
    "imul": lambda lib, t: operator.imul(t, 3),
    "itruediv": lambda lib, t: operator.itruediv(t, 2),
    "chain": lambda lib, t: t.add_(1).mul_(2).sub_(3),
}


@pytest.mark.parametrize("case", sorted(INPLACE_CASES))
def test_inplace_ops_match_torch(case):
    def scenario(lib):
        t = lib.tensor([-1.5, 0.25, 3.0])
        alias = t
        out = INPLACE_CASES[case](lib, t)
        return [out is alias, _describe(alias)]

    check_same(scenario)


INT_INPLACE_CASES = {
    "add_": lambda lib, t: t.add_(2),
    "sub_": lambda lib, t: t.sub_(1),
    "mul_": lambda lib, t: t.mul_(3),
    "fill_": lambda lib, t: t.fill_(4),
    "zero_": lambda lib, t: t.zero_(),
    "clamp_": lambda lib, t: t.clamp_(min=0, max=2),
    "iadd": lambda lib, t: operator.iadd(t, 5),
    "copy_float_truncates": lambda lib, t: t.copy_(lib.tensor([1.9, -1.9, 2.5])),
}


@pytest.mark.parametrize("case", sorted(INT_INPLACE_CASES))
def test_inplace_ops_on_int_tensor_keep_dtype(case):
    def scenario(lib):
        t = lib.tensor([-1, 0, 3])
        INT_INPLACE_CASES[case](lib, t)
        return _describe(t)

    check_same(scenario)


def test_inplace_on_float64_keeps_dtype():
    def scenario(lib):
        t = lib.tensor([1.0, 2.0], dtype=lib.float64)
        t.add_(lib.tensor([0.5, 0.5]))
        t.mul_(1.0 / 3.0)
        return _describe(t)

    check_same(scenario, rtol=1e-12, atol=0)


# --------------------------------------------------------------------------------------
# repr
# --------------------------------------------------------------------------------------

REPR_CASES = {
    "scalar_float": lambda lib: lib.tensor(25.0),
    "scalar_fraction": lambda lib: lib.tensor(1.0 / 3.0),
    "scalar_negative": lambda lib: lib.tensor(-0.5),
    "scalar_int": lambda lib: lib.tensor(3),
    "scalar_bool": lambda lib: lib.tensor(True),
    "scalar_float64": lambda lib: lib.tensor(1.5, dtype=lib.float64),
    "scalar_big": lambda lib: lib.tensor(1e20),
    "vector_float": lambda lib: lib.tensor([1.0, 2.0]),
    "vector_int": lambda lib: lib.tensor([1, 2, 3]),
    "vector_bool": lambda lib: lib.tensor([True, False]),
    "vector_float64": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64),
    "vector_negative": lambda lib: lib.tensor([-1.5, 2.0, 0.0]),
    "vector_mixed_width": lambda lib: lib.tensor([0.1, 20.5]),
    "vector_int_negative": lambda lib: lib.tensor([100, -5, 7]),
    "vector_sci": lambda lib: lib.tensor([1e-5, 1e3]),
    "vector_sci_negative": lambda lib: lib.tensor([-1e-5, 1e5]),
    "vector_sci_float64": lambda lib: lib.tensor([1e-5, 1e3], dtype=lib.float64),
    "vector_big": lambda lib: lib.tensor([123456789.0]),
    "vector_nan_inf": lambda lib: lib.tensor([math.nan, math.inf, -math.inf, 1.0]),
    "vector_nan": lambda lib: lib.tensor([1.0, math.nan]),
    "vector_inf_fraction": lambda lib: lib.tensor([1.5, math.inf]),
    "vector_neg_zero": lambda lib: lib.tensor([0.0, -0.0]),
    "vector_empty": lambda lib: lib.tensor([]),
    "linspace": lambda lib: lib.linspace(0, 1, 5),
    "small_decimals": lambda lib: lib.tensor([0.001, 0.01]),
    "summarized_vector": lambda lib: lib.arange(2000.0),
    "summarized_int_vector": lambda lib: lib.arange(1500),
    "summarized_matrix": lambda lib: lib.ones(40, 40),
    "matrix_sci": lambda lib: lib.tensor([[1e-8, 1.0], [1e8, 3.0]]),
    "matrix_float": lambda lib: lib.tensor([[1.0, 2.5], [3.0, 4.0]]),
    "matrix_int": lambda lib: lib.tensor([[1, -2], [30, 4]]),
    "matrix_bool": lambda lib: lib.tensor([[True, False], [False, True]]),
    "matrix_negative_float": lambda lib: lib.tensor([[-1.0, 0.5], [2.25, -3.0]]),
    "matrix_float64": lambda lib: lib.tensor([[1.0, 2.0]], dtype=lib.float64),
    "eye": lambda lib: lib.eye(3),
    "zeros_3d": lambda lib: lib.zeros(2, 2, 2),
    "arange": lambda lib: lib.arange(6),
    "requires_grad_vector": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_scalar": lambda lib: lib.tensor(5.0, requires_grad=True),
    "requires_grad_float64": lambda lib: lib.tensor(
        [1.0, 2.0], dtype=lib.float64, requires_grad=True
    ),
    "requires_grad_sci": lambda lib: lib.tensor([1e-5, 1e3], requires_grad=True),
    "grad_fn_pow": lambda lib: lib.tensor(5.0, requires_grad=True) ** 2,
    "grad_fn_mul": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_add": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) + 1,
    "grad_fn_div": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True).sum() / 3,
    "grad_fn_sum": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True).sum(),
    "grad_fn_exp_matrix": lambda lib: lib.tensor(
        [[0.0, 1.0], [2.0, -1.0]], requires_grad=True
    ).exp(),
    "grad_fn_float64": lambda lib: (
        lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True) * 2
    ),
    "detached": lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).detach(),
    "no_grad_result": lambda lib: _no_grad_result(lib),
}


def _no_grad_result(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        return x * 3


@pytest.mark.parametrize("case", sorted(REPR_CASES))
def test_repr_matches_torch(case):
    expected = torch_repr_as_engine(repr(REPR_CASES[case](torch)))
    actual = repr(REPR_CASES[case](eg))
    assert actual == expected


def test_repr_examples_from_spec():
    name = eg.__name__
    x = eg.tensor(5.0, requires_grad=True)
    assert repr(x**2) == "tensor(25., grad_fn=<PowBackward0>)"
    assert repr(eg.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    assert repr(eg.tensor([1.0, 2.0], dtype=eg.float64)) == (
        f"tensor([1., 2.], dtype={name}.float64)"
    )
    assert repr(eg.tensor([1, 2, 3])) == "tensor([1, 2, 3])"
    assert repr(eg.tensor([True, False])) == "tensor([ True, False])"
    assert repr(eg.tensor([[1.0, 2.5], [3.0, 4.0]])) == (
        "tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]])"
    )
    assert repr(eg.tensor(1.0 / 3.0)) == "tensor(0.3333)"
    assert repr(eg.tensor([1e-5, 1e3])) == "tensor([1.0000e-05, 1.0000e+03])"


def test_str_matches_repr():
    for make in (REPR_CASES["matrix_float"], REPR_CASES["grad_fn_pow"]):
        t = make(eg)
        assert str(t) == repr(t)


def test_dtype_and_device_repr():
    assert repr(eg.float32) == f"{eg.__name__}.float32"
    assert str(eg.int64) == f"{eg.__name__}.int64"
    assert str(eg.bool) == f"{eg.__name__}.bool"
    assert str(eg.zeros(1).device) == "cpu"


# --------------------------------------------------------------------------------------
# random
# --------------------------------------------------------------------------------------


def test_manual_seed_reproducible_randn_and_rand():
    eg.manual_seed(1234)
    a = eg.randn(3, 4).numpy().copy()
    b = eg.rand(5).numpy().copy()
    eg.manual_seed(1234)
    a2 = eg.randn(3, 4).numpy().copy()
    b2 = eg.rand(5).numpy().copy()
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    eg.manual_seed(4321)
    assert not np.array_equal(a, eg.randn(3, 4).numpy())


def test_consecutive_draws_differ():
    eg.manual_seed(0)
    assert not np.array_equal(eg.randn(8).numpy(), eg.randn(8).numpy())


def test_random_shapes_dtypes_and_ranges():
    eg.manual_seed(0)
    r = eg.rand(1000)
    n = eg.randn(2, 500)
    assert r.dtype == eg.float32 and n.dtype == eg.float32
    assert r.shape == (1000,) and n.shape == (2, 500)
    assert eg.randn((3, 2)).shape == (3, 2)
    assert eg.rand(2, dtype=eg.float64).dtype == eg.float64
    rv = r.numpy()
    assert rv.min() >= 0.0 and rv.max() < 1.0
    nv = n.numpy()
    assert abs(nv.mean()) < 0.2 and 0.8 < nv.std() < 1.2


# --------------------------------------------------------------------------------------
# devices
# --------------------------------------------------------------------------------------


CUDA_REQUESTS = {
    "tensor_device": lambda: eg.tensor([1.0], device="cuda"),
    "zeros_device": lambda: eg.zeros(2, device="cuda"),
    "to_cuda": lambda: eg.ones(2).to("cuda"),
    "cuda_method": lambda: eg.ones(2).cuda(),
}


@pytest.fixture
def no_cupy():
    """The engine as on a machine without cupy, also where a GPU (or the test stand-in) is."""
    from engine import _device

    previous = _device.use_cupy(None, ImportError("No module named 'cupy'"))
    yield
    _device.use_cupy(*previous)


@pytest.mark.skipif(AGAINST_TORCH, reason="engine-specific error (torch raises AssertionError)")
@pytest.mark.parametrize("case", sorted(CUDA_REQUESTS))
def test_cuda_unavailable_raises_clear_runtime_error(case, no_cupy):
    assert eg.cuda.is_available() is False
    with pytest.raises(RuntimeError) as info:
        CUDA_REQUESTS[case]()
    msg = str(info.value).lower()
    assert any(word in msg for word in ("cuda", "gpu", "cupy")), msg


@pytest.mark.skipif(not eg.cuda.is_available(), reason="no GPU")
def test_cuda_roundtrip_and_backward():
    x = eg.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    assert x.device.type == "cuda"
    y = (x**2).sum()
    y.backward()
    assert x.grad.device.type == "cuda"
    np.testing.assert_allclose(x.grad.cpu().numpy(), [2.0, 4.0, 6.0])
    back = x.detach().cpu()
    assert str(back.device) == "cpu"
    assert back.tolist() == [1.0, 2.0, 3.0]
    assert eg.ones(2).cuda().cpu().tolist() == [1.0, 1.0]


def test_bitwise_methods():
    for expr in (
        "m.tensor([1, -5]).bitwise_not()",
        "m.tensor([True, False]).bitwise_not()",
        "m.tensor([1, 3]).bitwise_and(2)",
        "m.tensor([1, 3]).bitwise_or(m.tensor([4, 4]))",
        "m.tensor([1, 3]).bitwise_xor_(1)",
        "m.tensor([1, 3], dtype=m.uint8).bitwise_not_()",
    ):
        t, e = eval(expr, {"m": torch}), eval(expr, {"m": eg})
        assert e.tolist() == t.tolist(), expr
    with pytest.raises(NotImplementedError, match="not implemented for 'Double'"):
        eg.tensor([1.0], dtype=eg.float64).bitwise_not()


VIEW_DTYPE = [
    "m.tensor([1.0, -5.0]).view(m.int32)",
    "m.tensor([1.0, -5.0], requires_grad=True).view(m.float16)",
    "m.tensor([1.0, -5.0, 3.0, 2.0], dtype=m.float64).view(m.float32)",
    "m.tensor([1.0, -5.0]).view(m.uint8)",
    "m.tensor(3.0).view(m.int32)",
    "m.ones(4, 3)[:, :2].view(m.int16)",
    "m.ones(4, 3).t().view(m.int32)",
    "m.ones(4, dtype=m.int64).view(m.bool)",
    "m.tensor([[1, 2, 3, 4]], dtype=m.int16).view(m.float64)",
    "m.zeros(3).view(m.float64)",
    "m.zeros(()).view(m.float64)",
    "m.ones(4, 3).t().view(m.int16)",
]


@pytest.mark.parametrize("expr", VIEW_DTYPE)
def test_view_dtype(expr):
    """view(dtype) reinterprets the bytes (no gradient), with PyTorch's checks."""

    def run(m):
        try:
            r = eval(expr, {"m": m})
        except RuntimeError as e:
            return str(e)
        return r.tolist(), str(r.dtype).split(".")[-1], r.requires_grad, r.grad_fn

    assert run(eg) == run(torch)


def test_view_dtype_shares_memory():
    x = eg.zeros(2)
    y = x.view(eg.int32)
    y.add_(1)
    assert x.tolist() == torch.ones(2, dtype=torch.int32).view(torch.float32).tolist()
