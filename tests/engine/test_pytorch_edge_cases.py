"""Corners where numpy's rules and PyTorch's differ, checked against torch: where mixed advanced
indices land, lists read as tuples, reductions over dim 0 of a 0-d tensor, pow's gradient at 0,
a sum in a wider dtype, numpy's argument names (`axis`, `keepdims`), `where` with numbers."""

import warnings

import numpy as np
import pytest
import torch

import engine as eg


def _same(fn):
    """Run fn(m) on both libraries; compare results (tensors, tuples, numbers) or error texts."""
    out = []
    for m in (torch, eg):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(("ok", _plain(fn(m))))
        except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
            out.append((type(exc).__name__, str(exc)))
    assert out[1][0] == out[0][0], out
    if out[0][0] != "ok":
        assert out[1][1] == out[0][1]
        return
    _assert_close(out[1][1], out[0][1])


def _plain(r):
    if isinstance(r, (torch.Tensor, eg.Tensor)):
        return (str(r.dtype).split(".")[-1], np.asarray(r.detach().cpu().tolist(), dtype=float))
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    if isinstance(r, (torch.dtype, eg.dtype)):
        return str(r).split(".")[-1]
    return r


def _assert_close(a, b):
    if isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y)
    elif isinstance(b, tuple) and len(b) == 2 and isinstance(b[1], np.ndarray):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6, equal_nan=True)
    else:
        assert a == b


X = np.arange(120.0).reshape(2, 3, 4, 5)

INDEX = {
    "int_slice_list": lambda t, L: t[0, :, L([0, 1])],
    "list_slice_list": lambda t, L: t[L([0, 1]), :, L([0, 1])],
    "slice_list_list": lambda t, L: t[:, L([0, 1]), L([1, 2])],
    "list_int": lambda t, L: t[L([0, 1]), 1],
    "int_list_slice_int": lambda t, L: t[1, L([0, 2]), :, 3],
    "none_list": lambda t, L: t[None, L([0, 1])],
    "nested_list_read_as_tuple": lambda t, L: t[[[0, 1], [1, 0]]],
    "tuple_inside_index": lambda t, L: t[(0, 1), 2],
    "bool_mask": lambda t, L: t[t > 60],
    "bool_list_dim1": lambda t, L: t[:, L([True, False, True])],
    "ellipsis_list": lambda t, L: t[..., L([0, 1])],
    "list_ellipsis_list": lambda t, L: t[L([0, 1]), ..., L([0, 1])],
}


@pytest.mark.parametrize("case", list(INDEX))
def test_advanced_index_placement_and_gradient(case):
    def fn(m):
        x = m.tensor(X, requires_grad=True)
        y = INDEX[case](x, lambda v: m.tensor(v))
        w = m.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)))
        (y * w).sum().backward()
        return y, x.grad

    _same(fn)


def _grad_0d(fn):
    def run(m):
        x = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        y = fn(m, x)
        y.sum().backward()
        return y, x.grad

    return run


ZERO_D = {
    "sum_dim0": lambda m, x: x.sum(0),
    "sum_dim-1": lambda m, x: x.sum(-1),
    "sum_dims": lambda m, x: x.sum((0, -1)),
    "mean_dim0": lambda m, x: x.mean(0, keepdim=True),
    "softmax": lambda m, x: x.softmax(0),
    "log_softmax": lambda m, x: x.log_softmax(-1),
    "amax": lambda m, x: x.amax(0),
    "var": lambda m, x: x.var(0),
    "std_no_correction": lambda m, x: x.std(0, correction=0),
    "logsumexp": lambda m, x: x.logsumexp(0),
    "dim_out_of_range": lambda m, x: x.sum(1),
}


@pytest.mark.parametrize("case", list(ZERO_D))
def test_reductions_of_a_0d_tensor(case):
    _same(_grad_0d(ZERO_D[case]))


def _pow_grads(base, exponent):
    def run(m):
        x = m.tensor(base, dtype=m.float64, requires_grad=True)
        y = m.tensor(exponent, dtype=m.float64, requires_grad=True)
        (x**y).sum().backward()
        return x.grad, y.grad

    return run


@pytest.mark.parametrize(
    "base,exponent",
    [(0.0, 2.0), (0.0, 0.0), ([0.0, 1.0, 2.0], [0.0, 0.0, 3.0]), (0.0, -1.0), (-2.0, 0.5)],
)
def test_pow_gradient_at_zero(base, exponent):
    _same(_pow_grads(base, exponent))


