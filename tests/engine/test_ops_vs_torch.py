"""Every public op against torch CPU: same float64 inputs, same random upstream gradient.

Each case is ``fn(m, F, *inputs)``; it runs once with torch and once with the engine
(see ``_torch_compare``), then forward values and every input's ``.grad`` are compared.
"""

import re

import numpy as np
import pytest
import torch
from _torch_compare import (
    NZ,
    ClampSafe,
    D,
    Fixed,
    Idx,
    Mask,
    P,
    Prob,
    R,
    SmallInt,
    case,
    compare_with_torch,
    eg,
    f32,
    grad_fn_name,
    run_both,
    shape_id,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SHAPES = [(), (5,), (3, 4), (2, 3, 4)]

# ------------------------------------------------------------------------------ unary

# name -> (fn, input spec constructor)
UNARY = {
    "neg": (lambda m, F, x: -x, R),
    "exp": (lambda m, F, x: m.exp(x), R),
    "exp_method": (lambda m, F, x: x.exp(), R),
    "log": (lambda m, F, x: m.log(x), P),
    "log_method": (lambda m, F, x: x.log(), P),
    "sqrt": (lambda m, F, x: m.sqrt(x), P),
    "sqrt_method": (lambda m, F, x: x.sqrt(), P),
    "abs": (lambda m, F, x: m.abs(x), NZ),
    "abs_method": (lambda m, F, x: x.abs(), NZ),
    "sin": (lambda m, F, x: m.sin(x), R),
    "cos": (lambda m, F, x: m.cos(x), R),
    "tanh": (lambda m, F, x: m.tanh(x), R),
    "tanh_method": (lambda m, F, x: x.tanh(), R),
    "sigmoid": (lambda m, F, x: m.sigmoid(x), R),
    "sigmoid_method": (lambda m, F, x: x.sigmoid(), R),
    "relu": (lambda m, F, x: m.relu(x), NZ),
    "relu_method": (lambda m, F, x: x.relu(), NZ),
    "F.relu": (lambda m, F, x: F.relu(x), NZ),
    "F.sigmoid": (lambda m, F, x: F.sigmoid(x), R),
    "F.tanh": (lambda m, F, x: F.tanh(x), R),
    "F.leaky_relu": (lambda m, F, x: F.leaky_relu(x), NZ),
    "F.leaky_relu_0.2": (lambda m, F, x: F.leaky_relu(x, negative_slope=0.2), NZ),
    "clamp_min": (lambda m, F, x: m.clamp(x, min=-0.5), ClampSafe),
    "clamp_max": (lambda m, F, x: m.clamp(x, max=0.5), ClampSafe),
    "clamp_both": (lambda m, F, x: m.clamp(x, min=-0.5, max=0.5), ClampSafe),
    "clamp_method_positional": (lambda m, F, x: x.clamp(-0.5, 0.5), ClampSafe),
    "clamp_method_min": (lambda m, F, x: x.clamp(min=0.5), ClampSafe),
    "pow_2": (lambda m, F, x: x**2, R),
    "pow_3": (lambda m, F, x: x**3, R),
    "pow_int_neg": (lambda m, F, x: x**-2, NZ),
    "pow_0.5": (lambda m, F, x: x**0.5, P),
    "pow_-1.5": (lambda m, F, x: x**-1.5, P),
    "m.pow_scalar_exp": (lambda m, F, x: m.pow(x, 2.5), P),
    "pow_method": (lambda m, F, x: x.pow(3), R),
    "rpow_2": (lambda m, F, x: 2.0**x, R),
    "rpow_0.5": (lambda m, F, x: 0.5**x, R),
    "m.pow_scalar_base": (lambda m, F, x: m.pow(2.0, x), R),
    "add_scalar": (lambda m, F, x: x + 1.5, R),
    "radd_scalar": (lambda m, F, x: 1.5 + x, R),
    "add_int_scalar": (lambda m, F, x: x + 2, R),
    "sub_scalar": (lambda m, F, x: x - 2.0, R),
    "rsub_scalar": (lambda m, F, x: 2.0 - x, R),
    "mul_scalar": (lambda m, F, x: x * 3.0, R),
    "rmul_scalar": (lambda m, F, x: 3.0 * x, R),
    "rmul_int_scalar": (lambda m, F, x: 3 * x, R),
    "div_scalar": (lambda m, F, x: x / 4.0, R),
    "rdiv_scalar": (lambda m, F, x: 4.0 / x, NZ),
    "chain": (lambda m, F, x: m.tanh(m.exp(x) * 0.5 - 1.0) ** 2, R),
    "reuse_fanout": (lambda m, F, x: x * x + x - m.sin(x) / 2, R),
}


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, shape):
    fn, spec = UNARY[op]
    compare_with_torch(f"unary-{op}-{shape_id(shape)}", fn, [spec(*shape)])


# ------------------------------------------------------------------------------ binary

BINARY = {
    "add": (lambda m, F, x, y: x + y, R, R),
    "sub": (lambda m, F, x, y: x - y, R, R),
    "mul": (lambda m, F, x, y: x * y, R, R),
    "div": (lambda m, F, x, y: x / y, R, NZ),
    "pow": (lambda m, F, x, y: x**y, P, R),
    "m.pow": (lambda m, F, x, y: m.pow(x, y), P, R),
    "maximum": (lambda m, F, x, y: m.maximum(x, y), R, R),
    "minimum": (lambda m, F, x, y: m.minimum(x, y), R, R),
}

BINARY_SHAPES = [
    ((3, 4), (3, 4)),
    ((5,), (5,)),
    ((), ()),
    ((3, 1), (1, 4)),
    ((2, 1, 3), (4, 1)),
    ((4, 1), (2, 1, 3)),
    ((), (3, 4)),
    ((3, 4), ()),
    ((4,), (3, 4)),
    ((2, 3, 4), (3, 1)),
]


@pytest.mark.parametrize(
    "shapes", BINARY_SHAPES, ids=[f"{shape_id(a)}_{shape_id(b)}" for a, b in BINARY_SHAPES]
)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary(op, shapes):
    fn, sx, sy = BINARY[op]
    name = f"binary-{op}-{shape_id(shapes[0])}_{shape_id(shapes[1])}"
    compare_with_torch(name, fn, [sx(*shapes[0]), sy(*shapes[1])])


@pytest.mark.parametrize("which", ["x", "y"])
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_one_side_no_grad(op, which):
    """The input that does not require grad must keep .grad None; broadcasting on both sides."""
    fn, sx, sy = BINARY[op]
    specs = [sx(3, 1, grad=which != "x"), sy(1, 4, grad=which != "y")]
    compare_with_torch(f"binary-nograd-{op}-{which}", fn, specs)


# ------------------------------------------------------------------------------ comparisons

