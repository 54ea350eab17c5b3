"""The pointwise math ops (engine/ops/arithmetic.py, division.py, powers.py, exp_log.py,
trig.py, erf.py, rounding.py, compare.py, bitwise.py, select.py) against torch:
values, dtypes, every input's .grad, grad_fn names, errors, gradcheck and double backward."""

import math

import numpy as np
import pytest
import torch
from _torch_compare import (
    NZ,
    Fixed,
    Idx,
    Mask,
    P,
    Prob,
    R,
    assert_same_array,
    case,
    compare_with_torch,
    eg,
    f32,
    grad_fn_name,
    make_tensor,
    run_both,
    sample,
    seed_for,
    shape_id,
)

SHAPES = [(), (5,), (2, 3), (0, 3)]


def check(name, fn, specs):
    compare_with_torch(name, fn, specs)
    _, (_, t_out), (_, e_out) = run_both(name, fn, specs)
    if t_out is not None and hasattr(t_out, "grad_fn"):
        assert grad_fn_name(e_out) == grad_fn_name(t_out), "grad_fn name"


# ------------------------------------------------------------------------------ unary
def Sym(*shape, grad=True):  # values in (-0.9, 0.9): the domain of asin, atanh, erfinv
    return Prob(*shape, grad=grad)


UNARY = {
    "tan": (lambda m, F, x: m.tan(x), R),
    "asin": (lambda m, F, x: m.asin(x * 1.8 - 0.9), Sym),
    "acos": (lambda m, F, x: m.acos(x * 1.8 - 0.9), Sym),
    "arcsin": (lambda m, F, x: m.arcsin(x), Sym),
    "atan": (lambda m, F, x: m.atan(x * 3), R),
    "sinh": (lambda m, F, x: m.sinh(x), R),
    "cosh": (lambda m, F, x: x.cosh(), R),
    "asinh": (lambda m, F, x: m.asinh(x * 3), R),
    "acosh": (lambda m, F, x: m.acosh(x + 1.0), P),
    "atanh": (lambda m, F, x: m.atanh(x * 1.8 - 0.9), Sym),
    "erf": (lambda m, F, x: m.erf(x * 2), R),
    "erf_method": (lambda m, F, x: x.erf(), R),
    "erfc": (lambda m, F, x: m.erfc(x * 2), R),
    "erfinv": (lambda m, F, x: m.erfinv(x * 1.8 - 0.9), Sym),
    "exp2": (lambda m, F, x: m.exp2(x), R),
    "expm1": (lambda m, F, x: x.expm1(), R),
    "log2": (lambda m, F, x: m.log2(x), P),
    "log10": (lambda m, F, x: x.log10(), P),
    "log1p": (lambda m, F, x: m.log1p(x), P),
    "rsqrt": (lambda m, F, x: m.rsqrt(x), P),
    "floor": (lambda m, F, x: m.floor(x * 3), R),
    "ceil": (lambda m, F, x: x.ceil(), R),
    "round": (lambda m, F, x: m.round(x * 3), R),
    "round_decimals": (lambda m, F, x: m.round(x * 30, decimals=2), R),
    "round_decimals_neg": (lambda m, F, x: x.round(decimals=-1), R),
    "trunc": (lambda m, F, x: m.trunc(x * 3), R),
    "fix": (lambda m, F, x: m.fix(x * 3), R),
    "frac": (lambda m, F, x: m.frac(x * 3), R),
    "sign": (lambda m, F, x: m.sign(x), R),
    "deg2rad": (lambda m, F, x: m.deg2rad(x), R),
    "rad2deg": (lambda m, F, x: x.rad2deg(), R),
    "sinc": (lambda m, F, x: m.sinc(x), R),
    "logit": (lambda m, F, x: m.logit(x), Prob),
    "logit_eps": (lambda m, F, x: m.logit(x, eps=0.2), Prob),
    "square": (lambda m, F, x: m.square(x), R),
    "nan_to_num": (lambda m, F, x: m.nan_to_num(x), R),
}


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, shape):
    fn, spec = UNARY[name]
    check(f"{name}-{shape}", fn, (spec(*shape),))


@pytest.mark.parametrize("name", ["erf", "erfinv", "tan", "round_decimals", "logit", "sinc"])
def test_unary_float32(name):
    fn, spec = UNARY[name]
    check(f"{name}-f32", fn, (f32(spec(3, 4)),))


