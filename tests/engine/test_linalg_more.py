"""einsum, the addmm family (addmm baddbmm addmv addbmm), tensordot, kron and cross against
torch: values, every .grad, grad_fn names, errors, gradcheck and double backward."""

import re

import numpy as np
import pytest
import torch
from _torch_compare import (
    R,
    case,
    compare_with_torch,
    eg,
    eg_F,
    f32,
    grad_fn_name,
    make_tensor,
    run_both,
    sample,
    seed_for,
)

EINSUM = [
    case("mm", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), R(3, 4), R(4, 5)),
    case("mm_implicit", lambda m, F, a, b: m.einsum("ij,jk", a, b), R(3, 4), R(4, 5)),
    case("spaces", lambda m, F, a, b: m.einsum(" ij , jk -> ik", a, b), R(3, 4), R(4, 5)),
    case("list_operands", lambda m, F, a, b: m.einsum("ij,jk", [a, b]), R(3, 4), R(4, 5)),
    case("transpose", lambda m, F, a: m.einsum("ij->ji", a), R(3, 4)),
    case("sum_all", lambda m, F, a: m.einsum("ij->", a), R(3, 4)),
    case("sum_dim", lambda m, F, a: m.einsum("ij->j", a), R(3, 4)),
    case("diagonal", lambda m, F, a: m.einsum("ii->i", a), R(3, 3)),
    case("trace", lambda m, F, a: m.einsum("ii", a), R(3, 3)),
    case("diag3", lambda m, F, a: m.einsum("iij->ji", a), R(3, 3, 2)),
    case("outer", lambda m, F, a, b: m.einsum("i,j->ij", a, b), R(4), R(5)),
    case("hadamard", lambda m, F, a, b: m.einsum("ij,ij->ij", a, b), R(3, 4), R(3, 4)),
    case("same_operand", lambda m, F, a: m.einsum("ij,ij->", a, a), R(3, 4)),
    case("bmm", lambda m, F, a, b: m.einsum("bij,bjk->bik", a, b), R(2, 3, 4), R(2, 4, 5)),
    case("ellipsis", lambda m, F, a, b: m.einsum("...ij,jk", a, b), R(2, 3, 4), R(4, 5)),
    case("ellipsis_mid", lambda m, F, a, b: m.einsum("i...j,jk->...ik", a, b), R(3, 2, 4), R(4, 5)),
    case("ellipsis_sum", lambda m, F, a, b: m.einsum("...ij,jk->ik", a, b), R(2, 3, 4), R(4, 5)),
    case(
        "ellipsis_bcast",
        lambda m, F, a, b: m.einsum("...i,...i->...", a, b),
        R(2, 3, 4),
        R(1, 3, 4),
    ),
    case(
        "ellipsis_bcast1", lambda m, F, a, b: m.einsum("...i,...i->...", a, b), R(2, 1, 4), R(3, 4)
    ),
    case("named_bcast", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), R(3, 1), R(4, 5)),
    case("case_letters", lambda m, F, a, b: m.einsum("Ab,bA", a, b), R(3, 4), R(4, 3)),
    case("implicit_order", lambda m, F, a: m.einsum("aB", a), R(3, 4)),
    case(
        "three", lambda m, F, a, b, c: m.einsum("ij,jk,kl->il", a, b, c), R(2, 3), R(3, 4), R(4, 2)
    ),
    case(
        "three_sum_only", lambda m, F, a, b, c: m.einsum("ij,j,k->k", a, b, c), R(2, 3), R(3), R(4)
    ),
    case("mv", lambda m, F, a, b: m.einsum("ij,j->i", a, b), R(3, 4), R(4)),
    case("lonely_sum", lambda m, F, a, b: m.einsum("ij,k->ik", a, b), R(3, 4), R(2)),
    case("scalar_operand", lambda m, F, a, b: m.einsum(",ij->ij", a, b), R(), R(3, 4)),
    case("no_grad_b", lambda m, F, a, b: m.einsum("ij,jk", a, b), R(3, 4), R(4, 5, grad=False)),
    case("empty", lambda m, F, a, b: m.einsum("ij,jk", a, b), R(3, 0), R(0, 5)),
    case("f32", lambda m, F, a, b: m.einsum("ij,jk", a, b), f32(R(3, 4)), f32(R(4, 5))),
]

