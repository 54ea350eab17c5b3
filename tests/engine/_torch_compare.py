"""Shared helpers for checking the engine against PyTorch (CPU, float64).

A test case is a function ``fn(m, F, *inputs)`` that is written once and run twice: with
``m = torch`` / ``F = torch.nn.functional`` and with ``m = engine`` / ``F = engine.nn.functional``.
Inputs are described by :class:`Spec` objects, sampled once with numpy, and turned into a
tensor of each library from the *same* array.

Setting ``ENGINE_TEST_BACKEND=torch`` points the engine side at torch itself; every test is
expected to pass that way (it is how the tests' own logic is checked).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, replace

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_F

if os.environ.get("ENGINE_TEST_BACKEND") == "torch":
    eg = torch
    eg_F = torch_F
else:
    import engine as eg
    import engine.nn.functional as eg_F

RTOL = 1e-7
ATOL = 1e-10
RTOL_F32 = 2e-5
ATOL_F32 = 1e-6


# --------------------------------------------------------------------------- input specs


@dataclass(frozen=True)
class Spec:
    """How to sample one input.

    kind: "float" (float64), "int" (int64, values in [0, high)), "bool".
    dist (floats): normal | pos (0.5..2) | nz (|x| in 0.2..2, random sign) | distinct (no ties)
                   | prob (0.05..0.95) | smallint (-1, 0, 1: for ==) | clampsafe (|x| away from 0.5)
    """

    shape: tuple
    dist: str = "normal"
    grad: bool = True
    kind: str = "float"
    high: int = 0
    dtype: str = "float64"  # for kind == "float": "float64" or "float32"
    values: tuple | None = None  # dist == "fixed": nested tuple of the exact values


def R(*shape, grad=True):
    return Spec(tuple(shape), "normal", grad)


def P(*shape, grad=True):
    return Spec(tuple(shape), "pos", grad)


def NZ(*shape, grad=True):
    return Spec(tuple(shape), "nz", grad)


def D(*shape, grad=True):
    return Spec(tuple(shape), "distinct", grad)


def Prob(*shape, grad=True):
    return Spec(tuple(shape), "prob", grad)


def SmallInt(*shape, grad=True):
    return Spec(tuple(shape), "smallint", grad)


def ClampSafe(*shape, grad=True):
    return Spec(tuple(shape), "clampsafe", grad)


def Idx(shape, high):
    return Spec(tuple(shape), kind="int", grad=False, high=high)


def Mask(*shape):
    return Spec(tuple(shape), kind="bool", grad=False)


def Fixed(values, grad=True):
    arr = np.asarray(values, dtype=np.float64)
    return Spec(arr.shape, "fixed", grad, values=tuple(arr.ravel().tolist()))


def f32(spec: Spec) -> Spec:
    return replace(spec, dtype="float32")


def sample(spec: Spec, rng: np.random.Generator) -> np.ndarray:
    shape = spec.shape
    if spec.kind == "int":
        return rng.integers(0, spec.high, size=shape).astype(np.int64)
    if spec.kind == "bool":
        m = rng.random(shape) < 0.5
        if m.size >= 2:  # make sure both branches are taken
            m.flat[0], m.flat[1] = True, False
        return np.asarray(m, dtype=bool)
    d = spec.dist
    if d == "normal":
        a = rng.standard_normal(shape)
    elif d == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    elif d == "nz":
        a = rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], size=shape)
    elif d == "distinct":
        n = int(np.prod(shape, dtype=np.int64))
        a = (rng.permutation(n) - n / 2) * 0.25 + rng.uniform(-0.05, 0.05, n)
        a = a.reshape(shape)
    elif d == "prob":
        a = rng.uniform(0.05, 0.95, shape)
    elif d == "smallint":
        a = rng.integers(-1, 2, size=shape).astype(np.float64)
    elif d == "fixed":
        a = np.asarray(spec.values).reshape(shape)
    elif d == "clampsafe":
        a = rng.uniform(-1.5, 1.5, shape)
        a = np.where(np.abs(np.abs(a) - 0.5) < 0.05, a * 1.3, a)
        a = np.where(np.abs(a) < 0.05, 0.2, a)
    else:  # pragma: no cover
        raise ValueError(d)
    return np.asarray(a, dtype=spec.dtype)


def make_tensor(m, arr: np.ndarray, spec: Spec):
    if spec.kind == "int":
        return m.tensor(arr, dtype=m.int64)
    if spec.kind == "bool":
        return m.tensor(arr, dtype=m.bool)
    return m.tensor(arr, dtype=getattr(m, spec.dtype), requires_grad=spec.grad)


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode())


def to_np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def shape_id(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def case(name, fn, *specs, **marks):
    """A parametrize entry (name, fn, specs) with id=name."""
    return pytest.param(name, fn, specs, id=name, **marks)


def grad_fn_name(t) -> str | None:
    gf = t.grad_fn
    if gf is None:
        return None
    name = getattr(gf, "name", None)
    if callable(name):
        return name()
    return type(gf).__name__


# --------------------------------------------------------------------------- comparison


def assert_same_array(actual: np.ndarray, expected: np.ndarray, what: str, loose=False):
    """Same shape and dtype; values to float64 precision, or float32 precision if ``loose``."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != torch {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != torch {expected.dtype}"
    if expected.dtype == np.float32 or (loose and expected.dtype == np.float64):
        np.testing.assert_allclose(actual, expected, rtol=RTOL_F32, atol=ATOL_F32, err_msg=what)
    elif np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def run_both(name, fn, specs):
    """Build the inputs for both libraries and run fn; returns (torch side, engine side)."""
    rng = np.random.default_rng(seed_for(name))
    arrays = [sample(s, rng) for s in specs]
    t_in = [make_tensor(torch, a, s) for a, s in zip(arrays, specs)]
    e_in = [make_tensor(eg, a, s) for a, s in zip(arrays, specs)]
    t_out = fn(torch, torch_F, *t_in)
    e_out = fn(eg, eg_F, *e_in)
    return rng, (t_in, t_out), (e_in, e_out)