SPECIAL = [
    case("erf_wide", lambda m, F, x: m.erf(x), Fixed(np.linspace(-7, 7, 57))),
    case("erfc_wide", lambda m, F, x: m.erfc(x), Fixed(np.linspace(-7, 27, 69))),
    case(
        "erfc_tiny",
        lambda m, F, x: m.erfc(x),
        Fixed([1e-300, 1e-20, 0.0, -0.0, 1.4999, 1.5, 1.5001, 10.0]),
    ),
    case(
        "erfinv_tails",
        lambda m, F, x: m.erfinv(x),
        Fixed([0.0, 1e-300, 0.5, -0.5, 0.9999, 1 - 1e-12, -(1 - 1e-15), 0.999999]),
    ),
    case("erfinv_edges", lambda m, F, x: m.erfinv(x), Fixed([1.0, -1.0, 1.5, -2.0], grad=False)),
    case(
        "nan_to_num_nonfinite",
        lambda m, F, x: m.nan_to_num(x),
        Fixed([math.nan, math.inf, -math.inf, 1.5]),
    ),
    case(
        "nan_to_num_args",
        lambda m, F, x: x.nan_to_num(nan=2.0, posinf=3, neginf=-4.5),
        Fixed([math.nan, math.inf, -math.inf, 1.5]),
    ),
    case(
        "nan_to_num_f32",
        lambda m, F, x: m.nan_to_num(x.float()),
        Fixed([math.nan, math.inf, -math.inf, 1.5]),
    ),
    case(
        "round_half_even",
        lambda m, F, x: m.round(x),
        Fixed([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999]),
    ),
    case(
        "round_decimals_half_even",
        lambda m, F, x: m.round(x, decimals=1),
        Fixed([0.25, 0.35, -0.45, 12.345, 1e-8]),
    ),
    case("round_decimals_0", lambda m, F, x: m.round(x, decimals=0), Fixed([0.5, 1.5, -2.5])),
    case(
        "sign_specials",
        lambda m, F, x: m.sign(x),
        Fixed([math.nan, -0.0, 0.0, math.inf, -2.0]),
    ),
    case("sinc_zero", lambda m, F, x: m.sinc(x), Fixed([0.0, 0.5, -1.0, 2.5])),
    case("frac_inf", lambda m, F, x: m.frac(x), Fixed([math.inf, -1.5, 2.25], grad=False)),
    case("rsqrt_edges", lambda m, F, x: m.rsqrt(x), Fixed([-1.0, 0.0, 4.0], grad=False)),
    case("logit_outside", lambda m, F, x: m.logit(x), Fixed([0.0, 1.0, 1.5, -0.5])),
    case("logit_eps_clip", lambda m, F, x: m.logit(x, 0.1), Fixed([0.0, 0.05, 0.5, 0.95, 1.0])),
    case(
        "isfinite",
        lambda m, F, x: m.isfinite(x),
        Fixed([math.nan, math.inf, -math.inf, 1.5], grad=False),
    ),
]


@pytest.mark.parametrize("name, fn, specs", SPECIAL)
def test_unary_special_values(name, fn, specs):
    check(name, fn, specs)


