"""Writes through views checked by finite differences (gradcheck, and gradgradcheck for the
second derivatives) and by custom Functions that write their input (mark_dirty): the kinds of
checks PyTorch's own autograd tests make of views, run on the engine."""

import pytest

import engine as eg
from engine.autograd import gradcheck, gradgradcheck


def _double(*shape, requires_grad=True):
    return eg.randn(*shape, dtype=eg.float64, requires_grad=requires_grad)


def test_two_writes_through_views_of_views():
    def fn(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x

    a, b = _double(4, 4), _double(2, 2)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_a_write_through_a_view_makes_the_base_require_grad():
    seen = []

    def fn(root, b):
        x = root.clone()
        seen.append(x.requires_grad)
        x.narrow(1, 2, 2).mul_(b)
        seen.append(x.requires_grad)
        return x

    assert gradcheck(fn, (_double(4, 4, requires_grad=False), _double(4, 2)))
    assert seen[:2] == [False, True]


def test_a_write_into_the_base_reaches_an_earlier_view():
    def fn(r):
        x = eg.ones(5, dtype=eg.float64)
        v = x.select(0, 1)
        assert not v.requires_grad and v.grad_fn is None
        x.add_(r)
        assert v.requires_grad
        return v

    r = eg.ones(1, dtype=eg.float64, requires_grad=True)
    assert gradcheck(fn, (r,))
    assert gradgradcheck(fn, (r,))


def test_a_non_contiguous_leaf_written_through_views_of_its_clone():
    root = eg.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
    x = root.clone()
    x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1], [1, 1]]


def test_the_view_written_gives_its_gradient_to_the_multiplier():
    a = eg.tensor([2.0, 5.0])
    b = eg.tensor([3.0], requires_grad=True)
    a.narrow(0, 1, 1).mul_(b).sum().backward()
    assert b.grad.tolist() == [5.0]
    assert not a.is_leaf  # the write made it part of the graph (CopySlices): it keeps no .grad
    assert a._grad is None


def test_reading_grad_fn_under_no_grad_changes_nothing():
    a = eg.ones(3, 1, dtype=eg.float64, requires_grad=True)
    c = (a * 2).view_as(a)
    c[0][0] = 3
    with eg.no_grad():
        assert c.grad_fn is not None
    c.sum().backward()
    assert a.grad.tolist() == [[0.0], [2.0], [2.0]]


class _AddInPlace(eg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.mark_dirty(x)
        x.add_(y)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


def test_a_custom_function_writing_through_a_view():
    def fn(root, b):
        x = root.clone()
        _AddInPlace.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        _AddInPlace.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x

    assert gradcheck(fn, (_double(4, 4), _double(2, 2)))


def test_a_custom_function_writing_a_leaf_is_refused():
    x = _double(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        _AddInPlace.apply(x, _double(3))


def test_expanded_input_gradients():
    mat = _double(2, 2, requires_grad=False)
    vec = _double(1)
    assert gradcheck(lambda v: (mat @ v.expand(2)).sum(), (vec,))
    assert gradgradcheck(lambda v: (mat @ v.expand(2)).sum(), (vec,))
