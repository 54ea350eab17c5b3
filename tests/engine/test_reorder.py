"""The reorder family (flip roll rot90 repeat tile repeat_interleave tril triu diag diag_embed
one_hot pad, Tensor.type) against torch: values, every .grad, grad_fn names, errors, gradcheck
and double backward."""

import re

import numpy as np
import pytest
import torch
from _torch_compare import (
    Idx,
    R,
    case,
    compare_with_torch,
    eg,
    eg_F,
    grad_fn_name,
    make_tensor,
    run_both,
    sample,
    seed_for,
)


def _long(m, values):
    return m.tensor(values, dtype=m.int64)


CASES = [
    # flip
    case("flip0", lambda m, F, x: m.flip(x, (0,)), R(3, 4)),
    case("flip_neg_multi", lambda m, F, x: m.flip(x, [-1, 0]), R(2, 3, 4)),
    case("flip_method_varargs", lambda m, F, x: x.flip(0, 2), R(2, 3, 4)),
    case("flip_none", lambda m, F, x: x.flip([]), R(3, 4)),
    case("flip_scalar", lambda m, F, x: x.flip(0), R()),
    case("flip_empty", lambda m, F, x: x.flip(0), R(0, 3)),
    case("fliplr", lambda m, F, x: m.fliplr(x), R(3, 4, 2)),
    case("flipud", lambda m, F, x: x.flipud(), R(5)),
    # roll
    case("roll_dim", lambda m, F, x: m.roll(x, 1, 0), R(3, 4)),
    case("roll_flat", lambda m, F, x: m.roll(x, -5), R(3, 4)),
    case("roll_multi", lambda m, F, x: x.roll((2, -1), (-1, 0)), R(2, 3, 4)),
    case("roll_big_shift", lambda m, F, x: x.roll(7, 1), R(3, 4)),
    case("roll_scalar", lambda m, F, x: x.roll(1), R()),
    case("roll_empty", lambda m, F, x: x.roll(1, 0), R(0, 3)),
    # rot90
    case("rot90", lambda m, F, x: m.rot90(x), R(3, 4)),
    case("rot90_k2", lambda m, F, x: m.rot90(x, 2, (1, 2)), R(2, 3, 4)),
    case("rot90_k3_neg", lambda m, F, x: x.rot90(-1, [-1, 0]), R(2, 3, 4)),
    case("rot90_k0", lambda m, F, x: m.rot90(x, 4), R(3, 4)),
    # repeat / tile
    case("repeat", lambda m, F, x: x.repeat(2, 3), R(3, 4)),
    case("repeat_lead", lambda m, F, x: x.repeat(2, 1, 3), R(3, 4)),
    case("repeat_tuple", lambda m, F, x: x.repeat((1, 2)), R(3, 4)),
    case("repeat_zero", lambda m, F, x: x.repeat(0, 2), R(3, 4)),
    case("repeat_scalar", lambda m, F, x: x.repeat(2, 3), R()),
    case("tile_short", lambda m, F, x: m.tile(x, (2,)), R(3, 4)),
    case("tile_long", lambda m, F, x: m.tile(x, (2, 1, 2)), R(3, 4)),
    case("tile_method", lambda m, F, x: x.tile(2, 2), R(3, 4)),
    # repeat_interleave
    case("ri_flat", lambda m, F, x: m.repeat_interleave(x, 2), R(3, 4)),
    case("ri_dim", lambda m, F, x: x.repeat_interleave(3, dim=0), R(3, 4)),
    case("ri_negdim", lambda m, F, x: x.repeat_interleave(2, -1), R(2, 3, 4)),
    case("ri_zero", lambda m, F, x: x.repeat_interleave(0, 1), R(3, 4)),
    case("ri_scalar", lambda m, F, x: x.repeat_interleave(3), R()),
    case(
        "ri_tensor",
        lambda m, F, x: x.repeat_interleave(_long(m, [1, 0, 3]), dim=0),
        R(3, 4),
    ),
    case(
        "ri_tensor_dim1_output_size",
        lambda m, F, x: m.repeat_interleave(x, _long(m, [2, 1, 0, 1]), 1, output_size=4),
        R(2, 4),
    ),
    case("ri_tensor_one", lambda m, F, x: x.repeat_interleave(_long(m, [2]), dim=0), R(3, 4)),
    case("ri_tensor_0d", lambda m, F, x: x.repeat_interleave(_long(m, 2), dim=1), R(3, 4)),
    case("ri_counts_only", lambda m, F: m.repeat_interleave(_long(m, [1, 2, 0, 3]))),
    # tril / triu
    case("tril", lambda m, F, x: m.tril(x), R(4, 5)),
    case("tril_k", lambda m, F, x: x.tril(1), R(2, 4, 5)),
    case("tril_kneg", lambda m, F, x: m.tril(x, diagonal=-2), R(4, 5)),
    case("triu", lambda m, F, x: m.triu(x), R(4, 5)),
    case("triu_k", lambda m, F, x: x.triu(-1), R(2, 5, 4)),
    case("triu_big", lambda m, F, x: x.triu(10), R(3, 4)),
    # diag / diag_embed
    case("diag_vec", lambda m, F, x: m.diag(x), R(4)),
    case("diag_vec_k", lambda m, F, x: m.diag(x, 2), R(3)),
    case("diag_vec_kneg", lambda m, F, x: x.diag(-1), R(3)),
    case("diag_mat", lambda m, F, x: m.diag(x), R(3, 5)),
    case("diag_mat_k", lambda m, F, x: m.diag(x, 2), R(3, 5)),
    case("diag_mat_kneg", lambda m, F, x: x.diag(-1), R(4, 3)),
    case("diag_mat_out", lambda m, F, x: m.diag(x, 6), R(3, 5)),
    case("diag_embed", lambda m, F, x: m.diag_embed(x), R(2, 3)),
    case("diag_embed_off", lambda m, F, x: m.diag_embed(x, 1), R(2, 3)),
    case("diag_embed_dims", lambda m, F, x: m.diag_embed(x, -1, 0, 2), R(2, 3)),
    case("diag_embed_rev", lambda m, F, x: x.diag_embed(1, -1, 0), R(2, 3)),
    # pad: constant
    case("pad_const", lambda m, F, x: F.pad(x, (1, 2)), R(3, 4)),
    case("pad_const_value", lambda m, F, x: F.pad(x, (1, 0, 2, 1), value=1.5), R(2, 3, 4)),
    case("pad_const_crop", lambda m, F, x: F.pad(x, (-1, 2, 1, -2)), R(2, 3, 4)),
    case("pad_const_all", lambda m, F, x: F.pad(x, [1, 1, 1, 1, 1, 1]), R(2, 3, 4)),
    case("pad_const_empty", lambda m, F, x: F.pad(x, (1, 1)), R(2, 0)),
    # pad: reflect / replicate / circular, 1-3 dims, batched and not
    case("pad_reflect1d", lambda m, F, x: F.pad(x, (2, 3), mode="reflect"), R(2, 3, 5)),
    case("pad_reflect1d_nobatch", lambda m, F, x: F.pad(x, (1, 2), mode="reflect"), R(3, 4)),
    case("pad_reflect1d_neg", lambda m, F, x: F.pad(x, (-2, 4), mode="reflect"), R(2, 3, 5)),
    case("pad_reflect2d", lambda m, F, x: F.pad(x, (1, 2, 3, 0), mode="reflect"), R(2, 3, 4, 5)),
    case(
        "pad_reflect3d", lambda m, F, x: F.pad(x, (1, 2, 1, 0, 2, 1), mode="reflect"), R(2, 3, 4, 5)
    ),
    case("pad_replicate1d", lambda m, F, x: F.pad(x, (3, 1), mode="replicate"), R(2, 3, 2)),
    case("pad_replicate2d", lambda m, F, x: F.pad(x, (2, 1, 0, 3), mode="replicate"), R(3, 4, 5)),
    case(
        "pad_replicate3d",
        lambda m, F, x: F.pad(x, (1, 1, 2, 0, 1, 2), mode="replicate"),
        R(1, 2, 3, 2, 2),
    ),
    case("pad_replicate_neg", lambda m, F, x: F.pad(x, (-1, 2), mode="replicate"), R(2, 3, 5)),
    case("pad_circular1d", lambda m, F, x: F.pad(x, (2, 5), mode="circular"), R(2, 3, 5)),
    case("pad_circular2d", lambda m, F, x: F.pad(x, (1, 2, 2, 1), mode="circular"), R(2, 3, 4, 5)),
    case(
        "pad_circular3d",
        lambda m, F, x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"),
        R(2, 3, 4, 5),
    ),
    case("pad_circular_neg", lambda m, F, x: F.pad(x, (-1, 2), mode="circular"), R(2, 3, 5)),
    case("pad_reflect_zero_batch", lambda m, F, x: F.pad(x, (1, 1), mode="reflect"), R(0, 3, 2)),
    # no grad: integer inputs and one_hot
    case("pad_int_value", lambda m, F, x: F.pad(x, (1, 1), value=2), Idx((2, 3), 5)),
    case("pad_int_reflect", lambda m, F, x: F.pad(x, (1, 1), mode="reflect"), Idx((2, 3), 5)),
    case("flip_int", lambda m, F, x: x.flip(1), Idx((2, 3), 5)),
    case("tril_int", lambda m, F, x: x.tril(), Idx((3, 3), 5)),
    case("one_hot", lambda m, F, x: F.one_hot(x), Idx((2, 3), 5)),
    case("one_hot_n", lambda m, F, x: F.one_hot(x, 7), Idx((4,), 5)),
    case("one_hot_0d", lambda m, F: F.one_hot(_long(m, 2))),
    case("one_hot_empty", lambda m, F: F.one_hot(m.zeros(0, dtype=m.int64), 3)),
    # composed: gradients through two reorder ops and a reduction
    case("chain", lambda m, F, x: (m.roll(m.flip(x, (1,)), 1, 0).tril() * 2).repeat(1, 2), R(3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


GRAD_FN = [
    c
    for c in CASES
    if not c.id.startswith(("one_hot", "ri_counts", "pad_int", "flip_int", "tril_int"))
]


@pytest.mark.parametrize("name, fn, specs", GRAD_FN)
def test_grad_fn_name(name, fn, specs):
    _, (_, t_out), (_, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


def test_float32_and_dtypes_kept():
    for m in (torch, eg):
        x = m.ones(2, 3, dtype=m.float32)
        assert m.flip(x, (0,)).dtype == m.float32
        assert eg_F.pad(eg.ones(2, 3), (1, 1)).dtype == eg.float32
    assert eg.roll(eg.ones(2, 3, dtype=eg.int16), 1).dtype == eg.int16


def test_outputs_do_not_alias_input():
    x = eg.arange(6.0).reshape(2, 3)
    for y in (x.flip(0), x.roll(1), x.repeat(1, 1), x.tril(5), eg.rot90(x, 0), eg.diag(x)):
        y._data[...] = 0
    assert x.sum().item() == 15


# -- errors ---------------------------------------------------------------------------------------
def _x(m):
    return m.zeros(3, 4, dtype=m.float64)


def _x3(m):
    return m.zeros(2, 3, 5, dtype=m.float64)


ERRORS = [
    ("flip_dup", lambda m: _x(m).flip(0, 0), "dim 0 appears multiple times in the list of dims"),
    (
        "flip_range",
        lambda m: _x(m).flip(2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "flip_missing",
        lambda m: _x(m).flip(),
        'flip() missing 1 required positional arguments: "dims"',
    ),
    ("fliplr_1d", lambda m: m.fliplr(m.zeros(3)), "Input must be >= 2-d."),
    ("flipud_0d", lambda m: m.flipud(m.tensor(1.0)), "Input must be >= 1-d."),
    (
        "roll_align",
        lambda m: _x(m).roll(1, (0, 1)),
        "shifts and dimensions must align. shifts: 1, dims:2",
    ),
    (
        "roll_align_flat",
        lambda m: _x(m).roll((1, 2)),
        "shifts and dimensions must align. shifts: 2, dims:0",
    ),
    ("roll_empty", lambda m: _x(m).roll([], []), "`shifts` required"),
    (
        "roll_range",
        lambda m: _x(m).roll(1, 2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "rot90_dims_len",
        lambda m: m.rot90(_x(m), 1, (0, 1, 2)),
        "expected total rotation dims == 2, but got dims = 3",
    ),
    ("rot90_1d", lambda m: m.rot90(m.zeros(3)), "expected total dims >= 2, but got total dims = 1"),
    (
        "rot90_same",
        lambda m: m.rot90(_x(m), 1, (0, 0)),
        "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
    ),
    (
        "rot90_range",
        lambda m: m.rot90(_x(m), 1, (0, 5)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)",
    ),
    (
        "repeat_few",
        lambda m: _x(m).repeat(2),
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
        "tensor",
    ),
    (
        "repeat_neg",
        lambda m: _x(m).repeat(-1, 2),
        "Trying to create tensor with negative dimension -3: [-3, 8]",
    ),
    (
        "tile_neg",
        lambda m: _x(m).tile(-1),
        "Trying to create tensor with negative dimension -4: [3, -4]",
    ),
    ("ri_neg", lambda m: _x(m).repeat_interleave(-1), "Repeats must be non-negative"),
    (
        "ri_len",
        lambda m: _x(m).repeat_interleave(_long(m, [1, 2]), dim=0),
        "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and "
        "input.size(0) = 3",
    ),
    (
        "ri_tensor_neg",
        lambda m: _x(m).repeat_interleave(_long(m, [1, -2, 1]), dim=0),
        "repeats can not be negative",
    ),
    (
        "ri_float",
        lambda m: _x(m).repeat_interleave(m.tensor([1.0, 2.0, 1.0]), dim=0),
        "\"repeat_interleave_cpu\" not implemented for 'Float'",
    ),
    (
        "ri_output_size",
        lambda m: _x(m).repeat_interleave(_long(m, [1, 2, 1]), dim=0, output_size=5),
        "allocated size does not match required size",
    ),
    (
        "ri_dim",
        lambda m: _x(m).repeat_interleave(2, dim=2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    ("tril_1d", lambda m: m.zeros(3).tril(), "tril: input tensor must have at least 2 dimensions"),
    (
        "triu_0d",
        lambda m: m.tensor(1.0).triu(),
        "triu: input tensor must have at least 2 dimensions",
    ),
    ("diag_0d", lambda m: m.diag(m.tensor(1.0)), "diag(): Supports 1D or 2D tensors. Got 0D"),
    ("diag_3d", lambda m: m.diag(m.zeros(2, 3, 4)), "diag(): Supports 1D or 2D tensors. Got 3D"),
    (
        "diag_embed_same",
        lambda m: m.diag_embed(m.zeros(3), 1, 0, 0),
        "diagonal dimensions cannot be identical 0, 0",
    ),
    (
        "diag_embed_0d",
        lambda m: m.diag_embed(m.tensor(1.0)),
        "Dimension out of range (expected to be in range of [-1, 0], but got -2)",
    ),
    (
        "one_hot_float",
        lambda m: m.nn.functional.one_hot(m.tensor([1.0, 2.0])),
        "one_hot is only applicable to index tensor of type LongTensor.",
    ),
    (
        "one_hot_int32",
        lambda m: m.nn.functional.one_hot(m.tensor([1, 2], dtype=m.int32)),
        "one_hot is only applicable to index tensor of type LongTensor.",
    ),
    (
        "one_hot_neg",
        lambda m: m.nn.functional.one_hot(_long(m, [1, -2])),
        "Class values must be non-negative.",
    ),
    (
        "one_hot_big",
        lambda m: m.nn.functional.one_hot(_long(m, [1, 5]), 3),
        "Class values must be smaller than num_classes.",
    ),
    (
        "one_hot_empty",
        lambda m: m.nn.functional.one_hot(m.zeros(0, dtype=m.int64)),
        "Can not infer total number of classes from empty tensor.",
    ),
    (
        "pad_odd",
        lambda m: m.nn.functional.pad(_x3(m), (1,)),
        "Padding length must be divisible by 2",
    ),
    (
        "pad_long",
        lambda m: m.nn.functional.pad(_x3(m), (1,) * 8),
        "Padding length should be less than or equal to two times the input dimension but got "
        "padding length 8 and input of dimension 3",
    ),
    (
        "pad_mode",
        lambda m: m.nn.functional.pad(_x3(m), (1, 1), mode="foo"),
        "Unrecognised padding mode foo",
    ),
    (
        "pad_value",
        lambda m: m.nn.functional.pad(_x3(m), (1, 1), mode="reflect", value=1.0),
        'Padding mode "reflect" doesn\'t take in value argument',
    ),
    (
        "pad_circ_value",
        lambda m: m.nn.functional.pad(_x3(m), (1, 1), mode="circular", value=1.0),
        'Padding mode "circular" doesn\'t take in value argument',
    ),
    (
        "pad_unsupported",
        lambda m: m.nn.functional.pad(_x3(m), (1,) * 6, mode="replicate"),
        "Padding size 6 is not supported for 3D input tensor.\nSupported combinations",
    ),
    (
        "pad_1d_input",
        lambda m: m.nn.functional.pad(m.zeros(3), (1, 1), mode="reflect"),
        "Padding size 2 is not supported for 1D input tensor.",
    ),
    (
        "pad_reflect_big",
        lambda m: m.nn.functional.pad(_x3(m), (5, 0), mode="reflect"),
        "Argument #4: Padding size should be less than the corresponding input dimension, but "
        "got: padding (5, 0) at dimension 2 of input [2, 3, 5]",
    ),
    (
        "pad_reflect_big_h",
        lambda m: m.nn.functional.pad(m.zeros(2, 3, 4, 5), (1, 1, 4, 0), mode="reflect"),
        "Argument #6: Padding size should be less than the corresponding input dimension, but "
        "got: padding (4, 0) at dimension 2 of input [2, 3, 4, 5]",
    ),
    (
        "pad_reflect_big_d",
        lambda m: m.nn.functional.pad(m.zeros(2, 3, 4, 5, 6), (0, 0, 0, 0, 4, 0), mode="reflect"),
        "Argument #8: Padding size should be less than the corresponding input dimension, but "
        "got: padding (4, 0) at dimension 2 of input [2, 3, 4, 5, 6]",
    ),
    (
        "pad_reflect_empty",
        lambda m: m.nn.functional.pad(m.zeros(2, 3, 0), (1, 1), mode="reflect"),
        "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: [2, 3, 0]",
    ),
    (
        "pad_replicate_empty",
        lambda m: m.nn.functional.pad(m.zeros(2, 3, 4, 0), (1, 1, 1, 1), mode="replicate"),
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: [2, 3, 4, 0]",
    ),
    (
        "pad_reflect_small",
        lambda m: m.nn.functional.pad(_x3(m), (-3, -2), mode="reflect"),
        "input (W: 5) is too small. Calculated output W: 0",
    ),
    (
        "pad_replicate_neg_dim",
        lambda m: m.nn.functional.pad(_x3(m), (1, 1, -3, -1), mode="replicate"),
        "Trying to create tensor with negative dimension -1: [2, -1, 7]",
    ),
    (
        "pad_circular_wrap",
        lambda m: m.nn.functional.pad(_x3(m), (6, 0), mode="circular"),
        "Padding value causes wrapping around more than once.",
    ),
    (
        "pad_circular_neg",
        lambda m: m.nn.functional.pad(m.zeros(2, 3, 4, 5), (1, 1, -4, -1), mode="circular"),
        "Negative padding value is resulting in an empty dimension",
    ),
    (
        "pad_const_crop",
        lambda m: m.nn.functional.pad(_x3(m), (-3, -3)),
        "narrow(): length must be non-negative.",
    ),
    (
        "pad_float",
        lambda m: m.nn.functional.pad(_x3(m), (1.5, 1)),
        "pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
        "float at pos 0",
    ),
    ("type_bad_string", lambda m: _x(m).type("FloatTensor"), "invalid type: 'FloatTensor'"),
    ("type_bad_pytype", lambda m: _x(m).type(float), "invalid type: 'float'"),
    ("type_bad_arg", lambda m: _x(m).type(5), "dtype must be a type, str, or dtype object"),
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


# -- Tensor.type, char, short -------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
)
def test_type_string(dtype):
    for m in (torch, eg):
        x = m.zeros(2, dtype=getattr(m, dtype))
        assert x.type() == torch.zeros(2, dtype=getattr(torch, dtype)).type()


@pytest.mark.parametrize(
    "arg", ["torch.FloatTensor", "torch.IntTensor", "torch.CharTensor", "torch.ShortTensor"]
)
def test_type_cast_string(arg):
    t = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True).type(arg)
    e = eg.tensor([1.5, -2.0], dtype=eg.float64, requires_grad=True).type(arg)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert e.tolist() == t.tolist()
    assert grad_fn_name(e) == grad_fn_name(t)


def test_type_cast_dtype():
    x = eg.tensor([1.5, -2.0], dtype=eg.float64, requires_grad=True)
    assert x.type(eg.float64) is x
    y = x.type(dtype=eg.float32)
    assert y.dtype == eg.float32 and grad_fn_name(y) == "ToCopyBackward0"
    assert x.type(eg.int8).dtype == eg.int8
    assert x.char().dtype == eg.int8 and x.short().dtype == eg.int16
    assert x.char().type() == "torch.CharTensor"


# -- gradcheck and double backward --------------------------------------------------------------
GRADCHECK = [
    case("flip", lambda m, F, x: m.flip(x, (0, -1)), R(2, 3, 4)),
    case("roll", lambda m, F, x: m.roll(x, (1, -2), (0, 1)), R(3, 4)),
    case("rot90", lambda m, F, x: m.rot90(x, 3), R(3, 4)),
    case("repeat", lambda m, F, x: x.repeat(2, 1, 2), R(3, 2)),
    case("tile", lambda m, F, x: m.tile(x, (2,)), R(3, 2)),
    case("repeat_interleave", lambda m, F, x: x.repeat_interleave(2, dim=1), R(3, 2)),
    case(
        "repeat_interleave_t",
        lambda m, F, x: x.repeat_interleave(_long(m, [2, 0, 1]), dim=0),
        R(3, 2),
    ),
    case("tril", lambda m, F, x: m.tril(x, -1), R(4, 4)),
    case("triu", lambda m, F, x: m.triu(x, 1), R(2, 3, 4)),
    case("diag_vec", lambda m, F, x: m.diag(x, 1), R(3)),
    case("diag_mat", lambda m, F, x: m.diag(x, -1), R(4, 3)),
    case("diag_embed", lambda m, F, x: m.diag_embed(x, 1, 0, 2), R(2, 3)),
    case("pad_const", lambda m, F, x: F.pad(x, (1, -1, 2, 0), value=0.5), R(2, 3, 4)),
    case("pad_reflect", lambda m, F, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), R(1, 2, 3, 4)),
    case("pad_replicate", lambda m, F, x: F.pad(x, (2, 1), mode="replicate"), R(2, 3)),
    case(
        "pad_replicate3d",
        lambda m, F, x: F.pad(x, (1, 0, 0, 1, 1, 1), mode="replicate"),
        R(1, 2, 2, 2),
    ),
    case("pad_circular", lambda m, F, x: F.pad(x, (2, 3, 1, 0), mode="circular"), R(1, 2, 3, 4)),
]


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_gradcheck(name, fn, specs):
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    assert eg.autograd.gradcheck(lambda *a: fn(eg, eg_F, *a), tensors)


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_double_backward(name, fn, specs):
    """grad of (sum of grad * w) against torch: exercises the backward of each backward."""

    def run(m, F, x):
        y = fn(m, F, x)
        w = m.arange(y.numel(), dtype=m.float64).reshape(y.shape)
        (g,) = m.autograd.grad((y * y * w).sum(), x, create_graph=True)
        return (g * g).sum()

    compare_with_torch(f"dbl-{name}", run, specs)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device (cupy)")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4, 5))
    for fn in (
        lambda m, F, x: m.flip(x, (1, 3)),
        lambda m, F, x: m.roll(x, 2, -1),
        lambda m, F, x: x.repeat(1, 2, 1, 1),
        lambda m, F, x: x.repeat_interleave(m.tensor([1, 0, 2], device=x.device), dim=1),
        lambda m, F, x: m.tril(x, 1),
        lambda m, F, x: m.diag_embed(x),
        lambda m, F, x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
        lambda m, F, x: F.pad(x, (1, 2, 2, 1), mode="circular"),
        lambda m, F, x: F.pad(x, (1, 2), value=3.0),
    ):
        outs = []
        for dev in ("cpu", "cuda"):
            x = eg.tensor(a, dtype=eg.float64, device=dev, requires_grad=True)
            y = fn(eg, eg_F, x)
            (y * y).sum().backward()
            outs.append((y.cpu().detach().numpy(), x.grad.cpu().numpy()))
        np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12)
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-12)