# ------------------------------------------------------------------------------ binary
BINARY = [
    case("atan2", lambda m, F, x, y: m.atan2(x, y), R(3, 1), R(1, 4)),
    case("atan2_method", lambda m, F, x, y: x.atan2(y), R(2, 3), R(3)),
    case("arctan2", lambda m, F, x, y: m.arctan2(x, y), R(4), R(4)),
    case("hypot", lambda m, F, x, y: m.hypot(x, y), R(3, 1), R(1, 4)),
    case("logaddexp", lambda m, F, x, y: m.logaddexp(x, y * 30), R(2, 3), R(3)),
    case("copysign", lambda m, F, x, y: m.copysign(x, y), R(3, 1), NZ(1, 4)),
    case("copysign_number", lambda m, F, x: m.copysign(x, -2), R(3, 4)),
    case("copysign_method", lambda m, F, x, y: x.copysign(y), R(3), NZ(2, 3)),
    case("fmod", lambda m, F, x, y: m.fmod(x * 5, y), R(3, 1), NZ(1, 4)),
    case("fmod_number", lambda m, F, x: m.fmod(x * 5, -1.5), R(3, 4)),
    case("remainder", lambda m, F, x, y: m.remainder(x * 5, y), R(3, 1), NZ(1, 4)),
    case("remainder_number", lambda m, F, x: m.remainder(x * 5, -1.5), R(3, 4)),
    case("remainder_rnumber", lambda m, F, x: m.remainder(2.5, x.detach()), NZ(3, 4)),
    case("mod_operator", lambda m, F, x, y: (x * 5) % y, R(3, 4), NZ(4)),
    case("mod_operator_number", lambda m, F, x: (x * 5) % 1.5, R(3, 4)),
    case("rmod_operator", lambda m, F, x: 2.5 % x.detach(), NZ(3, 4)),
    case(
        "floor_divide",
        lambda m, F, x, y: m.floor_divide(x * 5, y),
        R(3, 4, grad=False),
        NZ(4, grad=False),
    ),
    case("floordiv_op", lambda m, F, x: (x * 5) // -1.5, R(3, 4, grad=False)),
    case("rfloordiv_op", lambda m, F, x: 2.5 // x, NZ(3, 4, grad=False)),
    case("lerp_scalar", lambda m, F, x, y: m.lerp(x, y, 0.3), R(3, 1), R(1, 4)),
    case("lerp_scalar_far", lambda m, F, x, y: x.lerp(y, 0.8), R(3, 4), R(4)),
    case("lerp_tensor", lambda m, F, x, y, w: m.lerp(x, y, w), R(3, 1), R(1, 4), Prob(3, 4)),
    case("lerp_tensor_bcast_w", lambda m, F, x, y, w: m.lerp(x, y, w), R(3, 4), R(3, 4), R(4)),
    case("lerp_0d_weight", lambda m, F, x, y, w: m.lerp(x, y, w), R(2, 3), R(2, 3), Prob()),
    case("xlogy", lambda m, F, x, y: m.xlogy(x, y), R(3, 1), P(1, 4)),
    case("xlogy_rnumber", lambda m, F, y: m.xlogy(2.5, y), P(3, 4)),
    case("xlogy_number", lambda m, F, x: m.xlogy(x, 3), R(3, 4)),
    case(
        "xlogy_zeros",
        lambda m, F, x, y: m.xlogy(x, y),
        Fixed([0.0, 0.0, 0.0, 1.0, 2.0]),
        Fixed([0.0, -1.0, 2.0, 0.5, 3.0]),
    ),
    case("xlogy_zero_number", lambda m, F, x: m.xlogy(x, -1.0), Fixed([0.0, 0.0, 1.0])),
    case("float_power", lambda m, F, x, y: m.float_power(x, y), P(3, 1), R(1, 4)),
    case("float_power_f32", lambda m, F, x: m.float_power(x, 2), f32(R(3, 4))),
    case("float_power_rnumber", lambda m, F, y: m.float_power(2, y), f32(R(3, 4))),
    case("float_power_method", lambda m, F, x: x.float_power(1.5), P(3, 4)),
    case("true_divide", lambda m, F, x, y: m.true_divide(x, y), R(3, 1), NZ(4)),
    case("isclose", lambda m, F, x, y: m.isclose(x, x + y * 1e-5), R(3, 4), R(4)),
    case("logical_and", lambda m, F, x, y: m.logical_and(x > 0, y), R(3, 1), Mask(4)),
    case("logical_or", lambda m, F, x, y: m.logical_or(x, y), R(3, 1), Mask(4)),
    case("logical_xor", lambda m, F, x, y: x.logical_xor(y), Mask(2, 3), Mask(3)),
    case("shift_left", lambda m, F, x, y: m.bitwise_left_shift(x, y), Idx((3, 1), 9), Idx((4,), 5)),
    case("shift_right", lambda m, F, x, y: x.bitwise_right_shift(y), Idx((3, 4), 99), Idx((4,), 5)),
    case("lshift_op", lambda m, F, x: x << 3, Idx((3, 4), 99)),
    case("rshift_op", lambda m, F, x: x >> 2, Idx((3, 4), 99)),
    case("rlshift_op", lambda m, F, x: 1 << x, Idx((3, 4), 9)),
    case("rrshift_op", lambda m, F, x: 1000 >> x, Idx((3, 4), 9)),
]


@pytest.mark.parametrize("name, fn, specs", BINARY)
def test_binary(name, fn, specs):
    check(name, fn, specs)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("atan2", lambda m, x, y: m.atan2(x, y)),
        ("hypot", lambda m, x, y: m.hypot(x, y)),
        ("logaddexp", lambda m, x, y: m.logaddexp(x, y)),
        ("copysign", lambda m, x, y: m.copysign(x, y)),
        ("fmod", lambda m, x, y: m.fmod(x, y + 3)),
        ("remainder", lambda m, x, y: m.remainder(x, y + 3)),
        ("xlogy", lambda m, x, y: m.xlogy(x, y + 3)),
        ("lerp", lambda m, x, y: m.lerp(x, y, 0.25)),
    ],
)
@pytest.mark.parametrize("shapes", [((), ()), ((), (3,)), ((0, 3), (3,)), ((2, 0), (1,))])
def test_binary_0d_and_empty(name, fn, shapes):
    check(f"{name}-{shapes}", lambda m, F, x, y: fn(m, x, y), (R(*shapes[0]), R(*shapes[1])))


def test_mixed_float_precision_grads():
    # float32 tensor with a float64 0-d tensor: the result is float32, each grad keeps its dtype
    check("atan2-mixed", lambda m, F, x, y: m.atan2(x, y), (f32(R(3, 4)), R()))
    check("lerp-mixed", lambda m, F, x, y, w: m.lerp(x, y, w), (f32(R(3)), f32(R(3)), R()))


# ------------------------------------------------------------------------------ dtypes and errors
def _same(fn):
    """fn(lib) gives the same dtype and values in both libraries, or the same error."""
    try:
        t = fn(torch)
    except Exception as exc:  # noqa: BLE001 - whichever error torch raises, the engine must too
        with pytest.raises(type(exc)) as info:
            fn(eg)
        assert str(info.value) == str(exc)
        return
    e = fn(eg)
    if isinstance(t, torch.Tensor):
        assert_same_array(np.asarray(e.numpy()), t.numpy(), "result")
    else:
        assert e == t


