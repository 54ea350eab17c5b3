"""int8 and int16, PyTorch's promotion between every pair of dtypes (promote_types, result_type and
the dtype binary ops actually produce), and creation edge cases (linspace, eye), against torch."""

import itertools
import re

import numpy as np
import pytest
import torch
from _torch_compare import eg

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
PAIRS = list(itertools.product(NAMES, NAMES))


def _name(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_promote_types(a, b):
    expected = _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert _name(eg.promote_types(getattr(eg, a), getattr(eg, b))) == expected


def _sample(m, name, shape):
    return m.ones(shape, dtype=getattr(m, name))


@pytest.mark.parametrize(
    "shapes", [((2,), (2,)), ((2,), ()), ((), (2,)), ((), ())], ids=["dd", "d0", "0d", "00"]
)
def test_result_type_and_binary_ops(shapes):
    """result_type and the dtype of +, *, maximum for every pair (dims and 0-d mixed)."""
    for a, b in PAIRS:
        ta, tb = _sample(torch, a, shapes[0]), _sample(torch, b, shapes[1])
        ea, eb = _sample(eg, a, shapes[0]), _sample(eg, b, shapes[1])
        want = _name(torch.result_type(ta, tb))
        assert _name(eg.result_type(ea, eb)) == want, (a, b)
        if a == b == "bool":
            continue
        assert _name((ea + eb).dtype) == _name((ta + tb).dtype), (a, b, "+")
        assert _name((ea * eb).dtype) == _name((ta * tb).dtype), (a, b, "*")
        assert _name(eg.maximum(ea, eb).dtype) == _name(torch.maximum(ta, tb).dtype), (a, b)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("number", [True, 3, 2.5, 2**20])
def test_result_type_with_numbers(name, number):
    for shape in ((2,), ()):
        t, e = _sample(torch, name, shape), _sample(eg, name, shape)
        assert _name(eg.result_type(e, number)) == _name(torch.result_type(t, number))
        assert _name(eg.result_type(number, e)) == _name(torch.result_type(number, t))


def test_result_type_numbers_only():
    for a, b in itertools.product([True, 2, 2.5], repeat=2):
        assert _name(eg.result_type(a, b)) == _name(torch.result_type(a, b))


def test_promote_types_python_types_and_errors():
    for a in (int, float, bool):
        assert _name(eg.promote_types(eg.int8, a)) == _name(torch.promote_types(torch.int8, a))
    msg = "promote_types(): argument 'type2' (position 2) must be torch.dtype, not int"
    for m in (torch, eg):
        with pytest.raises(TypeError, match=re.escape(msg)):
            m.promote_types(m.int8, 1)


@pytest.mark.parametrize("name", ["int8", "int16"])
def test_small_int_dtypes(name):
    t_dt, e_dt = getattr(torch, name), getattr(eg, name)
    assert e_dt.itemsize == t_dt.itemsize and e_dt.is_floating_point is False
    values = [[1, -2, 100], [0, 7, -128]]
    t, e = torch.tensor(values, dtype=t_dt), eg.tensor(values, dtype=e_dt)
    assert e.dtype == e_dt and e.tolist() == t.tolist()
    # overflow wraps as in PyTorch; numbers of the same category keep the tensor's dtype
    assert (e + 100).tolist() == (t + 100).tolist() and _name((e + 100).dtype) == name
    assert (e * 2.5).dtype == eg.float32
    assert e.sum().dtype == eg.int64
    assert e.type() == t.type()
    arr = np.array([1, 2], dtype=getattr(np, name))
    assert _name(eg.from_numpy(arr).dtype) == _name(torch.from_numpy(arr).dtype) == name
    assert _name(eg.tensor(arr).dtype) == name
    assert eg.zeros(2, dtype=e_dt).dtype == e_dt
    assert _name(e.to(eg.float64).to(e_dt).dtype) == name
    assert ("dtype=" in repr(e)) and repr(e).endswith(f"{name})")


def test_char_short_methods():
    for m in (torch, eg):
        x = m.tensor([1.7, -2.2])
        assert _name(x.char().dtype) == "int8" and x.char().tolist() == [1, -2]
        assert _name(x.short().dtype) == "int16"


def test_mixed_uint8_int8_values():
    a = np.array([200, 3, 255], dtype=np.uint8)
    b = np.array([-100, 5, -1], dtype=np.int8)
    t = torch.from_numpy(a) + torch.from_numpy(b)
    e = eg.from_numpy(a) + eg.from_numpy(b)
    assert _name(e.dtype) == _name(t.dtype) == "int16" and e.tolist() == t.tolist()


# -- creation edge cases ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.eye(3),
        lambda m: m.eye(2, 3),
        lambda m: m.eye(3, 2, dtype=m.int8),
        lambda m: m.eye(0),
        lambda m: m.eye(2, 0),
        lambda m: m.eye(2, dtype=m.bool),
        lambda m: m.linspace(0, 10, 7, dtype=m.int64),
        lambda m: m.linspace(-1, 2.5, 4, dtype=m.int8),
        lambda m: m.linspace(0, 1, 5, dtype=m.int16),
        lambda m: m.linspace(0, 1, 5, dtype=m.float64),
    ],
)
def test_creation_values(fn):
    t, e = fn(torch), fn(eg)
    assert _name(e.dtype) == _name(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda m: m.eye(-3), RuntimeError, "n must be greater or equal to 0, got -3"),
        (lambda m: m.eye(3, -2), RuntimeError, "m must be greater or equal to 0, got -2"),
        (
            lambda m: m.linspace(0, 1, 5, dtype=m.bool),
            NotImplementedError,
            "\"linspace_cpu\" not implemented for 'Bool'",
        ),
    ],
)
def test_creation_errors(fn, exc, msg):
    for m in (torch, eg):
        with pytest.raises(exc, match=re.escape(msg)):
            fn(m)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device (cupy)")
def test_cuda_small_ints():
    e = eg.tensor([1, -2, 3], dtype=eg.int8, device="cuda")
    u = eg.tensor([200, 2, 3], dtype=eg.uint8, device="cuda")
    assert (e + u).dtype == eg.int16
    assert (e + u).cpu().tolist() == [201, 0, 6]
    assert e.type() == "torch.cuda.CharTensor"


# a Python int outside the tensor's integer dtype wraps into it, as PyTorch does
WRAPS = [
    ("int32", "|", 0xFFFFFFFF),
    ("int32", "&", 0xFFFFFFFF),
    ("int32", "^", 0x1FFFFFFFF),
    ("int32", "+", 0xFFFFFFFF),
    ("uint8", "|", 0x1FF),
    ("uint8", "-", 300),
    ("int16", "*", 70000),
    ("int8", "+", -200),
]


@pytest.mark.parametrize("dtype, op, number", WRAPS, ids=[f"{d}{o}{n}" for d, o, n in WRAPS])
def test_out_of_range_python_int_wraps(dtype, op, number):
    def run(m):
        x = m.tensor([1, -5, 7], dtype=getattr(m, dtype)) if dtype != "uint8" else None
        if x is None:
            x = m.tensor([1, 5, 7], dtype=m.uint8)
        return eval(f"x {op} number", {"x": x, "number": number})

    t, e = run(torch), run(eg)
    assert _name(e.dtype) == _name(t.dtype)
    assert e.tolist() == t.tolist()