ADD = [
    case("addmm", lambda m, F, i, a, b: m.addmm(i, a, b), R(3, 5), R(3, 4), R(4, 5)),
    case(
        "addmm_ab",
        lambda m, F, i, a, b: m.addmm(i, a, b, beta=2, alpha=-0.5),
        R(5),
        R(3, 4),
        R(4, 5),
    ),
    case("addmm_bcast", lambda m, F, i, a, b: i.addmm(a, b, alpha=3), R(3, 1), R(3, 4), R(4, 5)),
    case("addmm_scalar", lambda m, F, i, a, b: m.addmm(i, a, b), R(), R(3, 4), R(4, 5)),
    case("addmm_beta0", lambda m, F, i, a, b: m.addmm(i, a, b, beta=0), R(3, 5), R(3, 4), R(4, 5)),
    case("baddbmm", lambda m, F, i, a, b: m.baddbmm(i, a, b), R(2, 3, 5), R(2, 3, 4), R(2, 4, 5)),
    case(
        "baddbmm_ab",
        lambda m, F, i, a, b: i.baddbmm(a, b, beta=0.5, alpha=2),
        R(5),
        R(2, 3, 4),
        R(2, 4, 5),
    ),
    case("addmv", lambda m, F, i, a, b: m.addmv(i, a, b), R(3), R(3, 4), R(4)),
    case("addmv_ab", lambda m, F, i, a, b: i.addmv(a, b, beta=-1, alpha=0.25), R(1), R(3, 4), R(4)),
    case("addmv_scalar", lambda m, F, i, a, b: m.addmv(i, a, b), R(), R(3, 4), R(4)),
    case("addbmm", lambda m, F, i, a, b: m.addbmm(i, a, b), R(3, 5), R(2, 3, 4), R(2, 4, 5)),
    case(
        "addbmm_ab",
        lambda m, F, i, a, b: i.addbmm(a, b, beta=2, alpha=0.5),
        R(3, 1),
        R(2, 3, 4),
        R(2, 4, 5),
    ),
    case(
        "addmm_no_grad_input",
        lambda m, F, i, a, b: m.addmm(i, a, b),
        R(3, 5, grad=False),
        R(3, 4),
        R(4, 5),
    ),
    case("tensordot_int", lambda m, F, a, b: m.tensordot(a, b, 1), R(3, 4), R(4, 5)),
    case(
        "tensordot_pairs",
        lambda m, F, a, b: m.tensordot(a, b, ([0, 2], [0, 1])),
        R(2, 3, 4),
        R(2, 4, 5),
    ),
    case("tensordot_zero", lambda m, F, a, b: m.tensordot(a, b, 0), R(3, 2), R(2, 2)),
    case("tensordot_all", lambda m, F, a, b: m.tensordot(a, b, 2), R(3, 4), R(3, 4)),
    case(
        "tensordot_lists", lambda m, F, a, b: m.tensordot(a, b, dims=[[1], [0]]), R(3, 4), R(4, 5)
    ),
    case("kron", lambda m, F, a, b: m.kron(a, b), R(2, 3), R(3, 2)),
    case("kron_mixed_ndim", lambda m, F, a, b: a.kron(b), R(3), R(2, 2)),
    case("cross", lambda m, F, a, b: m.cross(a, b, dim=-1), R(2, 4, 3), R(2, 4, 3)),
    case("cross_dim0", lambda m, F, a, b: m.cross(a, b, dim=0), R(3, 4), R(3, 4)),
    case("cross_bcast", lambda m, F, a, b: a.cross(b, dim=1), R(2, 3), R(1, 3)),
]


@pytest.mark.parametrize("name, fn, specs", EINSUM + ADD)
def test_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


NAMED = [c for c in EINSUM + ADD if not c.id.startswith(("three", "lonely", "scalar_operand"))]


@pytest.mark.parametrize("name, fn, specs", NAMED)
def test_grad_fn_name(name, fn, specs):
    _, (_, t_out), (_, e_out) = run_both(name, fn, specs)
    assert grad_fn_name(e_out) == grad_fn_name(t_out)