def _ints(m):
    return m.tensor([7, -7, 5, 0, -3]), m.tensor([2, 3, -2, 5, -4])


def _floats(m):
    return m.tensor([1.5, -2.5, 3.0, -0.0, 0.25]), m.tensor([True, False, True, False, True])


UNARY_NAMES = [
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "rsqrt",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "sign",
    "sgn",
    "deg2rad",
    "rad2deg",
    "sinc",
    "logit",
    "square",
    "nan_to_num",
    "isfinite",
]


@pytest.mark.parametrize("kind", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", UNARY_NAMES)
def test_unary_integer_and_bool_inputs(name, kind):
    def fn(m):
        x = m.tensor([0, 1, 2, 3]).to(getattr(m, kind)) if kind != "bool" else m.tensor([0, 1]) > 0
        return getattr(m, name)(x)

    _same(fn)


DTYPE_CASES = {
    "round_decimals_int": lambda m: m.round(_ints(m)[0], decimals=1),
    "round_decimals_0_int": lambda m: m.round(_ints(m)[0], decimals=0),
    "round_decimals_float_arg": lambda m: m.round(_floats(m)[0], decimals=1.5),
    "round_f32_decimals": lambda m: m.round(m.tensor([0.125, 0.375, 0.135]), decimals=2),
    "round_neg_decimals": lambda m: m.round(m.tensor([1250.0, 1350.0, -49.0]), decimals=-2),
    "nan_to_num_bad_arg": lambda m: m.nan_to_num(_floats(m)[0], nan="a"),
    "logit_bad_eps": lambda m: m.logit(_floats(m)[0], eps="a"),
    "sin_not_tensor": lambda m: m.erf(1.0),
    "atan2_ints": lambda m: m.atan2(*_ints(m)),
    "atan2_bools": lambda m: m.atan2(_floats(m)[1], _floats(m)[1]),
    "atan2_number": lambda m: m.atan2(_floats(m)[0], 2.0),
    "atan2_number_first": lambda m: m.atan2(2, _floats(m)[0]),
    "atan2_method_number": lambda m: _floats(m)[0].atan2(2.0),
    "hypot_ints": lambda m: m.hypot(*_ints(m)),
    "hypot_bools": lambda m: m.hypot(_floats(m)[1], _floats(m)[1]),
    "hypot_int_float": lambda m: m.hypot(_ints(m)[0], _floats(m)[0]),
    "logaddexp_ints": lambda m: m.logaddexp(*_ints(m)),
    "logaddexp_number": lambda m: m.logaddexp(_floats(m)[0], 1),
    "logaddexp_method": lambda m: _floats(m)[0].logaddexp(1.0),
    "copysign_ints": lambda m: m.copysign(*_ints(m)),
    "copysign_int_number": lambda m: m.copysign(_ints(m)[0], -2),
    "copysign_bool_number": lambda m: m.copysign(_floats(m)[1], 3),
    "copysign_number_first": lambda m: m.copysign(2, _floats(m)[0]),
    "copysign_str": lambda m: m.copysign(_floats(m)[0], "a"),
    "copysign_nan_zero": lambda m: m.copysign(m.ones(3), m.tensor([-0.0, 0.0, math.nan])),
    "fmod_ints": lambda m: m.fmod(*_ints(m)),
    "fmod_int_number": lambda m: m.fmod(_ints(m)[0], 3),
    "fmod_int_float": lambda m: m.fmod(_ints(m)[0], 2.5),
    "fmod_bools": lambda m: m.fmod(_floats(m)[1], _floats(m)[1]),
    "fmod_bool_number": lambda m: m.fmod(_floats(m)[1], 3),
    "fmod_int_true": lambda m: m.fmod(_ints(m)[0], True),
    "fmod_int_zero": lambda m: m.fmod(_ints(m)[0], 0),
    "fmod_float_zero": lambda m: m.fmod(_floats(m)[0], 0),
    "fmod_number_first": lambda m: m.fmod(2, _floats(m)[0]),
    "fmod_float_int": lambda m: m.fmod(_floats(m)[0], _ints(m)[1]),
    "fmod_f32_0d_f64": lambda m: m.fmod(_floats(m)[0], m.tensor(2.5, dtype=m.float64)),
    "fmod_int_0d_f64": lambda m: m.fmod(_ints(m)[0], m.tensor(2.5, dtype=m.float64)),
    "remainder_ints": lambda m: m.remainder(*_ints(m)),
    "remainder_int_number": lambda m: m.remainder(_ints(m)[0], -3),
    "remainder_int_float": lambda m: m.remainder(_ints(m)[0], 2.5),
    "remainder_number_first": lambda m: m.remainder(5, _ints(m)[1]),
    "remainder_float_first": lambda m: m.remainder(5.5, _ints(m)[1]),
    "remainder_bools": lambda m: m.remainder(_floats(m)[1], _floats(m)[1]),
    "remainder_int_zero": lambda m: m.remainder(_ints(m)[0], m.tensor([1, 0, 1, 1, 1])),
    "remainder_float_zero": lambda m: m.remainder(_floats(m)[0], 0.0),
    "remainder_numbers": lambda m: m.remainder(2, 3),
    "remainder_str": lambda m: m.remainder(_floats(m)[0], "a"),
    "remainder_signed_zero": lambda m: m.remainder(m.tensor([-7.0, 7.0, -0.0, 0.0]), -3),
    "mod_op_ints": lambda m: _ints(m)[0] % 3,
    "mod_op_int_float": lambda m: _ints(m)[0] % 2.5,
    "rmod_op_ints": lambda m: 5 % _ints(m)[1],
    "floor_divide_ints": lambda m: m.floor_divide(*_ints(m)),
    "floor_divide_int_float": lambda m: m.floor_divide(_ints(m)[0], 2.5),
    "floor_divide_number_first": lambda m: m.floor_divide(5, _ints(m)[1]),
    "floor_divide_bools": lambda m: m.floor_divide(_floats(m)[1], _floats(m)[1]),
    "floor_divide_zero": lambda m: m.floor_divide(_ints(m)[0], 0),
    "floor_divide_float_zero": lambda m: m.floor_divide(_floats(m)[0], 0.0),
    "floor_divide_str": lambda m: m.floor_divide(_floats(m)[0], "a"),
    "floordiv_op_ints": lambda m: _ints(m)[0] // 2,
    "rfloordiv_op_ints": lambda m: 7 // _ints(m)[1],
    "floordiv_op_str": lambda m: _ints(m)[0] // "a",
    "floordiv_exact": lambda m: m.tensor([-7.5, 7.5, 1e300, -0.0, 0.3]) // m.tensor(0.1),
    "lerp_int": lambda m: m.lerp(_ints(m)[0], _ints(m)[0], 0.5),
    "lerp_int_tensor_w": lambda m: m.lerp(_ints(m)[0], _ints(m)[0], _ints(m)[0]),
    "lerp_end_dtype": lambda m: m.lerp(_floats(m)[0], _ints(m)[0], 0.5),
    "lerp_end_double": lambda m: m.lerp(_floats(m)[0], _floats(m)[0].double(), 0.5),
    "lerp_weight_dtype": lambda m: m.lerp(_floats(m)[0], _floats(m)[0], _ints(m)[0]),
    "lerp_weight_0d_int": lambda m: m.lerp(_floats(m)[0], _floats(m)[0] * 2, m.tensor(1)),
    "lerp_end_number": lambda m: m.lerp(_floats(m)[0], 2.0, 0.5),
    "lerp_weight_str": lambda m: m.lerp(_floats(m)[0], _floats(m)[0], "a"),
    "lerp_bcast_error": lambda m: m.lerp(m.ones(3), m.ones(2, 1), m.ones(4)),
    "xlogy_ints": lambda m: m.xlogy(*_ints(m)),
    "xlogy_number_first": lambda m: m.xlogy(2, _ints(m)[1]),
    "xlogy_numbers": lambda m: m.xlogy(2, 3),
    "xlogy_nan": lambda m: m.xlogy(m.tensor([0.0, 0.0, 1.0]), m.tensor([0.0, math.nan, 2.0])),
    "float_power_ints": lambda m: m.float_power(*_ints(m)),
    "float_power_int_number": lambda m: m.float_power(_ints(m)[0], 2),
    "float_power_numbers": lambda m: m.float_power(2, 3),
    "float_power_str": lambda m: m.float_power(_floats(m)[0], "a"),
    "true_divide_ints": lambda m: m.true_divide(*_ints(m)),
    "isclose_ints": lambda m: m.isclose(m.tensor([1, 100]), m.tensor([2, 109]), rtol=0.1),
    "isclose_int_exact": lambda m: m.isclose(*_ints(m), rtol=0, atol=0),
    "isclose_bools": lambda m: m.isclose(m.tensor([True, False]), m.tensor([True, True])),
    "isclose_dtypes": lambda m: m.isclose(_floats(m)[0], _ints(m)[0]),
    "isclose_neg_rtol": lambda m: m.isclose(_floats(m)[0], _floats(m)[0], rtol=-1.0),
    "isclose_neg_atol": lambda m: m.isclose(_floats(m)[0], _floats(m)[0], atol=-0.5),
    "isclose_number": lambda m: m.isclose(_floats(m)[0], 1.0),
    "isclose_method_number": lambda m: _floats(m)[0].isclose(1.0),
    "isclose_bcast": lambda m: m.isclose(m.ones(3), m.ones(2)),
    "isclose_specials": lambda m: m.isclose(
        m.tensor([math.inf, -math.inf, math.nan, math.inf, 1.0]),
        m.tensor([math.inf, math.inf, math.nan, 1e308, 1.0 + 1e-6]),
    ),
    "isclose_equal_nan": lambda m: m.isclose(
        m.tensor([math.nan, 1.0]), m.tensor([math.nan, math.nan]), equal_nan=True
    ),
    "allclose_true": lambda m: m.allclose(_floats(m)[0], _floats(m)[0] + 1e-9),
    "allclose_false": lambda m: m.allclose(_floats(m)[0], _floats(m)[0] + 1e-3),
    "allclose_method": lambda m: _floats(m)[0].allclose(_floats(m)[0], atol=0.1),
    "allclose_bcast": lambda m: m.allclose(m.ones(3), m.ones(2)),
    "logical_and_number": lambda m: m.logical_and(_floats(m)[0], 1),
    "logical_or_number_first": lambda m: m.logical_or(1.5, _floats(m)[0]),
    "logical_xor_ints": lambda m: m.logical_xor(*_ints(m)),
    "logical_and_bcast": lambda m: m.logical_and(m.ones(3), m.ones(2)),
    "lshift_float": lambda m: m.bitwise_left_shift(_floats(m)[0], 1),
    "lshift_bools": lambda m: m.bitwise_left_shift(_floats(m)[1], _floats(m)[1]),
    "lshift_bool_int": lambda m: m.bitwise_left_shift(_floats(m)[1], _ints(m)[1]),
    "lshift_number_first": lambda m: m.bitwise_left_shift(3, m.tensor([1, 2])),
    "lshift_numbers": lambda m: m.bitwise_left_shift(2, 3),
    "lshift_out_of_range": lambda m: m.bitwise_left_shift(m.tensor([1, -8]), m.tensor([70, 2])),
    "lshift_negative": lambda m: m.bitwise_left_shift(m.tensor([1, -8]), -1),
    "lshift_int32_33": lambda m: m.bitwise_left_shift(m.tensor([1, -8], dtype=m.int32), 33),
    "lshift_int32_31": lambda m: m.bitwise_left_shift(m.tensor([1, 8], dtype=m.int32), 31),
    "lshift_uint8": lambda m: m.bitwise_left_shift(m.tensor([1, 200], dtype=m.uint8), 2),
    "rshift_out_of_range": lambda m: m.bitwise_right_shift(
        m.tensor([100, -8, 5]), m.tensor([64, 70, -1])
    ),
    "rshift_negative": lambda m: m.bitwise_right_shift(m.tensor([1, -8]), -1),
    "rshift_uint8": lambda m: m.bitwise_right_shift(
        m.tensor([200, 8], dtype=m.uint8), m.tensor([255, 3], dtype=m.uint8)
    ),
    "rshift_uint8_9": lambda m: m.bitwise_right_shift(m.tensor([200, 8], dtype=m.uint8), 9),
    "rshift_op_float": lambda m: _floats(m)[0] >> 1,
    "lshift_op_float_number": lambda m: _ints(m)[0] << 1.5,
    "rrshift_op_float": lambda m: 2 >> _floats(m)[0],
    "lshift_op_str": lambda m: _ints(m)[0] << "a",
    "sign_bool": lambda m: m.sign(m.tensor([True, False])),
    "sgn_int": lambda m: m.sgn(m.tensor([3, -2, 0])),
    "nan_to_num_f16": lambda m: m.nan_to_num(
        m.tensor([math.inf, -math.inf, math.nan], dtype=m.half)
    ),
}


@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_dtypes_and_errors(name):
    _same(DTYPE_CASES[name])


def test_sgn():
    # torch's sgn gradient is a ZeroTensor, which numpy cannot see: compared by hand
    check("sgn", lambda m, F, x: x.sgn(), (R(2, 3, grad=False),))
    x = eg.tensor([1.5, -2.0, 0.0], requires_grad=True)
    y = eg.sgn(x)
    assert grad_fn_name(y) == "SgnBackward0"
    y.sum().backward()
    assert (x.grad != 0).sum().item() == 0


def test_no_derivative_ops():
    for m in (torch, eg):
        x = m.tensor([1.5, -2.0], dtype=m.float64, requires_grad=True)
        for out in (m.floor_divide(x, 0.7), x // 2, 2.5 // x, m.remainder(3, x), 3 % x):
            assert out.requires_grad and out.grad_fn is not None
            assert grad_fn_name(out) == "torch::autograd::NotImplemented"
    x = eg.tensor([1.5, -2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"derivative for aten::floor_divide is not implemented"):
        eg.floor_divide(x, 0.7).sum().backward()
    with pytest.raises(RuntimeError, match=r"derivative for aten::remainder is not implemented"):
        eg.remainder(3, x).sum().backward()


def test_grad_fn_names_for_overloads():
    for m in (torch, eg):
        x = m.tensor([0.5, 0.25], dtype=m.float64, requires_grad=True)
        names = [
            grad_fn_name(f)
            for f in (
                m.round(x),
                m.round(x, decimals=2),
                m.fmod(x, x),
                m.fmod(x, 2),
                m.remainder(x, x),
                m.remainder(x, 2),
                m.copysign(x, x),
                m.copysign(x, -1),
                m.lerp(x, x, 0.5),
                m.lerp(x, x, x),
                m.xlogy(x, x),
                m.xlogy(2, x),
                m.xlogy(x, 2),
                m.float_power(x, x),
                m.float_power(x, 2),
                m.float_power(2, x),
                m.square(x),
                m.log1p(x),
            )
        ]
        if m is torch:
            expected = names
        else:
            assert names == expected


def test_inplace_forms():
    for name, args in [
        ("erf_", ()),
        ("round_", ()),
        ("sign_", ()),
        ("nan_to_num_", ()),
        ("logit_", ()),
        ("fmod_", (0.3,)),
        ("remainder_", (0.3,)),
        ("copysign_", (-1.0,)),
        ("xlogy_", (2.0,)),
        ("hypot_", (None,)),
        ("lerp_", (None, 0.3)),
    ]:
        outs = []
        for m in (torch, eg):
            x = m.tensor([0.25, 0.5, 0.75], dtype=m.float64)
            full = tuple(
                m.tensor([0.5, 0.1, 0.2], dtype=m.float64) if a is None else a for a in args
            )
            r = getattr(x, name)(*full)
            assert r is x
            outs.append(x.numpy().copy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12, err_msg=name)
    for m in (torch, eg):
        i = m.tensor([7, -7, 5])
        i %= 3
        i <<= 2
        i >>= 1
        i //= 2
        outs.append(i.numpy().copy())
    np.testing.assert_array_equal(outs[-1], outs[-2])


def test_floor_divide_and_remainder_agree_with_python():
    a = np.array([-7.5, 7.5, 5.0, -5.0, 0.3, -0.0])
    b = np.array([2.0, -2.0, 0.1, 0.1, -0.1, 3.0])
    ta, tb = eg.tensor(a), eg.tensor(b)
    np.testing.assert_array_equal(eg.floor_divide(ta, tb).numpy(), [x // y for x, y in zip(a, b)])
    np.testing.assert_allclose(eg.remainder(ta, tb).numpy(), [x % y for x, y in zip(a, b)])


def test_erf_family_accuracy():
    # float64 results to ~1e-15 relative, against torch's own (correctly rounded) values
    x = np.concatenate([np.linspace(-6, 6, 2001), np.geomspace(1e-12, 26, 300)])
    for name in ("erf", "erfc"):
        t = getattr(torch, name)(torch.tensor(x)).numpy()
        e = getattr(eg, name)(eg.tensor(x)).numpy()
        np.testing.assert_allclose(e, t, rtol=2e-14, atol=0, err_msg=name)
    p = np.concatenate([np.linspace(-0.999, 0.999, 2001), 1 - np.geomspace(1e-16, 1e-2, 100)])
    t = torch.erfinv(torch.tensor(p)).numpy()
    np.testing.assert_allclose(eg.erfinv(eg.tensor(p)).numpy(), t, rtol=1e-13, atol=0)


# ------------------------------------------------------------------------------ gradcheck
GRADCHECK = [
    case("tan", lambda m, x: m.tan(x), R(3, 4)),
    case("asin", lambda m, x: m.asin(x * 1.8 - 0.9), Prob(3, 4)),
    case("acos", lambda m, x: m.acos(x * 1.8 - 0.9), Prob(3, 4)),
    case("atan", lambda m, x: m.atan(x), R(3, 4)),
    case("sinh", lambda m, x: m.sinh(x), R(3, 4)),
    case("cosh", lambda m, x: m.cosh(x), R(3, 4)),
    case("asinh", lambda m, x: m.asinh(x), R(3, 4)),
    case("acosh", lambda m, x: m.acosh(x + 1), P(3, 4)),
    case("atanh", lambda m, x: m.atanh(x * 1.8 - 0.9), Prob(3, 4)),
    case("erf", lambda m, x: m.erf(x), R(3, 4)),
    case("erfc", lambda m, x: m.erfc(x), R(3, 4)),
    case("erfinv", lambda m, x: m.erfinv(x * 1.8 - 0.9), Prob(3, 4)),
    case("exp2", lambda m, x: m.exp2(x), R(3, 4)),
    case("expm1", lambda m, x: m.expm1(x), R(3, 4)),
    case("log2", lambda m, x: m.log2(x), P(3, 4)),
    case("log10", lambda m, x: m.log10(x), P(3, 4)),
    case("log1p", lambda m, x: m.log1p(x), P(3, 4)),
    case("rsqrt", lambda m, x: m.rsqrt(x), P(3, 4)),
    case("frac", lambda m, x: m.frac(x * 3), Prob(3, 4)),
    case("deg2rad", lambda m, x: m.deg2rad(x), R(3, 4)),
    case("rad2deg", lambda m, x: m.rad2deg(x), R(3, 4)),
    case("sinc", lambda m, x: m.sinc(x), R(3, 4)),
    case("logit", lambda m, x: m.logit(x), Prob(3, 4)),
    case("square", lambda m, x: m.square(x), R(3, 4)),
    case("nan_to_num", lambda m, x: m.nan_to_num(x), R(3, 4)),
    case("atan2", lambda m, x, y: m.atan2(x, y), R(3, 1), R(1, 4)),
    case("hypot", lambda m, x, y: m.hypot(x, y), NZ(3, 1), NZ(1, 4)),
    case("logaddexp", lambda m, x, y: m.logaddexp(x, y), R(3, 1), R(1, 4)),
    case("copysign", lambda m, x, y: m.copysign(x, y), NZ(3, 1), NZ(1, 4)),
    case("fmod", lambda m, x, y: m.fmod(x, y + 3), Prob(3, 1), Prob(1, 4)),
    case("remainder", lambda m, x, y: m.remainder(x, y + 3), Prob(3, 1), Prob(1, 4)),
    case("lerp", lambda m, x, y, w: m.lerp(x, y, w), R(3, 1), R(1, 4), Prob(3, 4)),
    case("lerp_scalar", lambda m, x, y: m.lerp(x, y, 0.7), R(3, 1), R(1, 4)),
    case("xlogy", lambda m, x, y: m.xlogy(x, y), R(3, 1), P(1, 4)),
    case("float_power", lambda m, x, y: m.float_power(x, y), P(3, 1), R(1, 4)),
]


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_gradcheck(name, fn, specs):
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    assert eg.autograd.gradcheck(lambda *a: fn(eg, *a), tuple(tensors)) is True


# ------------------------------------------------------------------------------ double backward
@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_double_backward(name, fn, specs):
    """The gradient of (grad . v) with respect to the inputs, as torch computes it."""
    rng = np.random.default_rng(seed_for(f"double-{name}"))
    arrays = [sample(s, rng) for s in specs]
    results = []
    for m in (torch, eg):
        xs = [make_tensor(m, a, s) for a, s in zip(arrays, specs)]
        out = fn(m, *xs)
        v = m.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=m.float64)
        grads = m.autograd.grad(out, xs, v, create_graph=True)
        total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
        if not isinstance(total, (m.Tensor,)):
            results.append(None)
            continue
        second = m.autograd.grad(total, xs, allow_unused=True)
        results.append([None if s is None else s.detach().numpy() for s in second])
    t_res, e_res = (r if r is not None else [None] * len(specs) for r in results)
    for t, e, a in zip(t_res, e_res, arrays):  # no graph at all is a zero second derivative
        t = np.zeros_like(a) if t is None else t
        e = np.zeros_like(a) if e is None else e
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------ GPU
@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device and cupy")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.05, 0.95, (4, 5))
    b = rng.uniform(0.5, 2.0, (5,))
    ints = rng.integers(-20, 20, (4, 5))
    ops = [
        lambda m, x, y, i: m.erf(x * 4 - 2),
        lambda m, x, y, i: m.erfc(x * 8 - 2),
        lambda m, x, y, i: m.erfinv(x * 2 - 1),
        lambda m, x, y, i: m.tan(x) + m.asinh(x) + m.log1p(x) + m.rsqrt(x) + m.sinc(x),
        lambda m, x, y, i: m.round(x * 10, decimals=1) + m.frac(x * 7) + m.sign(x - 0.5),
        lambda m, x, y, i: m.atan2(x, y) + m.hypot(x, y) + m.logaddexp(x, y),
        lambda m, x, y, i: m.fmod(x * 9, y) + m.remainder(x * 9 - 4, -y) + m.xlogy(x, y),
        lambda m, x, y, i: m.lerp(x, y, 0.3) + m.copysign(x, -y) + m.logit(x),
        lambda m, x, y, i: m.nan_to_num(m.log(x - 0.5)),
        lambda m, x, y, i: (i % 7) + (i // 3) + m.bitwise_left_shift(i, 2) + (i >> 1),
        lambda m, x, y, i: m.isclose(x, x + 1e-6).to(m.int64) + m.logical_xor(x > 0.5, i > 0),
    ]
    for k, op in enumerate(ops):
        res = []
        for dev in ("cpu", "cuda"):
            x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
            y = eg.tensor(b, dtype=eg.float64, device=dev, requires_grad=True)
            i = eg.tensor(ints, device=dev)
            out = op(eg, x, y, i)
            assert out.device.type == dev
            grads = []
            if out.requires_grad:
                out.sum().backward()
                grads = [t.grad.cpu().numpy() for t in (x, y) if t.grad is not None]
            res.append([out.detach().cpu().numpy(), *grads])
        for c, g in zip(*res):
            np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12, err_msg=f"op {k}")