def compare_with_torch(name, fn, specs):
    """Forward value, dtype, shape, requires_grad, and every input's .grad after out.backward(g).

    The upstream gradient g is random (same array for both); fn may also call backward itself
    and return None, in which case only the inputs' grads are compared.
    """
    rng, (t_in, t_out), (e_in, e_out) = run_both(name, fn, specs)
    # with any float32 input, float64 results (promoted outputs, grads of float64 inputs) carry
    # float32 rounding whose exact value depends on the order of operations
    loose = any(s.kind == "float" and s.dtype == "float32" for s in specs)

    if t_out is not None:
        t_val, e_val = to_np(t_out), to_np(e_out)
        assert_same_array(e_val, t_val, "forward", loose)
        assert bool(e_out.requires_grad) == t_out.requires_grad, "out.requires_grad"
        assert (e_out.grad_fn is None) == (t_out.grad_fn is None), "out.grad_fn None-ness"

    if t_out is not None and t_out.requires_grad:
        g = np.asarray(rng.standard_normal(t_val.shape), dtype=t_val.dtype)
        t_out.backward(torch.tensor(g, dtype=t_out.dtype))
        e_out.backward(eg.tensor(g, dtype=e_out.dtype))

    for i, (ti, ei) in enumerate(zip(t_in, e_in)):
        if ti.grad is None:
            assert ei.grad is None, f"input {i}: engine .grad should be None (torch's is)"
        else:
            assert ei.grad is not None, f"input {i}: engine .grad is None, torch's is not"
            assert_same_array(to_np(ei.grad), to_np(ti.grad), f"grad of input {i}", loose)


def gradcheck_case(name, fn, specs):
    """eg.autograd.gradcheck of fn(eg, eg_F, *inputs) with respect to the float inputs whose
    spec asks for a gradient (the others held fixed), sampled as the torch comparisons are."""
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    free = [i for i, s in enumerate(specs) if s.kind == "float" and s.grad]

    def f(*diff):
        args = list(tensors)
        for i, t in zip(free, diff):
            args[i] = t
        return fn(eg, eg_F, *args)

    return eg.autograd.gradcheck(f, tuple(tensors[i] for i in free))


def assert_same_error(expr, make_env):
    """`expr` (a string, evaluated with the names make_env(m) gives) raises in torch, and the
    engine raises the same exception type with the same first line."""

    def run(m):
        try:
            eval(expr, make_env(m))
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e), str(e).split("\n")[0]
        return None

    want, got = run(torch), run(eg)
    assert want is not None, f"torch does not raise for {expr}"
    assert got == want