def test_cross_default_dim():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    with pytest.warns(UserWarning):
        t = torch.cross(torch.tensor(a), torch.tensor(b))
    e = eg.cross(eg.tensor(a), eg.tensor(b))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_addmm_beta0_ignores_nan():
    for m in (torch, eg):
        i = m.full((2, 2), float("nan"), dtype=m.float64)
        out = m.addmm(i, m.ones(2, 3, dtype=m.float64), m.ones(3, 2, dtype=m.float64), beta=0)
        assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_inplace_forms():
    for m in (torch, eg):
        a = m.ones(2, 2, dtype=m.float64)
        a.addmm_(m.ones(2, 3, dtype=m.float64), m.ones(3, 2, dtype=m.float64), alpha=2)
        assert a.tolist() == [[7.0, 7.0], [7.0, 7.0]]
        b = m.ones(3, 3, dtype=m.float64)
        b.tril_()
        assert b.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]


def test_int_einsum():
    for m in (torch, eg):
        a = m.arange(6).reshape(2, 3)
        assert m.einsum("ij,kj->ik", a, a).tolist() == [[5, 14], [14, 50]]


# -- errors ---------------------------------------------------------------------------------------
def _t(m, *shape, dtype="float64"):
    return m.zeros(*shape, dtype=getattr(m, dtype))