@pytest.mark.parametrize("base", [0, 0.0, 2.0])
def test_number_to_a_tensor_power_at_zero(base):
    def run(m):
        x = m.tensor([-1.0, 0.0, 1.5], dtype=m.float64, requires_grad=True)
        (base**x).sum().backward()
        return x.grad

    _same(run)


def test_tensor_to_the_zero_at_zero():
    def run(m):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        (x**0).sum().backward()
        return x.grad

    _same(run)


def test_sum_in_a_wider_dtype_gives_the_input_dtype_gradient():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.sum(dtype=m.float64)
        y.backward()
        return y.dtype, x.grad.dtype, x.grad

    _same(run)


NUMPY_NAMES = {
    "sum_axis": lambda m, x: x.sum(axis=0),
    "sum_function": lambda m, x: m.sum(x, axis=1, keepdims=True),
    "mean": lambda m, x: m.mean(x, axis=1, keepdim=True),
    "max": lambda m, x: x.max(axis=1).values,
    "argmax": lambda m, x: x.argmax(axis=1),
    "softmax": lambda m, x: x.softmax(axis=1),
    "cat": lambda m, x: m.cat([x, x], axis=1),
    "std": lambda m, x: x.std(axis=1),
    "prod": lambda m, x: x.prod(axis=0),
    "cumsum": lambda m, x: x.cumsum(axis=1),
    "input_as_x": lambda m, x: m.sum(x=x, axis=0),
    "both_names": lambda m, x: m.sum(x, dim=0, axis=0),
    # swapaxes takes numpy's names (axis0, axis1), swapdims PyTorch's (dim0, dim1)
    "swapaxes_method": lambda m, x: x.swapaxes(axis0=0, axis1=1),
    "swapaxes_function": lambda m, x: m.swapaxes(x, axis0=1, axis1=0),
    "swapdims_method": lambda m, x: x.swapdims(dim0=0, dim1=1),
    "moveaxis_method": lambda m, x: x.moveaxis(source=0, destination=1),
}


@pytest.mark.parametrize("case", list(NUMPY_NAMES))
def test_numpy_argument_names(case):
    _same(lambda m: NUMPY_NAMES[case](m, m.tensor([[1.0, 2.0], [3.0, 4.5]])))


WHERE = {
    "two_floats": lambda m, c: m.where(c, 1.0, 0.0),
    "two_ints": lambda m, c: m.where(c, 1, 0),
    "tensor_and_int": lambda m, c: m.where(c, m.tensor([1, 2]), 0),
    "int_tensor_and_float": lambda m, c: m.where(c, m.tensor([1, 2]), 0.5),
    "condition_only": lambda m, c: m.where(c),
}


@pytest.mark.parametrize("case", list(WHERE))
def test_where_with_numbers(case):
    _same(lambda m: WHERE[case](m, m.tensor([True, False])))


def test_misspelt_rounding_mode_is_refused():
    _same(lambda m: m.div(m.tensor([1.0]), 2, rounding_mode="flor"))


# var/std (and var_mean/std_mean) with correction >= N: PyTorch divides by max(0, N - correction),
# so the value is inf (nan for 0/0); the gradient of a whole-tensor reduction is inf (nan where
# x is the mean), over named dims it keeps 2 / (N - correction)
MOMENTS = {
    "var_c2": lambda m, x: x.var(correction=2),
    "std_c3": lambda m, x: x.std(correction=3),
    "var_dim_c2": lambda m, x: x.var(1, correction=2),
    "var_dim_c4": lambda m, x: x.var(1, correction=4, keepdim=True),
    "std_dim_c2": lambda m, x: x.std(1, correction=2),
    "std_dim_c4": lambda m, x: x.std(1, correction=4),
    "var_all_dims_c9": lambda m, x: x.var((0, 1), correction=9),
    "var_one_element": lambda m, x: x[:1, :1].var(),
    "var_mean_c2": lambda m, x: m.var_mean(x, 1, correction=2),
    "std_mean_c7": lambda m, x: m.std_mean(x, correction=7),
}


@pytest.mark.parametrize("case", list(MOMENTS))
def test_moments_without_degrees_of_freedom(case):
    a = np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 3.0]])[:, :2]

    def run(m):
        x = m.tensor(a, requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = MOMENTS[case](m, x)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        return [o.detach().numpy() for o in outs], x.grad.numpy(), [str(w.message) for w in rec]

    (t_out, t_grad, t_warn), (e_out, e_grad, e_warn) = run(torch), run(eg)
    for t, e in zip(t_out, e_out):
        np.testing.assert_array_equal(e, t)
    np.testing.assert_array_equal(e_grad, t_grad)
    assert [w.split(" (Triggered")[0] for w in t_warn] == e_warn
