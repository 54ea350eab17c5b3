"""Autograd semantics of the engine, checked scenario by scenario against PyTorch."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch
from _semantics_helpers import (
    LIBS,
    assert_same_error,
    assert_tree_close,
    check_same,
    eg,
    graph_structure,
    node_name,
    record_warnings,
    run_both,
    to_py,
)


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    for lib in LIBS:
        lib.set_grad_enabled(True)


def leaf(lib, data=(1.0, 2.0, 3.0), dtype=None):
    return lib.tensor(list(data), dtype=dtype, requires_grad=True)


# --------------------------------------------------------------------------------------
# leaf / non-leaf, requires_grad propagation
# --------------------------------------------------------------------------------------


def _flags(t):
    return [t.is_leaf, t.requires_grad, t.grad_fn is None]


LEAF_CASES = {
    "plain_tensor": lambda lib: lib.tensor([1.0, 2.0]),
    "leaf_requires_grad": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "op_on_leaf": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
    "op_on_plain": lambda lib: lib.tensor([1.0, 2.0]) * 2,
    "mixed_operands": lambda lib: lib.tensor([1.0], requires_grad=True) + lib.tensor([2.0]),
    "plain_plus_plain": lambda lib: lib.tensor([1.0]) + lib.tensor([2.0]),
    "sum_of_op": lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) ** 2).sum(),
    "detached": lambda lib: (lib.tensor([1.0], requires_grad=True) * 2).detach(),
    "requires_grad_method": lambda lib: lib.tensor([1.0]).requires_grad_(),
    "requires_grad_method_false": lambda lib: lib.tensor([1.0], requires_grad=True).requires_grad_(
        False
    ),
    "zeros_requires_grad": lambda lib: lib.zeros(2, requires_grad=True),
    "ones_requires_grad": lambda lib: lib.ones(2, 2, requires_grad=True),
    "float64_leaf": lambda lib: lib.tensor([1.0], dtype=lib.float64, requires_grad=True),
    "int_op_on_float_leaf": lambda lib: lib.tensor([1.0], requires_grad=True) * lib.tensor([2]),
}


@pytest.mark.parametrize("case", sorted(LEAF_CASES))
def test_leaf_flags_match_torch(case):
    check_same(lambda lib: _flags(LEAF_CASES[case](lib)))


def test_requires_grad_method_returns_self():
    t = eg.tensor([1.0, 2.0])
    assert t.requires_grad_() is t
    assert t.requires_grad is True


def test_setting_requires_grad_attribute_on_leaf():
    def scenario(lib):
        t = lib.tensor([1.0, 2.0])
        t.requires_grad = True
        (t * t).sum().backward()
        return [t.requires_grad, t.is_leaf, t.grad]

    check_same(scenario)


def test_grad_fn_names_of_basic_ops():
    def scenario(lib):
        x = leaf(lib)
        return [
            (x + 1).grad_fn.name(),
            (x * x).grad_fn.name(),
            (x - 1).grad_fn.name(),
            (x / 2).grad_fn.name(),
            (x**2).grad_fn.name(),
            x.exp().grad_fn.name(),
            x.sum().grad_fn.name(),
            (-x).grad_fn.name(),
        ]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# backward basics, accumulation, retain_graph
# --------------------------------------------------------------------------------------


def test_grad_is_plain_tensor_after_backward():
    def scenario(lib):
        x = leaf(lib)
        (x**2).sum().backward()
        return [x.grad, x.grad.requires_grad, x.grad.grad_fn is None, x.grad.shape == x.shape]

    check_same(scenario)


def test_leaf_without_grad_keeps_grad_none():
    def scenario(lib):
        x = leaf(lib)
        c = lib.tensor([1.0, 1.0, 2.0])
        (x * c).sum().backward()
        return [x.grad, c.grad]

    check_same(scenario)


def test_gradient_accumulates_across_two_backward_calls():
    def scenario(lib):
        x = leaf(lib)
        (x**2).sum().backward()
        first = x.grad * 1
        (x * 3).sum().backward()
        return [first, x.grad]

    check_same(scenario)


def test_grad_reset_to_none_and_zero_():
    def scenario(lib):
        x = leaf(lib)
        (x**2).sum().backward()
        x.grad.zero_()
        (x * 3).sum().backward()
        after_zero = x.grad * 1
        x.grad = None
        (x * 5).sum().backward()
        return [after_zero, x.grad]

    check_same(scenario)


def test_backward_with_gradient_argument():
    def scenario(lib):
        x = leaf(lib)
        y = x * x
        y.backward(lib.tensor([1.0, 0.5, -1.0]))
        x2 = leaf(lib)
        s = (x2 * x2).sum()
        s.backward(lib.tensor(2.0))
        return [x.grad, x2.grad]

    check_same(scenario)


def test_retain_graph_allows_second_backward_and_accumulates():
    def scenario(lib):
        x = leaf(lib)
        z = x.exp().sum()
        z.backward(retain_graph=True)
        once = x.grad * 1
        z.backward()
        return [once, x.grad]

    check_same(scenario)


def _second_backward(lib):
    x = leaf(lib)
    z = x.exp().sum()
    z.backward()
    z.backward()


def _second_backward_after_retain(lib):
    x = leaf(lib)
    z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    z.backward()


def _second_grad_call(lib):
    x = leaf(lib)
    z = (x**2).sum()
    lib.autograd.grad(z, x)
    lib.autograd.grad(z, x)


def _backward_then_grad(lib):
    x = leaf(lib)
    y = x.exp()
    y.sum().backward()
    (y * 2).sum().backward()


SECOND_TIME = "Trying to backward through the graph a second time"


@pytest.mark.parametrize(
    "fn",
    [_second_backward, _second_backward_after_retain, _second_grad_call, _backward_then_grad],
    ids=lambda f: f.__name__.lstrip("_"),
)
def test_backward_twice_raises_like_torch(fn):
    assert_same_error(fn, SECOND_TIME, "retain_graph=True")


def test_graph_without_saved_tensors_can_backward_twice():
    def scenario(lib):
        x = leaf(lib)
        s = (x + 1).sum()
        s.backward()
        s.backward()
        return x.grad

    check_same(scenario)


def test_create_graph_retains_graph_by_default():
    def scenario(lib):
        x = leaf(lib)
        s = (x**3).sum()
        (g,) = lib.autograd.grad(s, x, create_graph=True)
        (g2,) = lib.autograd.grad(s, x)
        return [g, g2]

    check_same(scenario)


def test_preset_grad_is_accumulated_into():
    def scenario(lib):
        x = leaf(lib)
        x.grad = lib.tensor([1.0, -1.0, 0.5])
        (x * x).sum().backward()
        return x.grad

    check_same(scenario)


def test_autograd_grad_retain_graph_allows_second_call():
    def scenario(lib):
        x = leaf(lib)
        z = (x**3).sum()
        (g1,) = lib.autograd.grad(z, x, retain_graph=True)
        (g2,) = lib.autograd.grad(z, x)
        return [g1, g2, x.grad]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


def _nonscalar_backward(lib):
    (leaf(lib) * 2).backward()


def _nonscalar_grad(lib):
    x = leaf(lib)
    lib.autograd.grad(x * 2, x)


def _no_grad_backward(lib):
    lib.tensor([1.0, 2.0]).sum().backward()


def _no_grad_backward_created_in_no_grad(lib):
    x = leaf(lib)
    with lib.no_grad():
        y = (x * 2).sum()
    y.backward()


def _inplace_leaf_add(lib):
    leaf(lib).add_(1)


def _inplace_leaf_mul(lib):
    leaf(lib).mul_(2)


def _inplace_leaf_iadd(lib):
    x = leaf(lib)
    x += 1


def _inplace_leaf_zero(lib):
    leaf(lib).zero_()


def _inplace_leaf_fill(lib):
    leaf(lib).fill_(1.0)


def _inplace_leaf_copy(lib):
    leaf(lib).copy_(lib.ones(3))


def _inplace_leaf_clamp(lib):
    leaf(lib).clamp_(min=0.0)


def _inplace_slice_of_leaf(lib):
    leaf(lib)[:2].add_(1)


def _inplace_view_of_leaf(lib):
    leaf(lib).view(3, 1).mul_(2)


def _inplace_view_of_a_view_of_leaf(lib):
    leaf(lib).unsqueeze(0)[0].zero_()


def _setitem_on_a_view_of_leaf(lib):
    v = leaf(lib)[1:]
    v[0] = 5.0


def test_in_place_on_a_view_of_a_non_leaf_or_without_grad_is_allowed_as_in_torch():
    def outcome(lib):
        x = leaf(lib)
        y = (x * 2)[:2]
        y.add_(1)  # a view of a non-leaf: allowed
        with lib.no_grad():
            x[1:].mul_(10)  # no grad mode: the leaf's values change
        return y.detach().tolist(), x.detach().tolist()

    assert outcome(eg) == outcome(torch)


def _modified_saved_output(lib):
    x = leaf(lib)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _modified_saved_input(lib):
    a = leaf(lib)
    b = a * 2
    c = b * b
    b.add_(1)
    c.sum().backward()


def _modified_through_detach(lib):
    x = leaf(lib)
    y = x**2
    x.detach().mul_(2)
    y.sum().backward()


def _int_tensor_requires_grad(lib):
    lib.tensor([1, 2], requires_grad=True)


def _int_tensor_set_requires_grad(lib):
    t = lib.tensor([1, 2])
    t.requires_grad = True


def _int_tensor_requires_grad_(lib):
    lib.tensor([1, 2]).requires_grad_()


def _bool_tensor_requires_grad(lib):
    lib.tensor([True, False], requires_grad=True)


def _int_zeros_requires_grad(lib):
    lib.zeros(2, dtype=lib.int64, requires_grad=True)


def _nonleaf_requires_grad_false(lib):
    y = leaf(lib) * 2
    y.requires_grad = False


def _nonleaf_requires_grad_false_method(lib):
    y = leaf(lib) * 2
    y.requires_grad_(False)


def _nonleaf_requires_grad_true(lib):
    y = leaf(lib) * 2
    y.requires_grad = True


def _assign_grad_of_wrong_shape(lib):
    x = leaf(lib)
    x.grad = lib.ones(2)


def _hook_on_tensor_without_grad(lib):
    lib.tensor([1.0]).register_hook(lambda g: g)


def _grad_unused_input(lib):
    x = leaf(lib)
    u = leaf(lib)
    lib.autograd.grad((x * x).sum(), [x, u])


def _grad_input_without_grad(lib):
    x = leaf(lib)
    lib.autograd.grad((x * x).sum(), [x, lib.tensor([1.0])])


MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace"
VERSION = "is at version 1; expected version 0 instead"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of " + LEAF_INPLACE

ERROR_CASES = [
    (_nonscalar_backward, ("grad can be implicitly created only for scalar outputs",)),
    (_nonscalar_grad, ("grad can be implicitly created only for scalar outputs",)),
    (
        _no_grad_backward,
        ("element 0 of tensors does not require grad and does not have a grad_fn",),
    ),
    (_no_grad_backward_created_in_no_grad, ("element 0 of tensors does not require grad",)),
    (_inplace_leaf_add, (LEAF_INPLACE,)),
    (_inplace_leaf_mul, (LEAF_INPLACE,)),
    (_inplace_leaf_iadd, (LEAF_INPLACE,)),
    (_inplace_leaf_zero, (LEAF_INPLACE,)),
    (_inplace_leaf_fill, (LEAF_INPLACE,)),
    (_inplace_leaf_copy, (LEAF_INPLACE,)),
    (_inplace_leaf_clamp, (LEAF_INPLACE,)),
    (_inplace_slice_of_leaf, (VIEW_OF_LEAF,)),
    (_inplace_view_of_leaf, (VIEW_OF_LEAF,)),
    (_inplace_view_of_a_view_of_leaf, (VIEW_OF_LEAF,)),
    (_setitem_on_a_view_of_leaf, (VIEW_OF_LEAF,)),
    (_modified_saved_output, (MODIFIED, VERSION)),
    (_modified_saved_input, (MODIFIED, VERSION)),
    (_modified_through_detach, (MODIFIED, VERSION)),
    (_int_tensor_requires_grad, ()),
    (_int_tensor_set_requires_grad, ()),
    (_int_tensor_requires_grad_, ()),
    (_bool_tensor_requires_grad, ()),
    (_int_zeros_requires_grad, ()),
    (_nonleaf_requires_grad_false, ("you can only change requires_grad flags of leaf variables",)),
    (
        _nonleaf_requires_grad_false_method,
        ("you can only change requires_grad flags of leaf variables",),
    ),
    (_nonleaf_requires_grad_true, ("you can only change requires_grad flags of leaf variables",)),
    (_assign_grad_of_wrong_shape, ()),
    (_hook_on_tensor_without_grad, ()),
    (_grad_unused_input, ("Set allow_unused=True if this is the desired behavior",)),
    (_grad_input_without_grad, ()),
]


@pytest.mark.parametrize(
    "fn,phrases", ERROR_CASES, ids=[f.__name__.lstrip("_") for f, _ in ERROR_CASES]
)
def test_error_type_and_text_match_torch(fn, phrases):
    assert_same_error(fn, *phrases)


def test_error_message_exact_for_short_messages():
    # These messages are short and fixed in torch: the engine's should be identical.
    for fn in (
        _nonscalar_backward,
        _no_grad_backward,
        _inplace_leaf_add,
        _inplace_slice_of_leaf,
        _int_tensor_requires_grad,
        _int_tensor_set_requires_grad,
    ):
        texc, eexc = assert_same_error(fn)
        assert str(eexc) == str(texc), fn.__name__


# What produced the modified tensor: torch words it "output 0 of Mul" (MulBackward0), "Sum1"
# (SumBackward1), "AsStrided" for any view; the whole message must be torch's.
PRODUCERS = {
    "mul": lambda lib, x: x * 2,
    "exp_saves_its_output": lambda lib, x: x.exp(),
    "sum_dim": lambda lib, x: (x.reshape(2, 1) * lib.ones(2, 2)).sum(1),
    "rsub": lambda lib, x: 10 - x,
    "view": lambda lib, x: (x * 1).view(2),
    "view_of_a_leaf": lambda lib, x: x.view(2),
    "slice": lambda lib, x: (x * 1)[0:2],
    "t": lambda lib, x: (x.reshape(1, 2) * 1).t(),
}


@pytest.mark.parametrize("producer", PRODUCERS)
def test_modified_saved_tensor_message_is_torchs_whole(producer):
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = PRODUCERS[producer](lib, x)
        y = (h * h).sum()
        with lib.no_grad():
            h.add_(1)
        y.backward()

    texc, eexc = assert_same_error(fn, MODIFIED)
    assert str(eexc) == str(texc)


@pytest.mark.parametrize("fn", [_modified_saved_output, _modified_saved_input])
def test_modified_saved_tensor_message_exact(fn):
    texc, eexc = assert_same_error(fn, MODIFIED)
    assert str(eexc) == str(texc)


def test_inplace_on_leaf_allowed_under_no_grad():
    def scenario(lib):
        w = leaf(lib)
        (w * w).sum().backward()
        with lib.no_grad():
            w.sub_(0.1 * w.grad)
        return [w, w.is_leaf, w.requires_grad, w.grad_fn is None]

    check_same(scenario)


def test_nonleaf_grad_access_warns_like_torch():
    def access(lib):
        y = leaf(lib) * 2
        return y.grad

    (tres, twarn), (eres, ewarn) = record_warnings(access, torch), record_warnings(access, eg)
    assert tres is None and eres is None
    assert [c for c, _ in twarn] == [UserWarning]
    assert [c for c, _ in ewarn] == [UserWarning], ewarn
    start = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"
    assert twarn[0][1].startswith(start)
    assert ewarn[0][1].startswith(start), ewarn[0][1]


def test_no_warning_for_retained_nonleaf_and_leaf():
    def access(lib):
        x = leaf(lib)
        y = x * 2
        y.retain_grad()
        return [x.grad, y.grad]

    for lib in LIBS:
        _, caught = record_warnings(access, lib)
        assert caught == [], (lib.__name__, caught)


# --------------------------------------------------------------------------------------
# hooks
# --------------------------------------------------------------------------------------


def test_leaf_hook_runs_before_accumulation_and_replaces_grad():
    def scenario(lib):
        x = leaf(lib)
        seen = []

        def hook(g):
            seen.append([g * 1, x.grad])
            return g * 2

        x.register_hook(hook)
        (x**2).sum().backward()
        (x**2).sum().backward()
        return [seen, x.grad]

    check_same(scenario)


def test_hook_returning_none_keeps_grad():
    def scenario(lib):
        x = leaf(lib)
        seen = []
        x.register_hook(lambda g: seen.append(g * 1))
        (x * 3).sum().backward()
        return [seen, x.grad]

    check_same(scenario)


def test_nonleaf_hook_modifies_upstream_grads():
    def scenario(lib):
        x = leaf(lib)
        y = x * x
        seen = []

        def hook(g):
            seen.append(g * 1)
            return g + 1

        y.register_hook(hook)
        (y * 3).sum().backward()
        return [seen, x.grad]

    check_same(scenario)


def test_multiple_hooks_run_in_registration_order_and_chain():
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        order = []
        y.register_hook(lambda g: order.append(("a", g * 1)) or g + 1)
        y.register_hook(lambda g: order.append(("b", g * 1)) or g * 10)
        x.register_hook(lambda g: order.append(("x1", g * 1)))
        x.register_hook(lambda g: order.append(("x2", g * 1)) or -g)
        y.sum().backward()
        return [order, x.grad]

    check_same(scenario)


def test_hook_on_tensor_used_twice_runs_once_with_summed_grad():
    def scenario(lib):
        x = leaf(lib, (1.0, 2.0))
        y = x * 2
        calls = []
        y.register_hook(lambda g: calls.append(["y", g * 1]))
        x.register_hook(lambda g: calls.append(["x", g * 1]))
        (y * y + y + x).sum().backward()
        return [calls, x.grad]

    check_same(scenario)


def test_handle_remove_stops_hook():
    def scenario(lib):
        x = leaf(lib)
        calls = []
        h1 = x.register_hook(lambda g: calls.append("h1") or g * 100)
        x.register_hook(lambda g: calls.append("h2"))
        h1.remove()
        (x * 2).sum().backward()
        y = x * 1
        hy = y.register_hook(lambda g: calls.append("hy") or g * 0)
        hy.remove()
        y.sum().backward()
        return [calls, x.grad]

    check_same(scenario)


def test_hook_removed_between_backwards():
    def scenario(lib):
        x = leaf(lib)
        handle = x.register_hook(lambda g: g * 10)
        (x * 1).sum().backward()
        first = x.grad * 1
        handle.remove()
        (x * 1).sum().backward()
        return [first, x.grad]

    check_same(scenario)


def _tuple_to_list(ts):
    return [None if t is None else t * 1 for t in ts]


def test_node_hooks_receive_same_arguments_as_torch():
    def scenario(lib):
        x = leaf(lib)
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        z = x * w
        rec = {}

        def pre(grad_outputs):
            rec["pre_type"] = type(grad_outputs).__name__
            rec["pre"] = _tuple_to_list(grad_outputs)

        def post(grad_inputs, grad_outputs):
            rec["post_types"] = [type(grad_inputs).__name__, type(grad_outputs).__name__]
            rec["grad_inputs"] = _tuple_to_list(grad_inputs)
            rec["grad_outputs"] = _tuple_to_list(grad_outputs)

        z.grad_fn.register_prehook(pre)
        z.grad_fn.register_hook(post)
        (z * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [rec, x.grad, w.grad]

    check_same(scenario)


def test_node_hook_grad_inputs_have_none_for_constant_input():
    def scenario(lib):
        x = leaf(lib)
        z = x * 3
        rec = []
        z.grad_fn.register_hook(lambda gi, go: rec.append([_tuple_to_list(gi), _tuple_to_list(go)]))
        z.sum().backward()
        return rec

    check_same(scenario)


def test_node_prehook_and_hook_can_replace_gradients():
    def scenario(lib):
        x = leaf(lib)
        y = x * x
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        x2 = leaf(lib)
        y2 = x2 * x2
        y2.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))
        (y.sum() + y2.sum()).backward()
        return [x.grad, x2.grad]

    check_same(scenario)


def test_hook_order_tensor_hook_retain_grad_node_hooks_match_torch():
    def scenario(lib):
        x = leaf(lib, (1.0, 2.0))
        y = x * 3
        events = []

        def snap(t):
            return None if t is None else t * 1

        y.retain_grad()  # registered first, but retain_grad's hook runs after tensor hooks
        y.register_hook(lambda g: events.append(["t1", g * 1, snap(y.grad)]) or g * 2)
        y.grad_fn.register_prehook(
            lambda go: events.append(["pre", _tuple_to_list(go), snap(y.grad)])
        )
        y.grad_fn.register_hook(
            lambda gi, go: events.append(["post", _tuple_to_list(gi), _tuple_to_list(go)])
        )
        y.register_hook(lambda g: events.append(["t2", g * 1, snap(y.grad)]))
        x.register_hook(lambda g: events.append(["x", g * 1, snap(x.grad)]))
        (y * y).sum().backward()
        return [events, y.grad, x.grad]

    check_same(scenario)


def test_retain_grad_flags_and_values():
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        z = y.exp()
        before = [x.retains_grad, y.retains_grad]
        y.retain_grad()
        y.retain_grad()  # idempotent
        x.retain_grad()  # no-op on a leaf
        z.sum().backward()
        return [before, x.retains_grad, y.retains_grad, z.retains_grad, y.grad, x.grad]

    check_same(scenario)


def test_retain_grad_accumulates_over_retained_backwards():
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        y.retain_grad()
        s = (y * y).sum()
        s.backward(retain_graph=True)
        s.backward()
        return [y.grad, x.grad]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# detach
# --------------------------------------------------------------------------------------


def test_detach_flags():
    def scenario(lib):
        x = leaf(lib)
        d = x.detach()
        d2 = (x * 2).detach()
        return [_flags(d), _flags(d2), d, d2]

    check_same(scenario)


def test_detach_shares_storage_both_ways():
    def scenario(lib):
        x = leaf(lib)
        d = x.detach()
        d.add_(1)
        after_add = x * 1
        d.mul_(2)
        with lib.no_grad():
            x.sub_(1)
        return [after_add, x, d, x.requires_grad, d.requires_grad]

    check_same(scenario)


def test_detach_shares_version_counter():
    def scenario(lib):
        x = leaf(lib)
        d = x.detach()
        v0 = [x._version, d._version]
        d.add_(1)
        v1 = [x._version, d._version]
        d.zero_()
        return [v0, v1, x._version, d._version]

    check_same(scenario)


def test_no_grad_flows_through_detach():
    def scenario(lib):
        x = leaf(lib)
        y = x.detach() * x + x.detach() ** 2
        y.sum().backward()
        return [x.grad]

    check_same(scenario)


def test_detached_tensor_can_require_grad_independently():
    def scenario(lib):
        x = leaf(lib)
        d = x.detach().requires_grad_()
        (d * d).sum().backward()
        return [d.grad, x.grad]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# grad modes
# --------------------------------------------------------------------------------------


def _mode_probe(lib, t):
    y = t * 2
    return [lib.is_grad_enabled(), y.requires_grad, y.grad_fn is None, y.is_leaf]


def test_no_grad_context():
    def scenario(lib):
        x = leaf(lib)
        with lib.no_grad():
            inside = _mode_probe(lib, x)
        return [inside, _mode_probe(lib, x)]

    check_same(scenario)


def test_no_grad_decorator():
    def scenario(lib):
        x = leaf(lib)

        @lib.no_grad()
        def f(t):
            return _mode_probe(lib, t)

        return [f(x), _mode_probe(lib, x), f.__name__]

    check_same(scenario)


def test_nested_enable_grad_inside_no_grad():
    def scenario(lib):
        x = leaf(lib)
        out = []
        with lib.no_grad():
            out.append(_mode_probe(lib, x))
            with lib.enable_grad():
                out.append(_mode_probe(lib, x))
                with lib.no_grad():
                    out.append(_mode_probe(lib, x))
                out.append(_mode_probe(lib, x))
            out.append(_mode_probe(lib, x))
        out.append(_mode_probe(lib, x))
        return out

    check_same(scenario)


def test_enable_grad_decorator_under_no_grad():
    def scenario(lib):
        x = leaf(lib)

        @lib.enable_grad()
        def f(t):
            return _mode_probe(lib, t)

        with lib.no_grad():
            return [f(x), lib.is_grad_enabled()]

    check_same(scenario)


def test_set_grad_enabled_context_function_and_decorator():
    def scenario(lib):
        x = leaf(lib)
        out = []
        with lib.set_grad_enabled(False):
            out.append(_mode_probe(lib, x))
            with lib.set_grad_enabled(True):
                out.append(_mode_probe(lib, x))
        out.append(_mode_probe(lib, x))
        lib.set_grad_enabled(False)
        out.append(_mode_probe(lib, x))
        lib.set_grad_enabled(True)
        out.append(_mode_probe(lib, x))

        @lib.set_grad_enabled(False)
        def f(t):
            return _mode_probe(lib, t)

        out.append(f(x))
        out.append(_mode_probe(lib, x))
        return out

    check_same(scenario)


def test_inference_mode_context_and_decorator():
    def scenario(lib):
        x = leaf(lib)
        with lib.inference_mode():
            inside = _mode_probe(lib, x)

        @lib.inference_mode()
        def f(t):
            return _mode_probe(lib, t)

        return [inside, f(x), _mode_probe(lib, x)]

    check_same(scenario)


def test_grad_mode_restored_after_exception():
    def scenario(lib):
        out = []
        for ctx in (lib.no_grad, lib.inference_mode, lambda: lib.set_grad_enabled(False)):
            try:
                with ctx():
                    raise ValueError("boom")
            except ValueError:
                pass
            out.append(lib.is_grad_enabled())
        return out

    check_same(scenario)


def test_requires_grad_leaf_created_under_no_grad():
    def scenario(lib):
        with lib.no_grad():
            w = lib.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        return [w.requires_grad, w.is_leaf, w.grad]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# graph structure
# --------------------------------------------------------------------------------------


def test_next_functions_structure_matches_torch():
    def scenario(lib):
        x = leaf(lib)
        y = lib.tensor([0.5, 1.0, 1.5], requires_grad=True)
        c = lib.tensor([2.0, 2.0, 2.0])
        z = ((x * y).sum() + (x * c).exp().sum()) * 2
        return graph_structure(z.grad_fn)

    expected, _ = check_same(scenario)
    assert expected[0] == "MulBackward0"  # sanity of the test itself


def test_accumulate_grad_variable_is_the_leaf():
    for lib in LIBS:
        x = leaf(lib)
        y = lib.tensor([1.0, 1.0, 1.0], requires_grad=True)
        z = x * y + x
        add = z.grad_fn
        assert add.name() == "AddBackward0", lib.__name__
        mul_node, idx = add.next_functions[0]
        assert mul_node.name() == "MulBackward0" and idx == 0
        acc_x, ix = mul_node.next_functions[0]
        acc_y, iy = mul_node.next_functions[1]
        assert (ix, iy) == (0, 0)
        assert acc_x.name() == "torch::autograd::AccumulateGrad" or acc_x.name().endswith(
            "AccumulateGrad"
        ), acc_x.name()
        assert acc_x.variable is x
        assert acc_y.variable is y
        # the same leaf reached through two paths gives the same AccumulateGrad node
        assert add.next_functions[1][0] is acc_x, lib.__name__


def test_accumulate_grad_name_matches_torch():
    def scenario(lib):
        x = leaf(lib)
        return (x * 2).grad_fn.next_functions[0][0].name()

    check_same(scenario)


def test_constant_inputs_appear_as_none():
    def scenario(lib):
        x = leaf(lib)
        c = lib.tensor([1.0, 2.0, 3.0])
        return [
            [(n is None, i) for n, i in (x * c).grad_fn.next_functions],
            [(n is None, i) for n, i in (c + x).grad_fn.next_functions],
            [(n is None, i) for n, i in (x * 2).grad_fn.next_functions],
        ]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# higher-order gradients
# --------------------------------------------------------------------------------------


def _grad2(lib, f, x, weight=None):
    out = f(lib, x)
    if weight is not None:
        out = out * lib.tensor(weight)
    (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
    flags = [g.requires_grad, g.grad_fn is not None]
    (gg,) = lib.autograd.grad(g.sum(), x)
    return [g, gg, flags]


DOUBLE_CASES = {
    "cube": (lambda lib, x: x**3, [0.5, -1.0, 2.0], None),
    "sin_times_exp": (lambda lib, x: x.sin() * x.exp(), [0.1, 0.7, -1.3], None),
    "tanh": (lambda lib, x: x.tanh(), [0.2, -0.5, 1.5], None),
    "softmax": (lambda lib, x: lib.softmax(x, dim=-1), [0.3, -1.0, 2.0], [1.0, -2.0, 0.5]),
    "softmax_method_2d": (
        lambda lib, x: x.reshape(1, 3).softmax(dim=1),
        [1.0, 0.0, -1.0],
        [[0.5, 2.0, -1.0]],
    ),
    "x_times_square": (lambda lib, x: x * x * x.sum(), [1.0, 2.0, 3.0], None),
    "div_and_pow": (lambda lib, x: 1 / (1 + x**2), [0.5, 1.0, -2.0], None),
}


@pytest.mark.parametrize("case", sorted(DOUBLE_CASES))
def test_double_backward_matches_torch(case):
    f, data, weight = DOUBLE_CASES[case]

    def scenario(lib):
        return _grad2(lib, f, leaf(lib, data), weight)

    check_same(scenario, rtol=1e-4, atol=1e-5)


def test_double_backward_matmul_cross_terms():
    a_data = [[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]]
    b_data = [[0.2, -0.3], [1.0, 0.5], [-0.7, 0.1]]

    def scenario(lib):
        a = lib.tensor(a_data, requires_grad=True)
        b = lib.tensor(b_data, requires_grad=True)
        f = ((a @ b) ** 2).sum()
        ga, gb = lib.autograd.grad(f, [a, b], create_graph=True)
        (gab,) = lib.autograd.grad((ga**2).sum(), b, retain_graph=True)
        (gaa,) = lib.autograd.grad(ga.sum(), a)
        return [ga, gb, gab, gaa]

    check_same(scenario, rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_makes_grad_differentiable():
    def scenario(lib):
        x = leaf(lib, (0.5, 1.5))
        (x**3).sum().backward(create_graph=True)
        g = x.grad
        flags = [g.requires_grad, g.grad_fn is not None]
        (gg,) = lib.autograd.grad(g.sum(), x)
        return [g, flags, gg]

    check_same(scenario)


def test_third_derivative():
    def scenario(lib):
        x = leaf(lib, (0.3, -0.8))
        y = (x.sin() * x**2).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        return [g1, g2, g3]

    check_same(scenario, rtol=1e-4, atol=1e-5)


def _hvp_function(lib, x):
    return (x**2).sum() * x.sum() + (x.sin() * x).sum() + (x.exp() * x.tanh()).sum()


def test_hessian_vector_product():
    x_data = [0.3, -1.2, 0.8]
    v_data = [1.0, 0.5, -2.0]

    def scenario(lib):
        x = leaf(lib, x_data)
        v = lib.tensor(v_data)
        (g,) = lib.autograd.grad(_hvp_function(lib, x), x, create_graph=True)
        (hv,) = lib.autograd.grad((g * v).sum(), x)
        (hv2,) = lib.autograd.grad(
            lib.autograd.grad(_hvp_function(lib, x), x, create_graph=True)[0], x, grad_outputs=v
        )
        return [g, hv, hv2]

    expected, _ = check_same(scenario, rtol=1e-4, atol=1e-5)
    # sanity: torch's full Hessian agrees with the product computed above
    hess = torch.autograd.functional.hessian(
        lambda t: _hvp_function(torch, t), torch.tensor(x_data)
    )
    np.testing.assert_allclose(
        expected[1], (hess @ torch.tensor(v_data)).numpy(), rtol=1e-4, atol=1e-5
    )


# --------------------------------------------------------------------------------------
# autograd.grad / autograd.backward
# --------------------------------------------------------------------------------------


def test_grad_multiple_inputs_does_not_touch_dot_grad():
    def scenario(lib):
        x = leaf(lib)
        y = lib.tensor([2.0, -1.0, 0.5], requires_grad=True)
        out = lib.autograd.grad((x * y + x.exp()).sum(), [x, y])
        return [type(out).__name__, list(out), x.grad, y.grad]

    check_same(scenario)


def test_grad_single_tensor_input_returns_tuple():
    def scenario(lib):
        x = leaf(lib)
        out = lib.autograd.grad((x * x).sum(), x)
        return [type(out).__name__, len(out), out[0]]

    check_same(scenario)


def test_grad_multiple_outputs_sum_contributions():
    def scenario(lib):
        x = leaf(lib)
        y1 = (x**2).sum()
        y2 = (x * 3).sum()
        (g,) = lib.autograd.grad([y1, y2], [x])
        return g

    check_same(scenario)


def test_grad_with_grad_outputs_nonscalar():
    def scenario(lib):
        x = leaf(lib)
        y = x * x
        z = x.exp()
        (g1,) = lib.autograd.grad(y, x, grad_outputs=lib.tensor([1.0, 0.0, 2.0]), retain_graph=True)
        (g2,) = lib.autograd.grad(
            [y, z], x, grad_outputs=[lib.tensor([1.0, 1.0, 1.0]), lib.tensor([0.5, 0.5, 0.5])]
        )
        return [g1, g2]

    check_same(scenario)


def test_grad_allow_unused():
    def scenario(lib):
        x = leaf(lib)
        u = leaf(lib)
        gx, gu = lib.autograd.grad((x * x).sum(), [x, u], allow_unused=True)
        return [gx, gu]

    check_same(scenario)


def test_grad_of_intermediate():
    def scenario(lib):
        x = leaf(lib)
        y = x * 2
        z = (y**2).sum()
        gy, gx = lib.autograd.grad(z, [y, x])
        return [gy, gx]

    check_same(scenario)


def test_autograd_backward_function():
    def scenario(lib):
        x = leaf(lib)
        y1 = x * 2
        y2 = (x**2).sum()
        lib.autograd.backward([y1, y2], [lib.tensor([1.0, 2.0, 3.0]), lib.tensor(1.0)])
        x2 = leaf(lib)
        lib.autograd.backward((x2**3).sum())
        return [x.grad, x2.grad]

    check_same(scenario)


# --------------------------------------------------------------------------------------
# custom Function
# --------------------------------------------------------------------------------------


def make_functions(lib, log):
    class ScaledCube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, power):
            log.append(["forward_grad_enabled", lib.is_grad_enabled()])
            ctx.save_for_backward(x, k)
            ctx.power = power
            return x**power * k

        @staticmethod
        def backward(ctx, grad_out):
            x, k = ctx.saved_tensors
            log.append(["needs_input_grad", list(ctx.needs_input_grad)])
            p = ctx.power
            gx = grad_out * p * x ** (p - 1) * k if ctx.needs_input_grad[0] else None
            gk = grad_out * x**p if ctx.needs_input_grad[1] else None
            return gx, gk, None

    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 2 + g2 * 2 * x

    return ScaledCube, TwoOut


@pytest.mark.parametrize("k_requires_grad", [False, True])
def test_custom_function_in_larger_graph(k_requires_grad):
    def scenario(lib):
        log = []
        cube, _ = make_functions(lib, log)
        x = leaf(lib, (0.5, -1.0, 2.0))
        k = lib.tensor([1.0, 2.0, 3.0], requires_grad=k_requires_grad)
        y = cube.apply(x.sin(), k, 3)
        name = y.grad_fn.name()
        nxt = [[node_name(n), i] for n, i in y.grad_fn.next_functions]
        loss = ((y + x) * 2).exp().sum()
        loss.backward()
        return [log, name, nxt, y.requires_grad, x.grad, k.grad]

    expected, _ = check_same(scenario, rtol=1e-4, atol=1e-5)
    assert expected[1] == "ScaledCubeBackward"


def test_custom_function_repr_and_no_grad_inputs():
    def scenario(lib):
        log = []
        cube, _ = make_functions(lib, log)
        x = lib.tensor([2.0], requires_grad=True)
        y = cube.apply(x, lib.tensor([1.0]), 2)
        plain = cube.apply(lib.tensor([2.0]), lib.tensor([1.0]), 2)
        return [repr(y).replace("torch", "X").replace("engine", "X"), _flags(plain), log]

    check_same(scenario)


def test_custom_function_multiple_outputs():
    def scenario(lib):
        _, two = make_functions(lib, [])
        x = leaf(lib)
        a, b = two.apply(x)
        (a.sum() * 3 + b.sum()).backward()
        return [a, b, x.grad, a.grad_fn is b.grad_fn, a.grad_fn.name()]

    check_same(scenario)


def test_custom_function_double_use_and_accumulation():
    def scenario(lib):
        log = []
        cube, _ = make_functions(lib, log)
        x = leaf(lib, (1.0, 2.0))
        k = lib.tensor([1.0, 1.0])
        y = cube.apply(x, k, 2) + cube.apply(x, k, 3)
        y.sum().backward()
        return [x.grad, len(log)]

    check_same(scenario)


def test_custom_function_saved_tensor_modified_inplace_raises():
    def fn(lib):
        cube, _ = make_functions(lib, [])
        x = leaf(lib)
        h = x * 1
        y = cube.apply(h, lib.tensor([1.0, 1.0, 1.0]), 2)
        h.add_(1)
        y.sum().backward()

    assert_same_error(fn, MODIFIED)


# --------------------------------------------------------------------------------------
# version counter
# --------------------------------------------------------------------------------------

INPLACE_OPS = {
    "add_": lambda lib, t: t.add_(1),
    "add_tensor": lambda lib, t: t.add_(lib.ones(3)),
    "sub_": lambda lib, t: t.sub_(1),
    "mul_": lambda lib, t: t.mul_(2),
    "div_": lambda lib, t: t.div_(2),
    "clamp_": lambda lib, t: t.clamp_(min=0.5, max=2.0),
    "fill_": lambda lib, t: t.fill_(3.0),
    "zero_": lambda lib, t: t.zero_(),
    "copy_": lambda lib, t: t.copy_(lib.tensor([4.0, 5.0, 6.0])),
    "iadd": lambda lib, t: operator.iadd(t, 1),
    "isub": lambda lib, t: operator.isub(t, 1),
    "imul": lambda lib, t: operator.imul(t, 2),
    "itruediv": lambda lib, t: operator.itruediv(t, 2),
}


@pytest.mark.parametrize("op", sorted(INPLACE_OPS))
def test_version_counter_per_inplace_op(op):
    def scenario(lib):
        t = lib.tensor([1.0, 2.0, 3.0])
        v0 = t._version
        out = INPLACE_OPS[op](lib, t)
        v1 = t._version
        INPLACE_OPS[op](lib, t)
        return [v0, v1, t._version, out is t, t]

    check_same(scenario)


def test_version_counter_untouched_by_out_of_place_and_flags():
    def scenario(lib):
        t = lib.tensor([1.0, 2.0, 3.0])
        _ = t + 1, t * 2, t.exp(), t.sum(), t.detach()
        t.requires_grad_()
        t.requires_grad_(False)
        a = t._version
        with lib.no_grad():
            t.add_(1)
        return [a, t._version]

    check_same(scenario)


def test_version_counter_on_nonleaf_inplace_and_grad():
    def scenario(lib):
        x = leaf(lib)
        y = x * 1
        v0 = y._version
        y.mul_(2)
        y += 1
        name = y.grad_fn.name()
        y.sum().backward()
        return [v0, y._version, name, y.is_leaf, y.requires_grad, x.grad]

    check_same(scenario)


def test_inplace_on_nonleaf_updates_gradient_chain():
    def scenario(lib):
        x = leaf(lib)
        y = x * x
        y.mul_(3)
        y.sub_(x)
        y.div_(2)
        (y * y).sum().backward()
        return [y, x.grad]

    check_same(scenario)


def test_run_both_smoke():
    """The helpers themselves: both libraries agree on a trivial computation."""
    t, e = run_both(lambda lib: lib.tensor([1.0, 2.0]) * 2)
    assert_tree_close(t, e)
    assert to_py(None) is None


# -- observe_backward: the engine's own extension for tracing a whole pass (not in PyTorch) --------
def _walk_nodes(root):
    seen, stack = [], [root]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.append(n)
        stack.extend(f for f, _ in n.next_functions)
    return seen


def test_observe_backward_sees_what_a_post_hook_on_every_node_sees():
    import threading

    from engine.autograd.graph import AccumulateGrad, observe_backward

    x = eg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = eg.tensor([0.5, 0.25, -1.0], requires_grad=True)
    h = eg.tanh(x * w)
    y = (h * h + h.exp() * 3).sum()
    nodes = [n for n in _walk_nodes(y.grad_fn) if not isinstance(n, AccumulateGrad)]
    # a post-hook that changes what its node sends: the observer runs after it, and sees that
    nodes[2].register_hook(lambda gi, go: tuple(g * 2 if g is not None else None for g in gi))
    hooked, observed = [], []
    for n in nodes:
        n.register_hook(
            lambda gi, go, n=n: hooked.append((n, [to_py(g) for g in gi], to_py(go[0])))
        )

    def observe(node, grad_inputs, grad_outputs):
        observed.append((node, [to_py(g) for g in grad_inputs], to_py(grad_outputs[0])))

    # another thread's pass, during the block, is not observed (it would add to `observed`)
    def elsewhere():
        a = eg.tensor([1.0], requires_grad=True)
        (a * 2).sum().backward()

    with observe_backward(observe):
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        y.backward(retain_graph=True)
    assert not isinstance(observed[0][0], AccumulateGrad)
    assert all(not isinstance(n, AccumulateGrad) for n, _, _ in observed)
    assert [n for n, _, _ in observed] == [n for n, _, _ in hooked]
    assert observed == hooked
    assert len(observed) == len(nodes)

    # the observer is gone after the block, also after a failing pass
    observed.clear()
    y.backward(retain_graph=True)
    assert observed == []
    with pytest.raises(RuntimeError, match="does not require grad"), observe_backward(observe):
        eg.tensor([1.0]).sum().backward()
    y.backward()
    assert observed == []