ERRORS = [
    (
        "ein_bcast",
        lambda m: m.einsum("ij,jk->ik", _t(m, 3, 2), _t(m, 4, 5)),
        "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously "
        "seen size 2",
    ),
    (
        "ein_out_missing",
        lambda m: m.einsum("ij,jk->ikl", _t(m, 3, 4), _t(m, 4, 5)),
        "einsum(): output subscript l does not appear in the equation for any input operand",
    ),
    (
        "ein_out_twice",
        lambda m: m.einsum("ij,jk->ii", _t(m, 3, 4), _t(m, 4, 5)),
        "einsum(): output subscript i appears more than once in the output",
    ),
    (
        "ein_few",
        lambda m: m.einsum("ij,jk", _t(m, 3, 4)),
        "einsum(): fewer operands were provided than specified in the equation",
    ),
    (
        "ein_many",
        lambda m: m.einsum("ij", _t(m, 3, 4), _t(m, 3, 4)),
        "einsum(): more operands were provided than specified in the equation",
    ),
    (
        "ein_ndim",
        lambda m: m.einsum("ijk", _t(m, 3, 4)),
        "einsum(): the number of subscripts in the equation (3) does not match the number of "
        "dimensions (2) for operand 0 and no ellipsis was given",
    ),
    (
        "ein_ndim_ell",
        lambda m: m.einsum("ijk...", _t(m, 3, 4)),
        "einsum(): the number of subscripts in the equation (3) is more than the number of "
        "dimensions (2) for operand 0",
    ),
    (
        "ein_dot",
        lambda m: m.einsum("i.j", _t(m, 3, 4)),
        "einsum(): found '.' for operand 0 that is not part of any ellipsis",
    ),
    (
        "ein_two_ell",
        lambda m: m.einsum("......", _t(m, 3, 4)),
        "einsum(): found '.' for operand 0 for which an ellipsis was already found",
    ),
    (
        "ein_char",
        lambda m: m.einsum("i1", _t(m, 3, 4)),
        "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be "
        "in [a-zA-Z]",
    ),
    (
        "ein_arrow2",
        lambda m: m.einsum("ij->ij->", _t(m, 3, 4)),
        "einsum(): invalid subscript given at index 6 in the equation string, subscripts must be "
        "in [a-zA-Z]",
    ),
    (
        "ein_repeat_size",
        lambda m: m.einsum("ii->i", _t(m, 3, 4)),
        "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 4 != 3",
    ),
    (
        "ein_ell_bcast",
        lambda m: m.einsum("...i,...i->...", _t(m, 2, 3, 4), _t(m, 3, 1, 4)),
        "einsum(): dimension 0 covered by ellipsis in operand 1has size 3 which does not "
        "broadcast with previously seen ellipsis with size 2 for the respective dimension",
    ),
    (
        "ein_dtype",
        lambda m: m.einsum("ij,jk", _t(m, 3, 4), _t(m, 4, 5, dtype="float32")),
        "expected scalar type Double but found Float",
    ),
    (
        "addmm_shapes",
        lambda m: m.addmm(_t(m, 3, 5), _t(m, 3, 4), _t(m, 3, 5)),
        "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x5)",
    ),
    (
        "addmm_1d",
        lambda m: m.addmm(_t(m, 3, 5), _t(m, 4), _t(m, 4, 5)),
        "mat1 must be a matrix, got 1-D tensor",
    ),
    (
        "addmm_3d",
        lambda m: m.addmm(_t(m, 3, 5), _t(m, 3, 4), _t(m, 2, 4, 5)),
        "mat2 must be a matrix, got 3-D tensor",
    ),
    (
        "addmm_input",
        lambda m: m.addmm(_t(m, 3, 2), _t(m, 3, 4), _t(m, 4, 5)),
        "The expanded size of the tensor (5) must match the existing size (2) at non-singleton "
        "dimension 1.  Target sizes: [3, 5].  Tensor sizes: [3, 2]",
    ),
    (
        "addmm_dtype12",
        lambda m: m.addmm(_t(m, 3, 5), _t(m, 3, 4, dtype="float32"), _t(m, 4, 5)),
        "mat1 and mat2 must have the same dtype, but got Float and Double",
    ),
    (
        "addmm_dtype_self",
        lambda m: m.addmm(_t(m, 3, 5, dtype="float32"), _t(m, 3, 4), _t(m, 4, 5)),
        "self and mat2 must have the same dtype, but got Float and Double",
    ),
    (
        "baddbmm_k",
        lambda m: m.baddbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 2, 3, 5)),
        "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 3].",
    ),
    (
        "baddbmm_batch",
        lambda m: m.baddbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 1, 4, 5)),
        "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [1, 4].",
    ),
    (
        "baddbmm_2d",
        lambda m: m.baddbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 4, 5)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    ),
    (
        "baddbmm_input",
        lambda m: m.baddbmm(_t(m, 3, 2), _t(m, 2, 3, 4), _t(m, 2, 4, 5)),
        "The expanded size of the tensor (5) must match the existing size (2) at non-singleton "
        "dimension 2.  Target sizes: [2, 3, 5].  Tensor sizes: [3, 2]",
    ),
    (
        "baddbmm_dtype",
        lambda m: m.baddbmm(_t(m, 3, 5), _t(m, 2, 3, 4, dtype="float32"), _t(m, 2, 4, 5)),
        "Input dtypes must be the same, got: input double, batch1: float, batch2: double",
    ),
    (
        "baddbmm_dtype2",
        lambda m: m.baddbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 2, 4, 5, dtype="float32")),
        "expected scalar type Double but found Float",
    ),
    (
        "addmv_size",
        lambda m: m.addmv(_t(m, 3), _t(m, 3, 4), _t(m, 3)),
        "size mismatch, got input (3), mat (3x4), vec (3)",
    ),
    (
        "addmv_input",
        lambda m: m.addmv(_t(m, 2), _t(m, 3, 4), _t(m, 4)),
        "size mismatch, got input (2), mat (3x4), vec (4)",
    ),
    (
        "addmv_ndim",
        lambda m: m.addmv(_t(m, 3), _t(m, 3, 4), _t(m, 4, 5)),
        "vector + matrix @ vector expected, got 1, 2, 2",
    ),
    (
        "addmv_dtype",
        lambda m: m.addmv(_t(m, 3), _t(m, 3, 4, dtype="float32"), _t(m, 4)),
        "addmv input tensors must have the same dtype, but got Double, Float, and Double",
    ),
    (
        "addbmm_batches",
        lambda m: m.addbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 1, 4, 5)),
        "batch1 and batch2 must have same number of batches, got 2 and 1",
    ),
    (
        "addbmm_sizes",
        lambda m: m.addbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 2, 3, 5)),
        "Incompatible matrix sizes for bmm (3x4 and 3x5)",
    ),
    (
        "addbmm_dtype",
        lambda m: m.addbmm(_t(m, 3, 5), _t(m, 2, 3, 4), _t(m, 2, 4, 5, dtype="float32")),
        "self and mat2 must have the same dtype, but got Double and Float",
    ),
    (
        "tensordot_neg",
        lambda m: m.tensordot(_t(m, 3, 4), _t(m, 4, 5), -1),
        "tensordot expects dims >= 0, but got dims=-1",
    ),
    (
        "tensordot_big",
        lambda m: m.tensordot(_t(m, 3, 4), _t(m, 4, 5), 3),
        "tensordot expects dims < ndim_a or ndim_b, but got dims=3",
    ),
    (
        "tensordot_size",
        lambda m: m.tensordot(_t(m, 3, 4), _t(m, 4, 5), ([1], [1])),
        "contracted dimensions need to match, but first has size 4 in dim 1 and second has size 5 "
        "in dim 1",
    ),
    (
        "cross_len",
        lambda m: m.cross(_t(m, 3, 3), _t(m, 2, 3), dim=0),
        "linalg.cross: inputs dimension 0 must have length 3. Got 3 and 2",
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


# -- gradcheck and double backward --------------------------------------------------------------
GRADCHECK = [
    case("ein_mm", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), R(2, 3), R(3, 2)),
    case("ein_diag", lambda m, F, a: m.einsum("iij->ij", a), R(3, 3, 2)),
    case("ein_lonely", lambda m, F, a, b: m.einsum("ij,k->ik", a, b), R(2, 3), R(2)),
    case("ein_bcast", lambda m, F, a, b: m.einsum("...i,...i->...", a, b), R(2, 1, 3), R(2, 3)),
    case("ein_named_bcast", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), R(3, 1), R(4, 2)),
    case(
        "ein_three", lambda m, F, a, b, c: m.einsum("ij,jk,k->i", a, b, c), R(2, 3), R(3, 2), R(2)
    ),
    case(
        "addmm",
        lambda m, F, i, a, b: m.addmm(i, a, b, beta=0.5, alpha=2),
        R(1, 2),
        R(2, 3),
        R(3, 2),
    ),
    case("baddbmm", lambda m, F, i, a, b: m.baddbmm(i, a, b, beta=2), R(2), R(2, 2, 3), R(2, 3, 2)),
    case("addmv", lambda m, F, i, a, b: m.addmv(i, a, b, alpha=-1), R(2), R(2, 3), R(3)),
    case(
        "addbmm",
        lambda m, F, i, a, b: m.addbmm(i, a, b, beta=3, alpha=0.5),
        R(2, 2),
        R(2, 2, 3),
        R(2, 3, 2),
    ),
    case("tensordot", lambda m, F, a, b: m.tensordot(a, b, ([1], [0])), R(2, 3), R(3, 2)),
    case("kron", lambda m, F, a, b: m.kron(a, b), R(2, 2), R(2)),
    case("cross", lambda m, F, a, b: m.cross(a, b, dim=1), R(2, 3), R(1, 3)),
]


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_gradcheck(name, fn, specs):
    rng = np.random.default_rng(seed_for(f"gradcheck-{name}"))
    tensors = [make_tensor(eg, sample(s, rng), s) for s in specs]
    assert eg.autograd.gradcheck(lambda *a: fn(eg, eg_F, *a), tensors)


