"""Views and in-place writes against torch: values, every leaf's .grad, grad_fn names and
next_functions, version counters and error texts, as PyTorch's own autograd tests check them
(test_inplace_view_*, test_retain_grad_inplace, test_detach_base, the CopySlices cases).

A scenario is `fn(m, *leaves)` returning named tensors; it runs on torch and on the engine from
the same float64 arrays, then a random upstream gradient is sent back from every output."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg


def _leaves(m, arrays):
    return [m.tensor(a.copy(), dtype=m.float64, requires_grad=True) for a in arrays]


def _name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _chain(fn):
    """grad_fn names along next_functions, breadth first (what a user sees printing them)."""
    out, todo, seen = [], [fn], set()
    while todo:
        node = todo.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__
        out.append("AccumulateGrad" if "AccumulateGrad" in name else name)
        todo.extend(n for n, _ in node.next_functions)
    return out


def _producer_free(message):
    """An error text without the producer's name. PyTorch names a saved output that is a view
    by its grad_fn at the time of the error, which it regenerates only when someone reads it
    (AsStrided if the view was used after the write, the op's own name if not); the engine
    regenerates at the write and always names the op. Everything else must match."""
    return re.sub(r"which is output \d+ of \w+,", "which is output N of X,", message)


def run_both(fn, *shapes, seed=0, check_chain=True, exact_errors=True):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in shapes]
    results, errors = {}, {}
    for m in (torch, eg):
        try:
            results[m] = _run_one(m, fn, arrays, seed, check_chain)
        except RuntimeError as exc:  # then both must refuse, in the same words
            errors[m] = str(exc)
    if exact_errors:
        assert errors.get(eg) == errors.get(torch)
    else:
        assert set(errors) in (set(), {eg, torch}), errors
        if errors:
            assert _producer_free(errors[eg]) == _producer_free(errors[torch])
    if errors:
        return
    _compare(results)


def _compare(results):
    (ti, tg), (ei, egr) = results[torch], results[eg]
    for name in ti:
        tv, tn, tc, tver = ti[name]
        ev, en, ec, ever = ei[name]
        np.testing.assert_allclose(ev, tv, rtol=1e-10, atol=1e-12, err_msg=f"value of {name}")
        assert en == tn, f"grad_fn of {name}: {en} != {tn}"
        assert ec == tc, f"graph of {name}: {ec} != {tc}"
        assert ever == tver, f"version of {name}: {ever} != {tver}"
    for i, (a, b) in enumerate(zip(egr, tg)):
        if b is None:
            assert a is None, f"leaf {i}: engine has a grad, torch has none"
        else:
            assert a is not None, f"leaf {i}: no grad"
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"grad of leaf {i}")


def _run_one(m, fn, arrays, seed, check_chain):
    leaves = _leaves(m, arrays)
    outs = fn(m, *leaves)
    g_rng = np.random.default_rng(seed + 1)
    loss = 0
    info = {}
    for name, t in outs.items():
        info[name] = (
            t.detach().numpy().copy(),
            _name(t),
            _chain(t.grad_fn) if check_chain else None,
            t._version,
        )
        if t.requires_grad:
            up = m.tensor(g_rng.standard_normal(tuple(t.shape)), dtype=m.float64)
            loss = loss + (t * up).sum()
    if not isinstance(loss, int):
        loss.backward()
    return info, [None if x.grad is None else x.grad.numpy().copy() for x in leaves]


# -- the issue's cases ------------------------------------------------------------------------
def _write_slice_then_use_base(m, x):
    y = x * 2
    y[0:2].mul_(3)
    return {"y": y, "loss": (y * y).sum()}


def _write_base_then_use_view(m, y):
    x = y * 2
    v = x[0]
    x.mul_(3)
    return {"v": v, "x": x}


def _view_of_view(m, x):
    y = x * 1
    v = y[1:]
    w = v[0]
    w.mul_(5)
    return {"y": y, "v": v, "w": w}


def _non_contiguous_view(m, x):
    y = x * 1
    r = y.t()[0]
    r.add_(1)
    return {"y": y, "r": r, "use": r * 2}


def _view_written_base_used_later(m, x, w):
    y = x.exp()
    y[1].copy_(w[0])
    return {"out": y.sum(1), "y": y}


def _base_written_view_used_later(m, x):
    y = x + 1
    v = y[:, 1]
    y.mul_(2)
    return {"v": v * v}


def _setitem_slice(m, x, w):
    y = x * 1
    y[0:2] = w
    return {"y": y}


def _setitem_scalar(m, x):
    y = x * 1
    y[1, 2] = 5.0
    return {"y": y}


def _setitem_advanced(m, x, w):
    y = x * 1
    y[m.tensor([0, 2])] = w
    return {"y": y}


def _setitem_mask(m, x):
    y = x * 1
    y[y > 0] = 0.0
    return {"y": y}


def _write_into_constant(m, w):
    z = m.zeros(3, 2, dtype=m.float64)
    z[1].copy_(w)
    return {"z": z}


def _two_views_one_written(m, x):
    y = x * 1
    a, b = y[0], y[1:]
    a.mul_(2)
    return {"a": a, "b": b, "y": y}


def _reshape_view_written(m, x):
    y = x * 1
    f = y.view(-1)
    f[2:5].mul_(-1)
    return {"y": y, "f": f}


def _transpose_write(m, x):
    y = x.sin()
    y.transpose(0, 1)[1].zero_()
    return {"y": y}


def _diagonal_write(m, x):
    y = x * 1
    y.diagonal().add_(10)
    return {"y": y}


def _unsqueeze_squeeze_write(m, x):
    y = x * 1
    y.unsqueeze(0)[0, 1].fill_(4.0)
    return {"y": y.squeeze()}


def _narrow_select_write(m, x):
    y = x * 1
    y.narrow(1, 1, 2).select(0, 1).sub_(3)
    return {"y": y}


def _expand_read(m, x):
    y = x * 1
    e = y[0].expand(3, 4)
    y.mul_(2)
    return {"e": e}


def _chain_of_writes(m, x, w):
    y = x * 1
    v = y[1:3]
    v.mul_(w[0])
    v.add_(w[1])
    y.relu_()
    return {"y": y, "v": v}


def _retain_grad_inplace(m, x):
    a = x * 1
    a.retain_grad()
    a.mul_(2)
    return {"a": a, "b": a * 3}


def _strided_slice_write(m, x):
    y = x * 1
    y[:, ::2].mul_(4)
    return {"y": y}


def _integer_index_view(m, x):
    y = x * 1
    s = y[1, 2]
    y.add_(1)
    return {"s": s}


SCENARIOS = {
    "write_slice_then_use_base": (_write_slice_then_use_base, (3,)),
    "write_base_then_use_view": (_write_base_then_use_view, (2,)),
    "view_of_view": (_view_of_view, (4,)),
    "non_contiguous_view": (_non_contiguous_view, (3, 2)),
    "view_written_base_used_later": (_view_written_base_used_later, (3, 4), (2, 4)),
    "base_written_view_used_later": (_base_written_view_used_later, (2, 3)),
    "setitem_slice": (_setitem_slice, (3, 4), (2, 4)),
    "setitem_scalar": (_setitem_scalar, (2, 3)),
    "setitem_advanced": (_setitem_advanced, (3, 4), (4,)),
    "setitem_mask": (_setitem_mask, (3, 4)),
    "write_into_constant": (_write_into_constant, (2,)),
    "two_views_one_written": (_two_views_one_written, (3, 2)),
    "reshape_view_written": (_reshape_view_written, (2, 3)),
    "transpose_write": (_transpose_write, (3, 4)),
    "diagonal_write": (_diagonal_write, (3, 3)),
    "unsqueeze_squeeze_write": (_unsqueeze_squeeze_write, (2, 3)),
    "narrow_select_write": (_narrow_select_write, (3, 4)),
    "expand_read": (_expand_read, (2, 4)),
    "chain_of_writes": (_chain_of_writes, (4, 3), (2, 3)),
    "retain_grad_inplace": (_retain_grad_inplace, (3,)),
    "strided_slice_write": (_strided_slice_write, (2, 5)),
    "integer_index_view": (_integer_index_view, (2, 3)),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_matches_torch(name):
    fn, *shapes = SCENARIOS[name]
    run_both(fn, *shapes)


def test_issue_examples_give_torch_gradients():
    x = eg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[0:2].mul_(3)
    (y * y).sum().backward()
    assert x.grad.tolist() == [72.0, 144.0, 24.0]
    y = eg.tensor([1.0, 2.0], requires_grad=True)
    x = y * 2
    v = x[0]
    x.mul_(3)
    v.backward()
    assert y.grad.tolist() == [6.0, 0.0]


def test_retain_grad_follows_the_new_value():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    a.retain_grad()
    a.mul_(2)
    (a * 3).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]
    assert x.grad.tolist() == [6.0, 6.0]


# -- what a view is -----------------------------------------------------------------------------
VIEW_OPS = {
    "slice": lambda t: t[1:, ::2],
    "int": lambda t: t[1],
    "int_0d": lambda t: t[1, 2],
    "none": lambda t: t[None],
    "view": lambda t: t.view(4, 3),
    "reshape_contiguous": lambda t: t.reshape(-1),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "t": lambda t: t.t(),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(0),
    "expand": lambda t: t[:, :1].expand(3, 4),
    "flatten": lambda t: t.flatten(),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "select": lambda t: t.select(1, 0),
    "diagonal": lambda t: t.diagonal(),
    "unbind": lambda t: t.unbind(1)[2],
    "split": lambda t: t.split(2, 1)[1],
    "chunk": lambda t: t.chunk(2, 0)[0],
    "movedim": lambda t: t.movedim(0, 1),
    "unfold": lambda t: t.unfold(1, 2, 1),
    "view_as": lambda t: t.view_as(t),
}


@pytest.mark.parametrize("op", list(VIEW_OPS))
def test_view_ops_share_memory_version_and_base(op):
    for m in (torch, eg):
        base = m.arange(12, dtype=m.float64).reshape(3, 4).clone()
        v = VIEW_OPS[op](base)
        assert v._base is base, op
        assert v._is_view()
        before = v.clone()
        base.add_(100)
        assert np.all((v - before).numpy() == 100), f"{op}: the view did not see the write"
        assert v._version == base._version == 1


@pytest.mark.parametrize("op", list(VIEW_OPS))
def test_view_ops_grad_fn_names_match_torch(op):
    names = []
    for m in (torch, eg):
        x = m.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        names.append(_name(VIEW_OPS[op](x * 1)))
    assert names[1] == names[0]


def test_views_of_views_point_at_the_root():
    for m in (torch, eg):
        x = m.zeros(4, 5)
        v = x[1:][:, 2:].t()
        assert v._base is x


def test_copies_are_not_views():
    for m in (torch, eg):
        x = m.arange(6.0).reshape(2, 3)
        assert x.t().reshape(-1)._base is None
        assert x.detach()._base is None
        assert x[m.tensor([0, 1])]._base is None
        assert x.clone()._base is None


def test_reshape_of_non_contiguous_copies_and_view_refuses():
    for m in (torch, eg):
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        r = x.t().reshape(-1)
        assert type(r.grad_fn).__name__ == "UnsafeViewBackward0"
        with pytest.raises(RuntimeError) as exc:
            x.t().view(-1)
        assert "view size is not compatible with input tensor's size and stride" in str(exc.value)


# -- PyTorch's refusals, word for word ----------------------------------------------------------
def _errors(fn):
    texts = []
    for m in (torch, eg):
        with pytest.raises(RuntimeError) as exc:
            fn(m)
        texts.append(str(exc.value))
    assert texts[1] == texts[0]
    return texts[0]


def _leaf(m):
    return m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)


def _no_grad_view_write(m):
    x = _leaf(m) * 1
    with m.no_grad():
        v = x[0]
    v.mul_(2)


def _no_grad_view_of_leaf(m):
    x = _leaf(m)
    with m.no_grad():
        v = x[0]
    v.mul_(2)


def _unbind_write(m):
    (_leaf(m) * 1).unbind(1)[1].add_(1)


def _split_write(m):
    (_leaf(m) * 1).split(1)[1].add_(1)


def _split_sizes_write(m):
    (_leaf(m) * 1).split([1, 1])[0].zero_()


def _chunk_write(m):
    (_leaf(m) * 1).chunk(2, 1)[0].mul_(3)


def _view_of_multi_output_view(m):
    pieces = (_leaf(m) * 1).unbind(0)
    pieces[1].view_as(pieces[1]).mul_(2)


def _view_of_no_grad_view(m):
    x = _leaf(m) * 1
    with m.no_grad():
        v = x[1:]
    v[0:1].mul_(2)


ERRORS = {
    "view_of_multi_output_view": _view_of_multi_output_view,
    "unbind_second_output": lambda m: (_leaf(m) * 1).unbind(0)[1].add_(1),
    "leaf": lambda m: _leaf(m).add_(1),
    "view_of_leaf": lambda m: _leaf(m)[0].mul_(2),
    "view_of_leaf_setitem": lambda m: _leaf(m).__setitem__(0, 1.0),
    "no_grad_view": _no_grad_view_write,
    "no_grad_view_of_leaf": _no_grad_view_of_leaf,
    "unbind": _unbind_write,
    "split": _split_write,
    "split_with_sizes": _split_sizes_write,
    "chunk": _chunk_write,
    "detach_view": lambda m: (_leaf(m) * 1)[0].detach_(),
    "detach_view_no_grad": lambda m: m.zeros(3)[1:].detach_(),
    "expanded_write": lambda m: (_leaf(m) * 1)[0].expand(3, 2).mul_(2),
    "saved_then_written": lambda m: _saved_then_written(m),
    "view_saved_base_written": lambda m: _view_saved_base_written(m),
}


def _saved_then_written(m):
    x = _leaf(m)
    y = x * 1
    z = y * y
    y.add_(1)
    z.sum().backward()


def _view_saved_base_written(m):
    x = _leaf(m)
    y = x * 1
    v = y[0]
    z = v * v
    y.mul_(2)
    z.sum().backward()


@pytest.mark.parametrize("case", list(ERRORS))
def test_refusals_match_torch(case):
    _errors(ERRORS[case])


def test_a_view_of_a_no_grad_view_is_refused():
    with pytest.raises(RuntimeError, match="created in no_grad mode and is being modified inplace"):
        _view_of_no_grad_view(eg)


def test_writes_into_multi_output_views_are_allowed_without_grad():
    for m in (torch, eg):
        pieces = m.zeros(3, 2).unbind(0)
        pieces[0].add_(1)
        assert pieces[0].tolist() == [1.0, 1.0]


def test_allow_unused_message_names_the_index():
    def fn(m):
        a = m.tensor([1.0], requires_grad=True)
        b = m.tensor([2.0], requires_grad=True)
        m.autograd.grad((a * 2).sum(), [a, b])

    assert "at index 1 appears to not have been used" in _errors(fn)


def test_no_grad_writes_through_a_view_are_not_recorded():
    for m in (torch, eg):
        x = _leaf(m) * 1
        with m.no_grad():
            x[0].mul_(2)
        assert type(x.grad_fn).__name__ == "MulBackward0"
        assert x._version == 1


# -- the in-place family -----------------------------------------------------------------------
INPLACE = {
    "add_": lambda m, t, o: t.add_(o),
    "add_alpha": lambda m, t, o: t.add_(o, alpha=2.0),
    "sub_": lambda m, t, o: t.sub_(o),
    "mul_": lambda m, t, o: t.mul_(o),
    "div_": lambda m, t, o: t.div_(o.abs() + 1),
    "pow_": lambda m, t, o: t.abs().add_(1).pow_(o),
    "neg_": lambda m, t, o: t.neg_(),
    "exp_": lambda m, t, o: t.exp_(),
    "log_": lambda m, t, o: t.abs_().add_(0.5).log_(),
    "sqrt_": lambda m, t, o: t.abs_().add_(0.5).sqrt_(),
    "abs_": lambda m, t, o: t.abs_(),
    "clamp_": lambda m, t, o: t.clamp_(-0.5, 0.5),
    "clamp_min": lambda m, t, o: t.clamp_(min=0.1),
    "relu_": lambda m, t, o: t.relu_(),
    "sigmoid_": lambda m, t, o: t.sigmoid_(),
    "tanh_": lambda m, t, o: t.tanh_(),
    "zero_": lambda m, t, o: t.zero_(),
    "fill_": lambda m, t, o: t.fill_(2.5),
    "fill_tensor": lambda m, t, o: t.fill_(o.sum()),
    "copy_": lambda m, t, o: t.copy_(o),
    "copy_broadcast": lambda m, t, o: t.copy_(o[0]),
    "masked_fill_": lambda m, t, o: t.masked_fill_(o > 0, 3.0),
    "index_fill_": lambda m, t, o: t.index_fill_(1, m.tensor([0, 2]), -1.0),
    "index_add_": lambda m, t, o: t.index_add_(1, m.tensor([3, 0, 3]), o[:, :3]),
    "scatter_": lambda m, t, o: t.scatter_(1, m.tensor([[1], [0], [2]])[: t.shape[0]], o[:, :1]),
    "scatter_add_": lambda m, t, o: t.scatter_add_(0, m.zeros_like(t, dtype=m.int64), o),
    "setitem_tensor": lambda m, t, o: t.__setitem__((slice(None), 1), o[:, 0]) or t,
    "iadd": lambda m, t, o: t.__iadd__(o),
    "imul": lambda m, t, o: t.__imul__(o),
    "isub": lambda m, t, o: t.__isub__(o),
    "itruediv": lambda m, t, o: t.__itruediv__(o.abs() + 1),
}


@pytest.mark.parametrize("op", list(INPLACE))
@pytest.mark.parametrize("through", ["tensor", "view"])
def test_inplace_family_matches_torch(op, through):
    def fn(m, x, o):
        y = x * 1
        target = y if through == "tensor" else y[1:]
        other = o if through == "tensor" else o[1:]
        r = INPLACE[op](m, target, other)
        return {"y": y, "r": r}

    run_both(fn, (3, 4), (3, 4), seed=len(op))


# -- random chains of views and writes ---------------------------------------------------------
_VIEW_STEPS = [
    lambda t: t[1:] if t.shape[0] > 1 else t,
    lambda t: t[:, ::2] if t.dim() > 1 else t,
    lambda t: t.transpose(0, 1) if t.dim() > 1 else t,
    lambda t: t.unsqueeze(0)[0],
    lambda t: t.narrow(0, 0, 1) if t.shape[0] > 1 else t,
    lambda t: t.select(0, 0) if t.dim() > 1 else t,
]
_WRITES = [
    lambda m, t, w: t.mul_(w),
    lambda m, t, w: t.add_(w * 2),
    lambda m, t, w: t.copy_(w),
    lambda m, t, w: t.sub_(1.5),
    lambda m, t, w: t.tanh_(),
    lambda m, t, w: t.clamp_(-1, 1),
]


@settings(max_examples=60, deadline=None)
@given(
    plan=st.lists(
        st.tuples(
            st.lists(st.integers(0, len(_VIEW_STEPS) - 1), max_size=3),
            st.integers(0, len(_WRITES) - 1),
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    ),
    seed=st.integers(0, 10_000),
)
def test_random_chains_of_views_and_writes_match_torch(plan, seed):
    def fn(m, x, w):
        y = x.exp()
        outs = {}
        for i, (steps, write, keep) in enumerate(plan):
            v = y
            for s in steps:
                v = _VIEW_STEPS[s](v)
            wv = w.reshape(-1)[: v.numel()].reshape(v.shape) if v.numel() else w[:0]
            _WRITES[write](m, v, wv)
            if keep:
                outs[f"view{i}"] = v * 1
        outs["y"] = y
        return outs

    run_both(fn, (3, 4), (12,), seed=seed, check_chain=False, exact_errors=False)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="no GPU on this machine")
def test_write_through_a_view_on_cuda_matches_cpu():
    grads = []
    for device in ("cpu", "cuda"):
        x = eg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
        y = x * 2
        y[0:2].mul_(3)
        (y * y).sum().backward()
        grads.append(x.grad.cpu().tolist())
    assert grads[0] == grads[1]