COMPARE = [
    case("eq", lambda m, F, x, y: x == y, SmallInt(3, 4), SmallInt(3, 4)),
    case("ne", lambda m, F, x, y: x != y, SmallInt(3, 4), SmallInt(3, 4)),
    case("lt", lambda m, F, x, y: x < y, SmallInt(3, 4), SmallInt(3, 4)),
    case("le", lambda m, F, x, y: x <= y, SmallInt(3, 4), SmallInt(3, 4)),
    case("gt", lambda m, F, x, y: x > y, SmallInt(3, 4), SmallInt(3, 4)),
    case("ge", lambda m, F, x, y: x >= y, SmallInt(3, 4), SmallInt(3, 4)),
    case("gt_broadcast", lambda m, F, x, y: x > y, SmallInt(3, 1), SmallInt(1, 4)),
    case("le_broadcast_3d", lambda m, F, x, y: x <= y, SmallInt(2, 1, 3), SmallInt(4, 1)),
    case("eq_scalar", lambda m, F, x: x == 0.0, SmallInt(3, 4)),
    case("gt_scalar", lambda m, F, x: x > 0.5, R(3, 4)),
    case("lt_scalar_reflected", lambda m, F, x: 0.5 < x, R(3, 4)),  # noqa: SIM300
    case("ge_scalar_reflected", lambda m, F, x: 0.0 >= x, SmallInt(3, 4)),  # noqa: SIM300
    case("ne_0d", lambda m, F, x, y: x != y, SmallInt(), SmallInt()),
    case("cmp_then_mul", lambda m, F, x: (x > 0) * x, NZ(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", COMPARE)
def test_comparison(name, fn, specs):
    compare_with_torch(f"cmp-{name}", fn, specs)


# ------------------------------------------------------------------------------ reductions

REDUCE_DIMS = [0, 1, 2, -1, -2, -3, (0, 2), (-1, 0), (0, 1, 2), (1,)]


def _dim_id(d):
    return "t" + "_".join(map(str, d)) if isinstance(d, tuple) else str(d)


def _reduction_cases():
    cs = []
    for op in ["sum", "mean"]:
        cs.append(case(f"{op}-all", lambda m, F, x, op=op: getattr(x, op)(), R(2, 3, 4)))
        cs.append(case(f"{op}-all-scalar", lambda m, F, x, op=op: getattr(x, op)(), R()))
        cs.append(case(f"{op}-all-1d", lambda m, F, x, op=op: getattr(m, op)(x), R(5)))
        for d in REDUCE_DIMS:
            for kd in (False, True):
                cs.append(
                    case(
                        f"{op}-dim{_dim_id(d)}-keepdim{kd}",
                        lambda m, F, x, op=op, d=d, kd=kd: getattr(x, op)(dim=d, keepdim=kd),
                        R(2, 3, 4),
                    )
                )
        cs.append(
            case(f"{op}-module-positional", lambda m, F, x, op=op: getattr(m, op)(x, 1), R(3, 4))
        )
        cs.append(
            case(
                f"{op}-method-positional-keepdim",
                lambda m, F, x, op=op: getattr(x, op)(-1, True),
                R(3, 4),
            )
        )
    for op in ["amax", "amin"]:
        for d in [0, 1, -1, (0, 2), (2, 1)]:
            for kd in (False, True):
                cs.append(
                    case(
                        f"{op}-dim{_dim_id(d)}-keepdim{kd}",
                        lambda m, F, x, op=op, d=d, kd=kd: getattr(m, op)(x, dim=d, keepdim=kd),
                        D(2, 3, 4),
                    )
                )
    for op in ["max", "min"]:
        cs.append(case(f"{op}-all", lambda m, F, x, op=op: getattr(x, op)(), D(3, 4)))
        cs.append(case(f"{op}-all-module", lambda m, F, x, op=op: getattr(m, op)(x), D(2, 3, 4)))
        for d in [0, 1, 2, -1]:
            for kd in (False, True):
                cs.append(
                    case(
                        f"{op}-dim{d}-keepdim{kd}-values",
                        lambda m, F, x, op=op, d=d, kd=kd: getattr(x, op)(dim=d, keepdim=kd).values,
                        D(2, 3, 4),
                    )
                )
                cs.append(
                    case(
                        f"{op}-dim{d}-keepdim{kd}-indices",
                        lambda m, F, x, op=op, d=d, kd=kd: (
                            getattr(m, op)(x, dim=d, keepdim=kd).indices
                        ),
                        D(2, 3, 4),
                    )
                )
        cs.append(case(f"{op}-tuple0", lambda m, F, x, op=op: getattr(x, op)(1)[0], D(3, 4)))
        cs.append(case(f"{op}-tuple1", lambda m, F, x, op=op: getattr(x, op)(1)[1], D(3, 4)))
        cs.append(
            case(f"{op}-unpack", lambda m, F, x, op=op: _unpack_mul(getattr(x, op)(0)), D(3, 4))
        )
    for op in ["var", "std"]:
        variants = {
            "default": {},
            "correction0": {"correction": 0},
            "correction2": {"correction": 2},
            "unbiasedF": {"unbiased": False},
            "unbiasedT": {"unbiased": True},
        }
        for vname, kw in variants.items():
            cs.append(
                case(
                    f"{op}-all-{vname}", lambda m, F, x, op=op, kw=kw: getattr(x, op)(**kw), R(3, 4)
                )
            )
            for d in [1, -1, (0, 2)]:
                for kd in (False, True):
                    cs.append(
                        case(
                            f"{op}-dim{_dim_id(d)}-{vname}-keepdim{kd}",
                            lambda m, F, x, op=op, d=d, kd=kd, kw=kw: getattr(m, op)(
                                x, dim=d, keepdim=kd, **kw
                            ),
                            R(2, 3, 4),
                        )
                    )
    return cs


def _unpack_mul(res):
    values, indices = res
    return values * indices


@pytest.mark.parametrize("name, fn, specs", _reduction_cases())
def test_reduction(name, fn, specs):
    compare_with_torch(f"reduce-{name}", fn, specs)


# ------------------------------------------------------------------------------ softmax family


def _softmax_cases():
    forms = {
        "m.softmax": lambda m, F, x, d: m.softmax(x, d),
        "m.log_softmax": lambda m, F, x, d: m.log_softmax(x, d),
        "F.softmax": lambda m, F, x, d: F.softmax(x, dim=d),
        "F.log_softmax": lambda m, F, x, d: F.log_softmax(x, dim=d),
        "method.softmax": lambda m, F, x, d: x.softmax(d),
        "method.log_softmax": lambda m, F, x, d: x.log_softmax(dim=d),
    }
    cs = []
    for fname, f in forms.items():
        for d in [0, 1, 2, -1, -2]:
            cs.append(case(f"{fname}-dim{d}", lambda m, F, x, f=f, d=d: f(m, F, x, d), R(2, 3, 4)))
        cs.append(case(f"{fname}-1d", lambda m, F, x, f=f: f(m, F, x, 0), R(5)))
    # large logits: must be computed stably
    cs.append(case("softmax-large", lambda m, F, x: m.softmax(x * 400.0, -1), R(3, 4)))
    cs.append(case("log_softmax-large", lambda m, F, x: m.log_softmax(x * 400.0, -1), R(3, 4)))
    return cs


@pytest.mark.parametrize("name, fn, specs", _softmax_cases())
def test_softmax(name, fn, specs):
    compare_with_torch(f"softmax-{name}", fn, specs)


# ------------------------------------------------------------------------------ matmul

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((2, 1, 3, 4), (3, 4, 5)),
    ((1, 4), (4, 1)),
]


@pytest.mark.parametrize("form", ["@", "m.matmul", "method"])
@pytest.mark.parametrize(
    "shapes", MATMUL_SHAPES, ids=[f"{shape_id(a)}_{shape_id(b)}" for a, b in MATMUL_SHAPES]
)
def test_matmul(shapes, form):
    fn = {
        "@": lambda m, F, x, y: x @ y,
        "m.matmul": lambda m, F, x, y: m.matmul(x, y),
        "method": lambda m, F, x, y: x.matmul(y),
    }[form]
    name = f"matmul-{form}-{shape_id(shapes[0])}_{shape_id(shapes[1])}"
    compare_with_torch(name, fn, [R(*shapes[0]), R(*shapes[1])])


def test_matmul_one_side_no_grad():
    compare_with_torch("matmul-nograd", lambda m, F, x, y: x @ y, [R(2, 3, 4), R(4, 5, grad=False)])


# ------------------------------------------------------------------------------ shape ops

SHAPE_OPS = [
    case("reshape-minus1", lambda m, F, x: x.reshape(-1), R(2, 3, 4)),
    case("reshape-6_minus1", lambda m, F, x: x.reshape(6, -1), R(2, 3, 4)),
    case("reshape-minus1_2", lambda m, F, x: x.reshape(-1, 2), R(2, 3, 4)),
    case("reshape-4_3_2", lambda m, F, x: x.reshape(4, 3, 2), R(2, 3, 4)),
    case("reshape-tuple", lambda m, F, x: x.reshape((2, 12)), R(2, 3, 4)),
    case("reshape-module", lambda m, F, x: m.reshape(x, (3, 8)), R(2, 3, 4)),
    case("reshape-to-scalar", lambda m, F, x: x.reshape(()), R(1)),
    case("reshape-from-scalar", lambda m, F, x: x.reshape(1, 1), R()),
    case("view-6_4", lambda m, F, x: x.view(6, 4), R(2, 3, 4)),
    case("view-minus1", lambda m, F, x: x.view(-1), R(2, 3, 4)),
    case("transpose-0_1", lambda m, F, x: x.transpose(0, 1), R(3, 4)),
    case("transpose-0_2", lambda m, F, x: x.transpose(0, 2), R(2, 3, 4)),
    case("transpose-neg", lambda m, F, x: x.transpose(-1, 0), R(2, 3, 4)),
    case("transpose-module", lambda m, F, x: m.transpose(x, 1, 2), R(2, 3, 4)),
    case("T", lambda m, F, x: x.T, R(3, 4)),
    case("permute-2_0_1", lambda m, F, x: x.permute(2, 0, 1), R(2, 3, 4)),
    case("permute-tuple", lambda m, F, x: x.permute((1, 2, 0)), R(2, 3, 4)),
    case("permute-neg", lambda m, F, x: x.permute(-1, 0, 1), R(2, 3, 4)),
    case("permute-then-reshape", lambda m, F, x: x.permute(1, 0, 2).reshape(3, 8), R(2, 3, 4)),
    case("unsqueeze-0", lambda m, F, x: x.unsqueeze(0), R(3, 4)),
    case("unsqueeze-1", lambda m, F, x: x.unsqueeze(1), R(3, 4)),
    case("unsqueeze-minus1", lambda m, F, x: x.unsqueeze(-1), R(3, 4)),
    case("unsqueeze-scalar", lambda m, F, x: x.unsqueeze(0), R()),
    case("unsqueeze-module", lambda m, F, x: m.unsqueeze(x, 2), R(3, 4)),
    case("squeeze-all", lambda m, F, x: x.squeeze(), R(1, 3, 1, 4)),
    case("squeeze-0", lambda m, F, x: x.squeeze(0), R(1, 3, 1, 4)),
    case("squeeze-2", lambda m, F, x: x.squeeze(2), R(1, 3, 1, 4)),
    case("squeeze-neg", lambda m, F, x: x.squeeze(-2), R(1, 3, 1, 4)),
    case("squeeze-noop-dim", lambda m, F, x: x.squeeze(1), R(1, 3, 1, 4)),
    case("squeeze-to-scalar", lambda m, F, x: x.squeeze(), R(1, 1)),
    case("squeeze-module", lambda m, F, x: m.squeeze(x, 0), R(1, 3)),
    case("flatten", lambda m, F, x: x.flatten(), R(2, 3, 4)),
    case("flatten-1", lambda m, F, x: x.flatten(1), R(2, 3, 4)),
    case("flatten-0_1", lambda m, F, x: x.flatten(0, 1), R(2, 3, 4)),
    case("flatten-kw", lambda m, F, x: x.flatten(start_dim=1, end_dim=-1), R(2, 3, 4)),
    case("flatten-module", lambda m, F, x: m.flatten(x, 1), R(2, 3, 4)),
    case("flatten-scalar", lambda m, F, x: x.flatten(), R()),
    case("expand-3_4", lambda m, F, x: x.expand(3, 4), R(3, 1)),
    case("expand-minus1", lambda m, F, x: x.expand(-1, 4), R(3, 1)),
    case("expand-new-dims", lambda m, F, x: x.expand(2, 3, 4), R(3, 1)),
    case("expand-new-dims-minus1", lambda m, F, x: x.expand(2, -1, 4), R(3, 1)),
    case("expand-tuple", lambda m, F, x: x.expand((2, 3, 4)), R(1, 4)),
    case("expand-scalar", lambda m, F, x: x.expand(2, 3), R()),
    case("expand-noop", lambda m, F, x: x.expand(3, 4), R(3, 4)),
    case("detach-left", lambda m, F, x, y: x.detach() * y, R(3, 4), R(3, 4)),
    case("detach-mid", lambda m, F, x, y: (x * 2).detach() + y * x, R(3, 4), R(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", SHAPE_OPS)
def test_shape_op(name, fn, specs):
    compare_with_torch(f"shape-{name}", fn, specs)


# ------------------------------------------------------------------------------ cat / stack

CAT_STACK = [
    case("cat-dim0", lambda m, F, a, b, c: m.cat([a, b, c]), R(2, 3), R(1, 3), R(4, 3)),
    case("cat-dim0-kw", lambda m, F, a, b, c: m.cat([a, b, c], dim=0), R(2, 3), R(1, 3), R(4, 3)),
    case("cat-dim1", lambda m, F, a, b, c: m.cat([a, b, c], 1), R(2, 1), R(2, 3), R(2, 2)),
    case(
        "cat-dim-minus1",
        lambda m, F, a, b, c: m.cat((a, b, c), -1),
        R(2, 3, 1),
        R(2, 3, 2),
        R(2, 3, 3),
    ),
    case(
        "cat-dim1-3d",
        lambda m, F, a, b, c: m.cat([a, b, c], dim=1),
        R(2, 1, 4),
        R(2, 3, 4),
        R(2, 2, 4),
    ),
    case("cat-1d", lambda m, F, a, b, c: m.cat([a, b, c]), R(2), R(3), R(1)),
    case(
        "cat-nograd-middle",
        lambda m, F, a, b, c: m.cat([a, b, c], 1),
        R(2, 1),
        R(2, 3, grad=False),
        R(2, 2),
    ),
    case("cat-same-tensor", lambda m, F, a, b, c: m.cat([a, b, a, c]), R(2, 3), R(1, 3), R(4, 3)),
    case("stack-dim0", lambda m, F, a, b, c: m.stack([a, b, c]), R(3, 4), R(3, 4), R(3, 4)),
    case("stack-dim1", lambda m, F, a, b, c: m.stack([a, b, c], 1), R(3, 4), R(3, 4), R(3, 4)),
    case("stack-dim2", lambda m, F, a, b, c: m.stack([a, b, c], dim=2), R(3, 4), R(3, 4), R(3, 4)),
    case(
        "stack-dim-minus1", lambda m, F, a, b, c: m.stack((a, b, c), -1), R(3, 4), R(3, 4), R(3, 4)
    ),
    case(
        "stack-dim-minus2", lambda m, F, a, b, c: m.stack((a, b, c), -2), R(3, 4), R(3, 4), R(3, 4)
    ),
    case("stack-scalars", lambda m, F, a, b, c: m.stack([a, b, c]), R(), R(), R()),
    case("stack-nograd", lambda m, F, a, b, c: m.stack([a, b, c]), R(4), R(4, grad=False), R(4)),
]


@pytest.mark.parametrize("name, fn, specs", CAT_STACK)
def test_cat_stack(name, fn, specs):
    compare_with_torch(f"catstack-{name}", fn, specs)


# ------------------------------------------------------------------------------ indexing

INDEXING = [
    case("int", lambda m, F, x: x[1], R(4, 5)),
    case("int-neg", lambda m, F, x: x[-1], R(4, 5)),
    case("int-int", lambda m, F, x: x[1, 2], R(4, 5)),
    case("slice", lambda m, F, x: x[1:3], R(4, 5)),
    case("slice-step", lambda m, F, x: x[::2], R(4, 5)),
    case("slice-neg", lambda m, F, x: x[-3:-1], R(4, 5)),
    case("slice-col", lambda m, F, x: x[:, 1], R(4, 5)),
    case("slice-2d", lambda m, F, x: x[1:, ::2], R(4, 5)),
    case("ellipsis", lambda m, F, x: x[..., 0], R(2, 3, 4)),
    case("ellipsis-mid", lambda m, F, x: x[1, ..., 1:3], R(2, 3, 4)),
    case("none", lambda m, F, x: x[None], R(4, 5)),
    case("none-mid", lambda m, F, x: x[:, None, 1:], R(4, 5)),
    case("list", lambda m, F, x: x[[0, 2]], R(4, 5)),
    case("list-dup", lambda m, F, x: x[[0, 2, 0, 0]], R(4, 5)),
    case("int-list", lambda m, F, x: x[1, [0, 2, 4]], R(4, 5)),
    case("slice-list", lambda m, F, x: x[:, [4, 0, 4]], R(4, 5)),
    case("tensor-idx-dup", lambda m, F, x, i: x[i], R(4, 5), Idx((6,), 4)),
    case("tensor-idx-2d", lambda m, F, x, i: x[i], R(4, 5), Idx((2, 3), 4)),
    case("tensor-idx-pair", lambda m, F, x, i, j: x[i, j], R(4, 5), Idx((6,), 4), Idx((6,), 5)),
    case("tensor-idx-cols", lambda m, F, x, i: x[:, i], R(4, 5), Idx((7,), 5)),
    case("tensor-idx-1d", lambda m, F, x, i: x[i], R(5), Idx((8,), 5)),
    case("mask", lambda m, F, x, k: x[k], R(4, 5), Mask(4, 5)),
    case("mask-rows", lambda m, F, x, k: x[k], R(4, 5), Mask(4)),
    case("mask-from-cmp", lambda m, F, x: x[x > 0], NZ(3, 4)),
    case("index-then-op", lambda m, F, x: (x[0] * x[1]).sum() + x[:, 2:].exp().mean(), R(4, 5)),
]


@pytest.mark.parametrize("name, fn, specs", INDEXING)
def test_indexing(name, fn, specs):
    compare_with_torch(f"index-{name}", fn, specs)


# ------------------------------------------------------------------------------ where

WHERE = [
    case("same-shape", lambda m, F, c, x, y: m.where(c, x, y), Mask(3, 4), R(3, 4), R(3, 4)),
    case("broadcast", lambda m, F, c, x, y: m.where(c, x, y), Mask(3, 1), R(1, 4), R(3, 4)),
    case("broadcast-3d", lambda m, F, c, x, y: m.where(c, x, y), Mask(4), R(2, 3, 1), R(3, 4)),
    case("scalar-other", lambda m, F, c, x, y: m.where(c, x, y), Mask(3, 4), R(3, 4), R()),
    case("python-scalar-other", lambda m, F, c, x: m.where(c, x, 0.0), Mask(3, 4), R(3, 4)),
    case("from-cmp", lambda m, F, x, y: m.where(x > 0, x, y * 2), R(3, 4), R(3, 4)),
    case(
        "x-nograd", lambda m, F, c, x, y: m.where(c, x, y), Mask(3, 4), R(3, 4, grad=False), R(3, 4)
    ),
    case("method", lambda m, F, c, x, y: x.where(c, y), Mask(3, 4), R(3, 4), R(1, 4)),
]


@pytest.mark.parametrize("name, fn, specs", WHERE)
def test_where(name, fn, specs):
    compare_with_torch(f"where-{name}", fn, specs)


# ------------------------------------------------------------------------------ nn.functional

REDUCTIONS = ["mean", "sum", "none"]


def _loss_cases():
    cs = []
    for r in REDUCTIONS:
        cs += [
            case(
                f"mse-{r}",
                lambda m, F, x, y, r=r: F.mse_loss(x, y, reduction=r),
                R(4, 3),
                R(4, 3, grad=False),
            ),
            case(
                f"mse-target-grad-{r}",
                lambda m, F, x, y, r=r: F.mse_loss(x, y, reduction=r),
                R(4, 3),
                R(4, 3),
            ),
            case(f"mse-1d-{r}", lambda m, F, x, y, r=r: F.mse_loss(x, y, reduction=r), R(5), R(5)),
            case(
                f"l1-{r}",
                lambda m, F, x, y, r=r: F.l1_loss(x, y, reduction=r),
                R(4, 3),
                R(4, 3, grad=False),
            ),
            case(
                f"l1-target-grad-{r}",
                lambda m, F, x, y, r=r: F.l1_loss(x, y, reduction=r),
                R(2, 3, 2),
                R(2, 3, 2),
            ),
            case(
                f"cross_entropy-{r}",
                lambda m, F, x, t, r=r: F.cross_entropy(x, t, reduction=r),
                R(5, 4),
                Idx((5,), 4),
            ),
            case(
                f"cross_entropy-large-logits-{r}",
                lambda m, F, x, t, r=r: F.cross_entropy(x * 300.0, t, reduction=r),
                R(6, 3),
                Idx((6,), 3),
            ),
            case(
                f"bce-{r}",
                lambda m, F, p, t, r=r: F.binary_cross_entropy(p, t, reduction=r),
                Prob(4, 3),
                Prob(4, 3, grad=False),
            ),
            case(
                f"bce-1d-{r}",
                lambda m, F, p, t, r=r: F.binary_cross_entropy(p, t, reduction=r),
                Prob(6),
                Prob(6, grad=False),
            ),
        ]
    cs += [
        case("mse-default", lambda m, F, x, y: F.mse_loss(x, y), R(4, 3), R(4, 3)),
        case("l1-default", lambda m, F, x, y: F.l1_loss(x, y), R(4, 3), R(4, 3)),
        case(
            "cross_entropy-default", lambda m, F, x, t: F.cross_entropy(x, t), R(5, 4), Idx((5,), 4)
        ),
        case(
            "bce-default",
            lambda m, F, p, t: F.binary_cross_entropy(p, t),
            Prob(4, 3),
            Prob(4, 3, grad=False),
        ),
        case(
            "bce-of-sigmoid",
            lambda m, F, z, t: F.binary_cross_entropy(m.sigmoid(z), t),
            R(5),
            Prob(5, grad=False),
        ),
        case("linear", lambda m, F, x, w, b: F.linear(x, w, b), R(5, 3), R(4, 3), R(4)),
        case("linear-no-bias", lambda m, F, x, w: F.linear(x, w), R(5, 3), R(4, 3)),
        case(
            "linear-bias-kw", lambda m, F, x, w, b: F.linear(x, w, bias=b), R(5, 3), R(4, 3), R(4)
        ),
        case("linear-3d", lambda m, F, x, w, b: F.linear(x, w, b), R(2, 5, 3), R(4, 3), R(4)),
        case("linear-1d", lambda m, F, x, w, b: F.linear(x, w, b), R(3), R(4, 3), R(4)),
        case(
            "linear-x-nograd",
            lambda m, F, x, w, b: F.linear(x, w, b),
            R(5, 3, grad=False),
            R(4, 3),
            R(4),
        ),
        case(
            "mlp",
            lambda m, F, x, w1, b1, w2, t: F.cross_entropy(
                F.linear(F.relu(F.linear(x, w1, b1)), w2), t
            ),
            R(6, 3, grad=False),
            R(5, 3),
            R(5),
            R(4, 5),
            Idx((6,), 4),
        ),
    ]
    return cs


@pytest.mark.parametrize("name, fn, specs", _loss_cases())
def test_functional(name, fn, specs):
    compare_with_torch(f"F-{name}", fn, specs)


# ------------------------------------------------------------------------------ grad accumulation


def test_grad_accumulates_over_two_backward_calls():
    def two_passes(m, F, x, y):
        (x * y).sum().backward()
        return (x.exp() * 2.0).sum(0)

    compare_with_torch("accumulate", two_passes, [R(3, 4), R(3, 4)])


def test_leaf_has_no_grad_fn_and_grad_starts_none():
    _, (t_in, t_out), (e_in, e_out) = run_both("leaf", lambda m, F, x: x, [R(3)])
    assert e_out.grad_fn is None and t_out.grad_fn is None
    assert e_out.grad is None and t_out.grad is None
    assert e_out.is_leaf and t_out.is_leaf
    assert e_out.requires_grad and t_out.requires_grad


# ------------------------------------------------------------------------------ grad_fn names

GRAD_FN_NAMES = [
    case("MulBackward0", lambda m, F, x, y: x * y, R(3, 4), R(3, 4)),
    case("AddBackward0", lambda m, F, x, y: x + y, R(3, 4), R(3, 4)),
    case("SubBackward0", lambda m, F, x, y: x - y, R(3, 4), R(3, 4)),
    case("DivBackward0", lambda m, F, x, y: x / y, R(3, 4), NZ(3, 4)),
    case("PowBackward0", lambda m, F, x: x**2, R(3, 4)),
    case("NegBackward0", lambda m, F, x: -x, R(3, 4)),
    case("ExpBackward0", lambda m, F, x: m.exp(x), R(3, 4)),
    case("LogBackward0", lambda m, F, x: m.log(x), P(3, 4)),
    case("TanhBackward0", lambda m, F, x: m.tanh(x), R(3, 4)),
    case("SigmoidBackward0", lambda m, F, x: m.sigmoid(x), R(3, 4)),
    case("ReluBackward0", lambda m, F, x: m.relu(x), NZ(3, 4)),
    case("SumBackward0", lambda m, F, x: x.sum(), R(3, 4)),
    case("SumBackward1", lambda m, F, x: x.sum(1), R(3, 4)),
    case("MeanBackward0", lambda m, F, x: x.mean(), R(3, 4)),
    case("MeanBackward1", lambda m, F, x: x.mean(dim=0), R(3, 4)),
    case("MmBackward0", lambda m, F, x, y: x @ y, R(3, 4), R(4, 5)),
    case("TransposeBackward0", lambda m, F, x: x.transpose(0, 1), R(3, 4)),
    case("PermuteBackward0", lambda m, F, x: x.permute(2, 0, 1), R(2, 3, 4)),
    case("UnsqueezeBackward0", lambda m, F, x: x.unsqueeze(0), R(3, 4)),
    case("ExpandBackward0", lambda m, F, x: x.expand(3, 4), R(3, 1)),
    case("CatBackward0", lambda m, F, x, y: m.cat([x, y]), R(3, 4), R(2, 4)),
    case("StackBackward0", lambda m, F, x, y: m.stack([x, y]), R(3, 4), R(3, 4)),
    case("SoftmaxBackward0", lambda m, F, x: m.softmax(x, 1), R(3, 4)),
    case("LogSoftmaxBackward0", lambda m, F, x: m.log_softmax(x, 1), R(3, 4)),
    case("WhereBackward0", lambda m, F, x, y: m.where(x > 0, x, y), R(3, 4), R(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", GRAD_FN_NAMES)
def test_grad_fn_name(name, fn, specs):
    _, (_, t_out), (_, e_out) = run_both(f"gfn-{name}", fn, specs)
    assert grad_fn_name(t_out) == name  # the table itself is right
    assert grad_fn_name(e_out) == name


# ------------------------------------------------------------------------------ dtypes

DTYPES = [
    ("python-float-default", lambda m: m.tensor(1.5), "float32"),
    ("python-float-list", lambda m: m.tensor([1.0, 2.0]), "float32"),
    ("python-int", lambda m: m.tensor([1, 2]), "int64"),
    ("python-bool", lambda m: m.tensor([True, False]), "bool"),
    ("numpy-float64-kept", lambda m: m.tensor(np.ones(3)), "float64"),
    ("numpy-float32-kept", lambda m: m.tensor(np.ones(3, dtype=np.float32)), "float32"),
    ("explicit-dtype", lambda m: m.tensor([1, 2], dtype=m.float64), "float64"),
    ("f32-mul-python-float", lambda m: m.tensor([1.0, 2.0]) * 2.5, "float32"),
    ("f32-radd-python-float", lambda m: 2.5 + m.tensor([1.0, 2.0]), "float32"),
    ("f64-mul-python-float", lambda m: m.tensor([1.0], dtype=m.float64) * 2.5, "float64"),
    ("i64-div-i64", lambda m: m.tensor([3, 4]) / m.tensor([2, 2]), "float32"),
    ("i64-add-i64", lambda m: m.tensor([3, 4]) + m.tensor([2, 2]), "int64"),
    ("i64-mul-python-int", lambda m: m.tensor([3, 4]) * 2, "int64"),
    ("i64-add-python-float", lambda m: m.tensor([3, 4]) + 1.5, "float32"),
    ("f32-add-f64", lambda m: m.tensor([1.0]) + m.tensor([2.0], dtype=m.float64), "float64"),
    ("f64-add-f32", lambda m: m.tensor([1.0], dtype=m.float64) + m.tensor([2.0]), "float64"),
    ("f32-matmul-f32", lambda m: m.tensor([[1.0, 2.0]]) @ m.tensor([[1.0], [2.0]]), "float32"),
    ("comparison-is-bool", lambda m: m.tensor([1.0, 2.0]) > 1.5, "bool"),
    ("f32-exp", lambda m: m.exp(m.tensor([1.0, 2.0])), "float32"),
    ("f32-sum", lambda m: m.tensor([[1.0, 2.0]]).sum(0), "float32"),
    ("f32-mean", lambda m: m.tensor([[1.0, 2.0]]).mean(), "float32"),
    ("max-indices-int64", lambda m: m.tensor([[1.0, 2.0]]).max(1).indices, "int64"),
    ("f32-softmax", lambda m: m.softmax(m.tensor([1.0, 2.0]), 0), "float32"),
    ("f32-add-f64-0d", lambda m: m.tensor([1.0]) + m.tensor(2.0, dtype=m.float64), "float32"),
    ("f64-0d-mul-f32", lambda m: m.tensor(2.0, dtype=m.float64) * m.tensor([1.0]), "float32"),
    ("i64-add-f64-0d", lambda m: m.tensor([1]) + m.tensor(2.0, dtype=m.float64), "float64"),
    ("i64-mul-f32", lambda m: m.tensor([3, 4]) * m.tensor([1.5, 2.0]), "float32"),
    ("i64-pow-int", lambda m: m.tensor([3, 4]) ** 2, "int64"),
    ("i64-pow-float", lambda m: m.tensor([3, 4]) ** 0.5, "float32"),
    ("i64-sum", lambda m: m.tensor([3, 4]).sum(), "int64"),
    ("bool-sum", lambda m: m.tensor([True, False, True]).sum(), "int64"),
    ("bool-mul-f32", lambda m: m.tensor([True, False]) * m.tensor([1.5, 2.0]), "float32"),
    ("i64-div-python-int", lambda m: m.tensor([3, 4]) / 2, "float32"),
    ("i64-mul-python-float", lambda m: m.tensor([3, 4]) * 2.5, "float32"),
    ("i64-exp", lambda m: m.exp(m.tensor([1, 2])), "float32"),
    ("i64-sqrt", lambda m: m.sqrt(m.tensor([1, 4])), "float32"),
    ("i64-sigmoid", lambda m: m.sigmoid(m.tensor([1, 2])), "float32"),
    ("i64-abs", lambda m: m.abs(m.tensor([-1, 2])), "int64"),
    ("i64-neg", lambda m: -m.tensor([-1, 2]), "int64"),
    ("i64-max", lambda m: m.tensor([[1, 5], [3, 2]]).max(), "int64"),
    ("i64-max-dim-values", lambda m: m.tensor([[1, 5], [3, 2]]).max(0).values, "int64"),
    ("i64-cmp-float", lambda m: m.tensor([1, 2]) > 1.5, "bool"),
    (
        "where-i64-f32",
        lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]), m.tensor([0.5, 1.5])),
        "float32",
    ),
    (
        "cat-f32-f64",
        lambda m: m.cat([m.tensor([1.0]), m.tensor([2.0], dtype=m.float64)]),
        "float64",
    ),
    ("f64-0d-python-scalar", lambda m: m.tensor(2.0, dtype=m.float64) * 3, "float64"),
]


@pytest.mark.parametrize("fn, expected", [pytest.param(f, e, id=n) for n, f, e in DTYPES])
def test_dtype(fn, expected):
    t = fn(torch)
    assert t.dtype == getattr(torch, expected)
    e = fn(eg)
    assert e.dtype == getattr(eg, expected)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_dtype_constants_distinct():
    dts = [eg.float32, eg.float64, eg.int64, eg.bool]
    assert len({repr(d) for d in dts}) == 4
    assert eg.tensor([1.0], dtype=eg.float64).dtype != eg.float32


# ------------------------------------------------------------------------------ error messages


def ones(m, *shape, requires_grad=False):
    return m.tensor(np.ones(shape), requires_grad=requires_grad)


ERRORS = [
    (
        "broadcast-mismatch",
        lambda m: ones(m, 2, 3) + ones(m, 2, 4),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
    ),
    (
        "broadcast-mismatch-mul",
        lambda m: ones(m, 3, 2) * ones(m, 4, 2),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    ),
    (
        "matmul-mismatch",
        lambda m: ones(m, 3, 4) @ ones(m, 5, 2),
        "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x2)",
    ),
    (
        "sum-dim-out-of-range",
        lambda m: ones(m, 2, 3).sum(2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "sum-neg-dim-out-of-range",
        lambda m: ones(m, 2, 3).sum(-3),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)",
    ),
    (
        "softmax-dim-out-of-range",
        lambda m: m.softmax(ones(m, 2, 3), 2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "unsqueeze-dim-out-of-range",
        lambda m: ones(m, 2, 3).unsqueeze(3),
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)",
    ),
    (
        "reshape-invalid",
        lambda m: ones(m, 6).reshape(4),
        "shape '[4]' is invalid for input of size 6",
    ),
    (
        "reshape-invalid-2d",
        lambda m: ones(m, 2, 3).reshape(4, -1),
        "shape '[4, -1]' is invalid for input of size 6",
    ),
    (
        "reshape-two-minus1",
        lambda m: ones(m, 2, 3).reshape(-1, -1),
        "only one dimension can be inferred",
    ),
    (
        "index-out-of-bounds",
        lambda m: ones(m, 3)[5],
        "index 5 is out of bounds for dimension 0 with size 3",
    ),
    (
        "too-many-indices",
        lambda m: ones(m, 3, 4)[0, 0, 0],
        "too many indices for tensor of dimension 2",
    ),
    (
        "cat-size-mismatch",
        lambda m: m.cat([ones(m, 2, 3), ones(m, 2, 4)]),
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
        "for tensor number 1 in the list.",
    ),
    (
        "stack-size-mismatch",
        lambda m: m.stack([ones(m, 2, 3), ones(m, 2, 4)]),
        "stack expects each tensor to be equal size, "
        "but got [2, 3] at entry 0 and [2, 4] at entry 1",
    ),
    (
        "expand-mismatch",
        lambda m: ones(m, 3, 4).expand(2, 4),
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
        "dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 4]",
    ),
    (
        "backward-nonscalar",
        lambda m: ones(m, 3, 4, requires_grad=True).exp().backward(),
        "grad can be implicitly created only for scalar outputs",
    ),
    (
        "backward-no-grad",
        lambda m: ones(m, 3, 4).sum().backward(),
        "element 0 of tensors does not require grad and does not have a grad_fn",
    ),
    (
        "add-str",
        lambda m: ones(m, 3) + "a",
        "unsupported operand type(s) for +: 'Tensor' and 'str'",
    ),
]


@pytest.mark.parametrize("fn, expected", [pytest.param(f, e, id=n) for n, f, e in ERRORS])
def test_error_message(fn, expected):
    with pytest.raises(Exception, match=re.escape(expected)) as t_exc:
        fn(torch)
    with pytest.raises(Exception) as e_exc:
        fn(eg)
    assert isinstance(e_exc.value, t_exc.type), (
        f"engine raised {type(e_exc.value).__name__}, torch raises {t_exc.type.__name__}"
    )
    assert expected in str(e_exc.value)


# ------------------------------------------------------------------- property: broadcasting


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    op=st.sampled_from(["add", "sub", "mul", "div", "pow"]),
)
def test_binary_broadcasting_property(shapes, op):
    fn, sx, sy = BINARY[op]
    a, b = shapes.input_shapes
    compare_with_torch(f"prop-{op}-{a}-{b}", fn, [sx(*a), sy(*b)])


# ------------------------------------------------------------------------------ float32 inputs
# Forward dtype and every grad's dtype must follow torch (float32 leaves get float32 grads,
# also when the op promotes to float64).


def _f32_cases():
    cs = []
    for op, (fn, spec) in UNARY.items():
        cs.append(case(f"unary-{op}", fn, f32(spec(3, 4))))
    for op, (fn, sx, sy) in BINARY.items():
        cs.append(case(f"binary-{op}", fn, f32(sx(3, 1)), f32(sy(1, 4))))
        cs.append(case(f"binary-{op}-with-f64", fn, f32(sx(3, 1)), sy(1, 4)))
        cs.append(case(f"binary-{op}-with-f64-0d", fn, f32(sx(3, 4)), sy()))
    cs += [
        case("sum", lambda m, F, x: x.sum(), f32(R(3, 4))),
        case("sum-dim", lambda m, F, x: x.sum(dim=(0, 2), keepdim=True), f32(R(2, 3, 4))),
        case("mean", lambda m, F, x: x.mean(), f32(R(3, 4))),
        case("mean-dim", lambda m, F, x: x.mean(-1), f32(R(2, 3, 4))),
        case("var", lambda m, F, x: x.var(1), f32(R(3, 4))),
        case("std", lambda m, F, x: x.std(), f32(R(3, 4))),
        case("max-dim", lambda m, F, x: x.max(1).values, f32(D(3, 4))),
        case("amax", lambda m, F, x: x.amax(0), f32(D(3, 4))),
        case("softmax", lambda m, F, x: m.softmax(x, -1), f32(R(3, 4))),
        case("log_softmax", lambda m, F, x: m.log_softmax(x, 0), f32(R(3, 4))),
        case("matmul", lambda m, F, x, y: x @ y, f32(R(2, 3, 4)), f32(R(4, 5))),
        case("matmul-1d", lambda m, F, x, y: x @ y, f32(R(4)), f32(R(4))),
        case("cat", lambda m, F, x, y: m.cat([x, y], 1), f32(R(2, 3)), f32(R(2, 1))),
        case("stack", lambda m, F, x, y: m.stack([x, y]), f32(R(2, 3)), f32(R(2, 3))),
        case("index", lambda m, F, x, i: x[i], f32(R(4, 5)), Idx((6,), 4)),
        case("mask", lambda m, F, x, k: x[k], f32(R(4, 5)), Mask(4, 5)),
        case(
            "where", lambda m, F, c, x, y: m.where(c, x, y), Mask(3, 1), f32(R(1, 4)), f32(R(3, 4))
        ),
        case("where-scalar", lambda m, F, c, x: m.where(c, x, 0.0), Mask(3, 4), f32(R(3, 4))),
        case("expand", lambda m, F, x: x.expand(2, 3, 4), f32(R(3, 1))),
        case("mse", lambda m, F, x, y: F.mse_loss(x, y), f32(R(4, 3)), f32(R(4, 3))),
        case("l1", lambda m, F, x, y: F.l1_loss(x, y), f32(R(4, 3)), f32(R(4, 3))),
        case("cross_entropy", lambda m, F, x, t: F.cross_entropy(x, t), f32(R(5, 4)), Idx((5,), 4)),
        case(
            "bce",
            lambda m, F, p, t: F.binary_cross_entropy(p, t),
            f32(Prob(4, 3)),
            f32(Prob(4, 3, grad=False)),
        ),
        case(
            "linear",
            lambda m, F, x, w, b: F.linear(x, w, b),
            f32(R(5, 3)),
            f32(R(4, 3)),
            f32(R(4)),
        ),
    ]
    return cs


@pytest.mark.parametrize("name, fn, specs", _f32_cases())
def test_float32(name, fn, specs):
    compare_with_torch(f"f32-{name}", fn, specs)


# ------------------------------------------------------------------------------ graph structure

GRAPH = [
    case("diamond", lambda m, F, x: (lambda y: y * y.sum(0) + y.T.T)(m.tanh(x)), R(3, 4)),
    case(
        "diamond-uneven-depth",
        lambda m, F, x, w: (lambda h: (h @ w).exp().sum(-1, keepdim=True) * h + h)(m.sigmoid(x)),
        R(3, 4),
        R(4, 4),
    ),
    case("reuse-both-operands", lambda m, F, x: x @ x, R(4, 4)),
    case("reuse-in-cat", lambda m, F, x: m.cat([x, x * 2, x[:1]]), R(3, 4)),
    case("reuse-in-where", lambda m, F, x: m.where(x > 0, x, -x * 0.5) * x, NZ(3, 4)),
    case(
        "all-inputs-nograd",
        lambda m, F, x, y: x * y + 1.0,
        R(3, 4, grad=False),
        R(3, 4, grad=False),
    ),
    case("one-input-unused-in-graph", lambda m, F, x, y: x.exp(), R(3, 4), R(3, 4)),
    case("detach-whole", lambda m, F, x: x.exp().detach() * 2.0, R(3, 4)),
    case("long-chain", lambda m, F, x: _chain(x, 30), R(3)),
]


def _chain(x, n):
    for _ in range(n):
        x = x * 0.9 + 0.1 * x.tanh()
    return x


@pytest.mark.parametrize("name, fn, specs", GRAPH)
def test_graph(name, fn, specs):
    compare_with_torch(f"graph-{name}", fn, specs)


def test_backward_without_gradient_on_scalar():
    def f(m, F, x, y):
        (x * y).sum().backward()  # implicit gradient 1.0

    compare_with_torch("implicit-backward", f, [R(3, 4), R(3, 4)])


def test_backward_without_gradient_on_loss():
    def f(m, F, x, w, t):
        F.cross_entropy(x @ w, t).backward()

    compare_with_torch("implicit-backward-loss", f, [R(5, 3), R(3, 4), Idx((5,), 4)])


EXTRA_INDEXING = [
    case("list-negative", lambda m, F, x: x[[-1, 0, -1]], R(4, 5)),
    case("slice-past-end", lambda m, F, x: x[2:10], R(4, 5)),
    case("slice-empty", lambda m, F, x: x[3:1], R(4, 5)),
    case("none-ellipsis-none", lambda m, F, x: x[None, ..., None], R(2, 3)),
    case("0d-int-tensor", lambda m, F, x, i: x[i], R(4, 5), Idx((), 4)),
    case("3d-mixed", lambda m, F, x, i: x[1:, i, ::2], R(3, 4, 5), Idx((3,), 4)),
    case("scalar-from-1d", lambda m, F, x: x[2] * x[0], R(5)),
]


@pytest.mark.parametrize("name, fn, specs", EXTRA_INDEXING)
def test_indexing_extra(name, fn, specs):
    compare_with_torch(f"index2-{name}", fn, specs)


# ------------------------------------------------------------------- subgradient conventions
# PyTorch's choices at non-differentiable points (kept apart from the sweeps above, which avoid
# these points on purpose): relu'(0) = 0, abs'(0) = 0, clamp passes gradient at the bound,
# max()/amax split the gradient evenly between ties, maximum(x, x) gives each side half.

TIES = [0.0, 1.0, -1.0, 0.5, 0.5, 2.0, 2.0]

CONVENTIONS = [
    case("relu-at-0", lambda m, F, x: m.relu(x), Fixed(TIES)),
    case("abs-at-0", lambda m, F, x: m.abs(x), Fixed(TIES)),
    case("clamp-at-bounds", lambda m, F, x: m.clamp(x, min=0.0, max=0.5), Fixed(TIES)),
    case("max-all-ties", lambda m, F, x: x.max(), Fixed(TIES)),
    case("min-all-ties", lambda m, F, x: x.min(), Fixed([1.0, -3.0, -3.0, 0.0])),
    case("amax-ties", lambda m, F, x: x.amax(), Fixed(TIES)),
    case("amax-dim-ties", lambda m, F, x: x.amax(1), Fixed([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])),
    case("maximum-equal", lambda m, F, x, y: m.maximum(x, y), Fixed([1.0, 2.0]), Fixed([1.0, 3.0])),
    case("minimum-equal", lambda m, F, x, y: m.minimum(x, y), Fixed([1.0, 2.0]), Fixed([1.0, 3.0])),
]


@pytest.mark.parametrize("name, fn, specs", CONVENTIONS)
def test_subgradient_convention(name, fn, specs):
    compare_with_torch(f"conv-{name}", fn, specs)


# ------------------------------------------------------------------------------ argument forms

ARG_FORMS = [
    case("m.max-binary", lambda m, F, x, y: m.max(x, y), R(3, 1), R(1, 4)),
    case("m.min-binary", lambda m, F, x, y: m.min(x, y), R(3, 4), R(4)),
    case("sum-list-dims", lambda m, F, x: x.sum(dim=[0, 2]), R(2, 3, 4)),
    case("mean-list-dims", lambda m, F, x: m.mean(x, [1, -1], keepdim=True), R(2, 3, 4)),
    case("reshape-list", lambda m, F, x: x.reshape([2, 12]), R(2, 3, 4)),
    case("view-tuple", lambda m, F, x: x.view((6, 4)), R(2, 3, 4)),
    case("permute-list", lambda m, F, x: x.permute([2, 0, 1]), R(2, 3, 4)),
    case("expand-list", lambda m, F, x: x.expand([2, 3, 4]), R(3, 1)),
    case("squeeze-tuple", lambda m, F, x: x.squeeze((0, 2)), R(1, 3, 1, 4)),
    case("unsqueeze-minus3", lambda m, F, x: x.unsqueeze(-3), R(3, 4)),
    case("cat-mixed-dtypes", lambda m, F, x, y: m.cat([x, y]), f32(R(2, 3)), R(1, 3)),
    case("stack-mixed-dtypes", lambda m, F, x, y: m.stack([x, y], 1), R(2, 3), f32(R(2, 3))),
    case(
        "where-mixed-dtypes",
        lambda m, F, c, x, y: m.where(c, x, y),
        Mask(3, 4),
        f32(R(3, 4)),
        R(3, 4),
    ),
    case("var-keepdim-positional", lambda m, F, x: x.var(1, keepdim=True), R(3, 4)),
    case("softmax-kw-dim", lambda m, F, x: m.softmax(x, dim=0), R(3, 4)),
    case("clamp-tensor-kw-only-max", lambda m, F, x: x.clamp(max=-0.5), ClampSafe(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", ARG_FORMS)
def test_argument_forms(name, fn, specs):
    compare_with_torch(f"args-{name}", fn, specs)