@pytest.mark.parametrize("name, fn, specs", GRADCHECK)
def test_double_backward(name, fn, specs):
    def run(m, F, *xs):
        y = fn(m, F, *xs)
        gs = m.autograd.grad((y * y).sum(), xs, create_graph=True)
        return sum((g * g).sum() for g in gs)

    compare_with_torch(f"dbl-{name}", run, specs)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device (cupy)")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (2, 4, 3), (3, 3))]
    for fn in (
        lambda m, a, b, c: m.einsum("bij,bjk->ik", a, b),
        lambda m, a, b, c: m.baddbmm(c, a, b, beta=0.5),
        lambda m, a, b, c: m.addbmm(c, a, b),
        lambda m, a, b, c: m.tensordot(a, b, ([1, 2], [2, 1])),
        lambda m, a, b, c: m.cross(c, c.flip(0), dim=0),
    ):
        outs = []
        for dev in ("cpu", "cuda"):
            ts = [eg.tensor(x, device=dev, requires_grad=True) for x in arrays]
            y = fn(eg, *ts)
            (y * y).sum().backward()
            outs.append(
                [y.cpu().detach().numpy()]
                + [t.grad.cpu().numpy() if t.grad is not None else None for t in ts]
            )
        for a, b in zip(*outs):
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
