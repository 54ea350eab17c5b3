"""The worked examples of the four teaching texts, rebuilt on the engine.

Each test builds one example from the texts in ``shared/seeds`` (beside the repo) and
checks the numbers the text publishes. Where a text prints no number, the same
computation is run in PyTorch and used as the oracle.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import engine as eg
import engine.nn as enn
import engine.optim as eoptim

SEEDS_DIR = Path(__file__).resolve().parents[3] / "shared" / "seeds"
SEED_PREFIXES = ("000_", "001_", "002_", "003_")

RTOL32 = 1e-5
ATOL32 = 1e-6


# --------------------------------------------------------------------------- helpers


def arr(t):
    """A numpy copy of an engine or torch tensor."""
    return np.array(t.detach().numpy())


def fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def assert_close(a, b, rtol=RTOL32, atol=ATOL32):
    np.testing.assert_allclose(
        arr(a) if not isinstance(a, np.ndarray) else a,
        arr(b) if not isinstance(b, np.ndarray) else b,
        rtol=rtol,
        atol=atol,
    )


def assert_grad_fn_repr(t, name):
    assert re.fullmatch(rf"<{name} object at 0x[0-9a-fA-F]+>", repr(t.grad_fn)), repr(t.grad_fn)


def nonleaf_grad(t):
    """Read .grad of a non-leaf without PyTorch's UserWarning failing anything."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


def copy_params(src_eg, dst_torch):
    """Copy the engine module's parameters into a torch module of the same layout."""
    eg_named = list(src_eg.named_parameters())
    t_named = list(dst_torch.named_parameters())
    assert [n for n, _ in eg_named] == [n for n, _ in t_named]
    with torch.no_grad():
        for (_, p), (_, q) in zip(eg_named, t_named):
            q.copy_(torch.from_numpy(arr(p)).to(q.dtype))


def pair(np_array, requires_grad=False):
    """The same data as an engine tensor and a torch tensor."""
    a = np.asarray(np_array)
    return (
        eg.tensor(a.copy(), requires_grad=requires_grad),
        torch.tensor(a.copy(), requires_grad=requires_grad),
    )


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# --------------------------------------------------------------------------- the texts


def test_seed_texts_are_present():
    assert SEEDS_DIR.is_dir(), f"seed texts folder missing: {SEEDS_DIR}"
    for prefix in SEED_PREFIXES:
        found = sorted(SEEDS_DIR.glob(f"{prefix}*.txt"))
        assert len(found) == 1, f"expected exactly one {prefix}*.txt in {SEEDS_DIR}, got {found}"
        assert found[0].stat().st_size > 1000


# =========================================================================== text 000
# c = (a * 3).mean() with a = [2, 3]


def test_000_mul_mean_graph_attributes():
    a = eg.tensor([2.0, 3.0], requires_grad=True)
    b = a * 3
    c = b.mean()

    assert a.requires_grad and a.grad_fn is None and a.is_leaf
    assert b.requires_grad and fn_name(b) == "MulBackward0" and not b.is_leaf
    assert c.requires_grad and fn_name(c) == "MeanBackward0" and not c.is_leaf
    assert_grad_fn_repr(b, "MulBackward0")
    assert_grad_fn_repr(c, "MeanBackward0")
    np.testing.assert_allclose(arr(b), [6.0, 9.0])
    assert c.item() == pytest.approx(7.5)


def test_000_mul_mean_backward_walk():
    a = eg.tensor([2.0, 3.0], requires_grad=True)
    b = a * 3
    b.retain_grad()
    c = b.mean()
    c.backward()
    # mean spreads 1/2 to each element of b, the multiply scales by 3
    np.testing.assert_allclose(arr(b.grad), [0.5, 0.5])
    np.testing.assert_allclose(arr(a.grad), [1.5, 1.5])
    assert tuple(a.grad.shape) == (2,)


def test_000_backward_graph_links():
    a = eg.tensor([2.0, 3.0], requires_grad=True)
    c = (a * 3).mean()
    mean_node = c.grad_fn
    (mul_node, _), *_ = mean_node.next_functions
    assert type(mul_node).__name__ == "MulBackward0"
    # the multiply by the plain number 3 leads back to the leaf a only
    leaf_nodes = [n for n, _ in mul_node.next_functions if n is not None]
    assert [type(n).__name__ for n in leaf_nodes] == ["AccumulateGrad"]
    assert leaf_nodes[0].variable is a


# =========================================================================== text 001
# five-weight toy network: b = w1*a, c = w2*a, d = w3*b + w4*c, L = 10 - d


def _five_weight(lib, arrays):
    a, w1, w2, w3, w4 = (lib.tensor(x.copy(), requires_grad=True) for x in arrays)
    b = w1 * a
    c = w2 * a
    d = w3 * b + w4 * c
    L = 10 - d
    return dict(a=a, w1=w1, w2=w2, w3=w3, w4=w4, b=b, c=c, d=d, L=L)


@pytest.fixture
def five_arrays(rng):
    return [rng.standard_normal((3, 3)).astype(np.float32) for _ in range(5)]


def test_001_five_weight_graph_structure(five_arrays):
    g = _five_weight(eg, five_arrays)
    t = _five_weight(torch, five_arrays)
    assert g["a"].grad_fn is None
    assert fn_name(g["d"]) == "AddBackward0"
    assert_grad_fn_repr(g["d"], "AddBackward0")
    for k in ("a", "w1", "w2", "w3", "w4"):
        assert g[k].is_leaf and g[k].requires_grad and g[k].grad_fn is None, k
    for k in ("b", "c", "d", "L"):
        assert not g[k].is_leaf and g[k].requires_grad, k
        assert fn_name(g[k]) == fn_name(t[k]), k
        assert_close(g[k], t[k])


def test_001_nonscalar_backward_error(five_arrays):
    g = _five_weight(eg, five_arrays)
    with pytest.raises(RuntimeError) as info:
        g["L"].backward()
    assert str(info.value) == "grad can be implicitly created only for scalar outputs"
    for k in ("a", "w1", "w2", "w3", "w4"):
        assert g[k].grad is None


def _five_weight_expected(arrays):
    a, w1, w2, w3, w4 = arrays
    return dict(
        w1=-w3 * a,
        w2=-w4 * a,
        w3=-w1 * a,
        w4=-w2 * a,
        a=-(w3 * w1 + w4 * w2),
    )


def test_001_five_weight_sum_then_backward(five_arrays):
    g = _five_weight(eg, five_arrays)
    L = (10 - g["d"]).sum()
    assert tuple(L.shape) == ()
    assert fn_name(L) == "SumBackward0"
    L.backward()
    expected = _five_weight_expected(five_arrays)
    for k, v in expected.items():
        np.testing.assert_allclose(arr(g[k].grad), v, rtol=RTOL32, atol=ATOL32, err_msg=k)
    # intermediate tensors keep no gradient unless asked
    for k in ("b", "c", "d"):
        assert nonleaf_grad(g[k]) is None


def test_001_five_weight_backward_with_ones(five_arrays):
    g = _five_weight(eg, five_arrays)
    g["L"].backward(eg.ones(g["L"].shape))
    expected = _five_weight_expected(five_arrays)
    for k, v in expected.items():
        np.testing.assert_allclose(arr(g[k].grad), v, rtol=RTOL32, atol=ATOL32, err_msg=k)


def test_001_backward_with_explicit_gradient_matches_torch(five_arrays, rng):
    weights = rng.standard_normal((3, 3)).astype(np.float32)
    g = _five_weight(eg, five_arrays)
    t = _five_weight(torch, five_arrays)
    g["L"].backward(eg.tensor(weights))
    t["L"].backward(torch.tensor(weights))
    for k in ("a", "w1", "w2", "w3", "w4"):
        assert_close(g[k].grad, t[k].grad)


def test_001_manual_update_step(five_arrays):
    g = _five_weight(eg, five_arrays)
    (10 - g["d"]).sum().backward()
    lr = 0.1
    w1 = g["w1"]
    new_w1 = w1 - lr * w1.grad
    np.testing.assert_allclose(
        arr(new_w1), five_arrays[1] - lr * _five_weight_expected(five_arrays)["w1"], rtol=1e-6
    )
    # the update written as plain arithmetic is itself recorded in the graph
    assert not new_w1.is_leaf and fn_name(new_w1) == "SubBackward0"
    with eg.no_grad():
        frozen = w1 - lr * w1.grad
    assert not frozen.requires_grad and frozen.grad_fn is None


def test_001_requires_grad_is_contagious(rng):
    x = eg.tensor(rng.standard_normal(3).astype(np.float32))
    w = eg.randn((3,), requires_grad=True)
    assert not x.requires_grad and x.grad_fn is None
    out = x * w
    assert out.requires_grad and fn_name(out) == "MulBackward0"
    plain = x * x + 1
    assert not plain.requires_grad and plain.grad_fn is None


def test_001_requires_grad_set_after_creation(rng):
    data = rng.standard_normal((3, 3)).astype(np.float32)
    t2 = eg.tensor(data)
    assert t2.requires_grad is False
    t2.requires_grad = True
    assert t2.requires_grad and t2.is_leaf
    (t2 * t2).sum().backward()
    np.testing.assert_allclose(arr(t2.grad), 2 * data, rtol=1e-6)


def test_001_graph_is_built_by_running_ops():
    a = eg.randn((3, 3), requires_grad=True)
    w1 = eg.randn((3, 3), requires_grad=True)
    assert a.grad_fn is None and w1.grad_fn is None
    b = w1 * a
    assert fn_name(b) == "MulBackward0"


def test_001_backward_twice_needs_retain_graph(five_arrays):
    g = _five_weight(eg, five_arrays)
    L = (10 - g["d"]).sum()
    L.backward()
    with pytest.raises(RuntimeError) as info:
        L.backward()
    msg = str(info.value)
    assert msg.startswith("Trying to backward through the graph a second time")
    assert "Specify retain_graph=True" in msg


def test_001_retain_graph_accumulates(five_arrays):
    g = _five_weight(eg, five_arrays)
    L = (10 - g["d"]).sum()
    L.backward(retain_graph=True)
    first = {k: arr(g[k].grad) for k in ("a", "w1", "w2", "w3", "w4")}
    L.backward()
    for k, v in first.items():
        np.testing.assert_allclose(arr(g[k].grad), 2 * v, rtol=1e-6, err_msg=k)


def test_001_freezing_with_requires_grad_false(five_arrays):
    a, w1, w2, w3, w4 = (eg.tensor(x.copy()) for x in five_arrays)
    w3.requires_grad = True
    b = w1 * a  # frozen branch: nothing in it requires grad
    assert not b.requires_grad and b.grad_fn is None
    L = (10 - (w3 * b + w4 * (w2 * a))).sum()
    L.backward()
    np.testing.assert_allclose(arr(w3.grad), -five_arrays[1] * five_arrays[0], rtol=1e-6)
    for t in (a, w1, w2, w4):
        assert t.grad is None


def test_001_no_grad_builds_no_graph(five_arrays):
    a, w1, w2, w3, w4 = (eg.tensor(x.copy(), requires_grad=True) for x in five_arrays)
    with eg.no_grad():
        b = w1 * a
        d = w3 * b + w4 * (w2 * a)
        L = 10 - d
    for t in (b, d, L):
        assert not t.requires_grad and t.grad_fn is None
    assert (w1 * a).requires_grad  # tracking resumes after the block


# =========================================================================== text 002
# y = x*x + 3*x + 1, control flow, graph lifetime, detach, no_grad / inference_mode


def test_002_quadratic_value_and_grad():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    assert y.item() == pytest.approx(11.0)
    assert fn_name(y) == "AddBackward0"
    y.backward()
    assert x.grad.item() == pytest.approx(7.0)  # dy/dx = 2x + 3 at x = 2


def test_002_quadratic_decomposed():
    x = eg.tensor(2.0, requires_grad=True)
    a = x * x
    b = 3 * x
    y = a + b + 1
    assert (a.item(), b.item(), y.item()) == (4.0, 6.0, 11.0)
    assert fn_name(a) == "MulBackward0"
    assert fn_name(b) == "MulBackward0"
    assert fn_name(y) == "AddBackward0"
    assert_grad_fn_repr(y, "AddBackward0")
    y.backward()
    assert x.grad.item() == pytest.approx(7.0)


def test_002_sequential_forward_matches_torch(rng):
    eg.manual_seed(0)
    model = enn.Sequential(enn.Linear(4, 8), enn.ReLU(), enn.Linear(8, 2))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((3, 4)).astype(np.float32))
    y = model(x)
    assert tuple(y.shape) == (3, 2)
    assert y.requires_grad and y.grad_fn is not None
    assert_close(y, ref(xt))


def test_002_square_grad():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    assert x.grad.item() == pytest.approx(4.0)


def test_002_vector_leaf():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    assert x.dtype == eg.float32


@pytest.mark.parametrize(
    "values, branch", [([1.0, 2.0, -0.5], "double"), ([-1.0, -2.0, 0.5], "square")]
)
def test_002_data_dependent_branch(values, branch):
    def f(x):
        if x.sum() > 0:
            return x * 2
        else:
            return x * x

    x = eg.tensor(values, requires_grad=True)
    out = f(x)
    assert fn_name(out) == "MulBackward0"
    out.sum().backward()
    v = np.array(values, dtype=np.float32)
    expected = np.full_like(v, 2.0) if branch == "double" else 2 * v
    np.testing.assert_allclose(arr(x.grad), expected)


def test_002_loop_doubling():
    x = eg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5):
        y = y * 2
    assert y.item() == pytest.approx(32.0)
    y.backward()
    assert x.grad.item() == pytest.approx(32.0)


def test_002_conditional_on_item():
    x = eg.tensor(-2.0, requires_grad=True)
    if x.item() > 0:
        y = x
    else:
        y = x * x
    assert y.item() == pytest.approx(4.0)
    y.backward()
    assert x.grad.item() == pytest.approx(-4.0)


def test_002_recursion():
    def power(x, n):
        return x if n == 1 else x * power(x, n - 1)

    x = eg.tensor(1.5, requires_grad=True)
    y = power(x, 4)
    y.backward()
    assert y.item() == pytest.approx(1.5**4)
    assert x.grad.item() == pytest.approx(4 * 1.5**3)


def test_002_graph_freed_after_backward():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert x.grad.item() == pytest.approx(4.0)


def test_002_graph_kept_with_retain_graph():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    assert x.grad.item() == pytest.approx(4.0)
    y.backward(retain_graph=True)
    assert x.grad.item() == pytest.approx(8.0)
    y.backward()
    assert x.grad.item() == pytest.approx(12.0)


def test_002_detach():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    z = y.detach()
    assert z.requires_grad is False and z.grad_fn is None and z.is_leaf
    assert z.item() == pytest.approx(4.0)
    assert y.requires_grad


def test_002_detach_shares_storage():
    x = eg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    z = y.detach()
    z.numpy()[1] = 100.0  # writing through the detached view shows up in y
    np.testing.assert_allclose(arr(y), [1.0, 100.0, 9.0])


def _small_model(rng):
    eg.manual_seed(1)
    model = enn.Sequential(enn.Linear(4, 8), enn.ReLU(), enn.Linear(8, 2))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((3, 4)).astype(np.float32))
    return model, ref, x, xt


def test_002_no_grad_inference(rng):
    model, ref, x, xt = _small_model(rng)
    model.eval()
    assert model.training is False
    with eg.no_grad():
        outputs = model(x)
    assert model(x).requires_grad
    assert not outputs.requires_grad and outputs.grad_fn is None
    with torch.no_grad():
        expected = ref(xt)
    assert_close(outputs, expected)


def test_002_inference_mode(rng):
    model, ref, x, xt = _small_model(rng)
    model.eval()
    with eg.inference_mode():
        outputs = model(x)
    assert model(x).requires_grad
    assert not outputs.requires_grad and outputs.grad_fn is None
    with torch.inference_mode():
        expected = ref(xt)
    assert_close(outputs, expected)


def test_002_inplace_on_leaf_that_requires_grad():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError) as info:
        x.add_(1)
    assert (
        str(info.value)
        == "a leaf Variable that requires grad is being used in an in-place operation."
    )
    y.backward()
    assert x.grad.item() == pytest.approx(4.0)


def test_002_inplace_on_saved_value_breaks_backward():
    x = eg.tensor(2.0, requires_grad=True)
    h = x * 1
    y = h * h  # saves h for the backward pass
    h.add_(1)
    assert h.item() == pytest.approx(3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_002_linear_cross_entropy_grad_shapes(rng):
    eg.manual_seed(2)
    model = enn.Linear(4, 2)
    ref = torch.nn.Linear(4, 2)
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((3, 4)).astype(np.float32))
    target, target_t = pair(np.array([0, 1, 1], dtype=np.int64))
    assert target.dtype == eg.int64
    loss = enn.CrossEntropyLoss()(model(x), target)
    loss_t = torch.nn.CrossEntropyLoss()(ref(xt), target_t)
    assert tuple(loss.shape) == ()
    loss.backward()
    loss_t.backward()
    assert_close(loss, loss_t)
    assert tuple(model.weight.grad.shape) == (2, 4)
    assert tuple(model.bias.grad.shape) == (2,)
    assert_close(model.weight.grad, ref.weight.grad)
    assert_close(model.bias.grad, ref.bias.grad)


def test_002_eager_execution():
    x = eg.tensor([1.0, 2.0])
    y = x + 1
    np.testing.assert_allclose(arr(y), [2.0, 3.0])
    assert not y.requires_grad and y.grad_fn is None
    assert repr(y) == "tensor([2., 3.])"


# =========================================================================== text 003
# z = (x + y) ** 2 at x = 2, y = 3


def test_003_square_of_sum_value_and_repr():
    x = eg.tensor(2.0, requires_grad=True)
    y = eg.tensor(3.0, requires_grad=True)
    a = x + y
    z = a**2
    assert a.item() == 5.0 and z.item() == 25.0
    assert fn_name(a) == "AddBackward0"
    assert fn_name(z) == "PowBackward0"
    assert repr(z) == "tensor(25., grad_fn=<PowBackward0>)"


def test_003_square_of_sum_gradients():
    x = eg.tensor(2.0, requires_grad=True)
    y = eg.tensor(3.0, requires_grad=True)
    z = (x + y) ** 2
    z.backward()
    assert x.grad.item() == 10.0
    assert y.grad.item() == 10.0
    assert repr(x.grad) == "tensor(10.)"
    assert repr(y.grad) == "tensor(10.)"


def test_003_leaves_and_intermediates():
    x = eg.tensor(2.0, requires_grad=True)
    y = eg.tensor(3.0, requires_grad=True)
    a = x + y
    z = a**2
    assert (x.is_leaf, y.is_leaf, a.is_leaf, z.is_leaf) == (True, True, False, False)
    z.backward()
    assert x.grad.item() == 10.0 and y.grad.item() == 10.0
    assert nonleaf_grad(a) is None
    assert nonleaf_grad(z) is None


def test_003_retain_grad():
    x = eg.tensor(2.0, requires_grad=True)
    y = eg.tensor(3.0, requires_grad=True)
    a = x + y
    a.retain_grad()
    z = a**2
    z.retain_grad()
    z.backward()
    assert a.grad.item() == 10.0
    assert z.grad.item() == 1.0
    assert x.grad.item() == 10.0


def test_003_linear_output_shape(rng):
    linear = enn.Linear(3, 4)
    X = eg.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    Y = linear(X)
    assert tuple(Y.shape) == (5, 4)
    w, b = arr(linear.weight), arr(linear.bias)
    np.testing.assert_allclose(arr(Y), arr(X) @ w.T + b, rtol=1e-5, atol=1e-6)


def test_003_mse_by_hand_is_scalar(rng):
    eg.manual_seed(3)
    model = enn.Linear(3, 1)
    ref = torch.nn.Linear(3, 1)
    copy_params(model, ref)
    X, Xt = pair(rng.standard_normal((8, 3)).astype(np.float32))
    y, yt = pair(rng.standard_normal((8, 1)).astype(np.float32))
    loss = ((model(X) - y) ** 2).mean()
    loss_t = ((ref(Xt) - yt) ** 2).mean()
    assert tuple(loss.shape) == ()
    assert fn_name(loss) == "MeanBackward0"
    assert_close(loss, loss_t)


def test_003_branch_on_positive_input():
    x = eg.tensor(2.0, requires_grad=True)
    if x.item() > 0:
        y = x**2
    else:
        y = -x
    y.backward()
    assert x.grad.item() == 4.0


def test_003_branch_on_negative_input():
    x = eg.tensor(-2.0, requires_grad=True)
    y = x**2 if x.item() > 0 else -x
    assert fn_name(y) == "NegBackward0"
    y.backward()
    assert x.grad.item() == -1.0


class _EgMLP(enn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = enn.Linear(10, 32)
        self.activation = enn.ReLU()
        self.layer2 = enn.Linear(32, 1)

    def forward(self, x):
        return self.layer2(self.activation(self.layer1(x)))


class _TorchMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(10, 32)
        self.activation = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(32, 1)

    def forward(self, x):
        return self.layer2(self.activation(self.layer1(x)))


def test_003_mlp_module_with_mse(rng):
    eg.manual_seed(4)
    model = _EgMLP()
    ref = _TorchMLP()
    copy_params(model, ref)
    X, Xt = pair(rng.standard_normal((16, 10)).astype(np.float32))
    target, target_t = pair(rng.standard_normal((16, 1)).astype(np.float32))
    loss = ((model(X) - target) ** 2).mean()
    loss_t = ((ref(Xt) - target_t) ** 2).mean()
    loss.backward()
    loss_t.backward()
    assert_close(loss, loss_t)

    shapes = [(n, tuple(p.shape), tuple(p.grad.shape)) for n, p in model.named_parameters()]
    assert shapes == [
        ("layer1.weight", (32, 10), (32, 10)),
        ("layer1.bias", (32,), (32,)),
        ("layer2.weight", (1, 32), (1, 32)),
        ("layer2.bias", (1,), (1,)),
    ]
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(arr(p.grad), arr(q.grad), rtol=1e-4, atol=1e-6, err_msg=n)


def test_003_requires_grad_from_one_input():
    x = eg.tensor(2.0, requires_grad=True)
    y = eg.tensor(3.0)
    z = x * y
    assert z.requires_grad is True


def test_003_no_graph_without_requires_grad():
    x = eg.tensor(2.0)
    y = eg.tensor(3.0)
    z = x * y
    assert z.requires_grad is False
    assert z.grad_fn is None
    assert z.item() == 6.0


def test_003_module_parameters_require_grad():
    layer = enn.Linear(3, 4)
    assert layer.weight.requires_grad is True
    assert layer.bias.requires_grad is True
    assert layer.weight.is_leaf and layer.bias.is_leaf


def test_003_detach_stops_the_path():
    x = eg.tensor(2.0, requires_grad=True)
    y = x**2
    z = y.detach()
    assert y.requires_grad is True
    assert z.requires_grad is False
    w = z * 3
    assert w.requires_grad is False
    assert w.item() == 12.0


def test_003_retain_graph_twice():
    x = eg.tensor(2.0, requires_grad=True)
    y = x**2
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0


def test_003_second_backward_without_retain_fails():
    x = eg.tensor(2.0, requires_grad=True)
    y = x**2
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_003_training_loop_matches_torch(rng):
    eg.manual_seed(5)
    model = enn.Sequential(enn.Linear(4, 8), enn.ReLU(), enn.Linear(8, 1))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    copy_params(model, ref)
    opt = eoptim.SGD(model.parameters(), lr=0.05)
    opt_t = torch.optim.SGD(ref.parameters(), lr=0.05)
    loss_fn, loss_fn_t = enn.MSELoss(), torch.nn.MSELoss()
    batches = [
        (
            rng.standard_normal((6, 4)).astype(np.float32),
            rng.standard_normal((6, 1)).astype(np.float32),
        )
        for _ in range(4)
    ]
    for xb, yb in batches:
        X, Xt = pair(xb)
        y, yt = pair(yb)
        loss = loss_fn(model(X), y)
        loss_t = loss_fn_t(ref(Xt), yt)
        opt.zero_grad()
        opt_t.zero_grad()
        loss.backward()
        loss_t.backward()
        opt.step()
        opt_t.step()
        assert_close(loss, loss_t, rtol=1e-5)
        for p, q in zip(model.parameters(), ref.parameters()):
            assert_close(p, q, rtol=1e-5)


def test_003_complete_example(rng):
    eg.manual_seed(0)
    model = enn.Sequential(enn.Linear(4, 8), enn.ReLU(), enn.Linear(8, 1))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    copy_params(model, ref)
    X, Xt = pair(rng.standard_normal((10, 4)).astype(np.float32))
    y, yt = pair(rng.standard_normal((10, 1)).astype(np.float32))
    loss = ((model(X) - y) ** 2).mean()
    loss_t = ((ref(Xt) - yt) ** 2).mean()
    assert_close(loss, loss_t)
    assert fn_name(loss) == "MeanBackward0"
    assert_grad_fn_repr(loss, "MeanBackward0")
    model.zero_grad()
    ref.zero_grad()
    loss.backward()
    loss_t.backward()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape) == tuple(p.grad.shape), n
        np.testing.assert_allclose(arr(p.grad), arr(q.grad), rtol=1e-4, atol=1e-6, err_msg=n)


def test_003_backward_on_tensor_without_grad():
    x = eg.tensor(2.0)
    y = x**2
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert (
        str(info.value) == "element 0 of tensors does not require grad and does not have a grad_fn"
    )
    x = eg.tensor(2.0, requires_grad=True)
    y = x**2
    y.backward()
    assert x.grad.item() == 4.0


def test_003_forgetting_zero_grad_accumulates(rng):
    eg.manual_seed(6)
    model = enn.Linear(3, 1)
    ref = torch.nn.Linear(3, 1)
    copy_params(model, ref)
    X, Xt = pair(rng.standard_normal((5, 3)).astype(np.float32))
    y, yt = pair(rng.standard_normal((5, 1)).astype(np.float32))

    # without zero_grad the second backward adds onto the first
    loss = ((model(X) - y) ** 2).mean()
    loss.backward()
    g1 = arr(model.weight.grad)
    loss = ((model(X) - y) ** 2).mean()
    loss.backward()
    np.testing.assert_allclose(arr(model.weight.grad), 2 * g1, rtol=1e-6)

    # the same in a training loop, against torch
    opt = eoptim.SGD(model.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None
    for _ in range(3):
        ((model(X) - y) ** 2).mean().backward()  # no zero_grad: gradients pile up
        ((ref(Xt) - yt) ** 2).mean().backward()
        opt.step()
        opt_t.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-5)
        assert_close(p, q, rtol=1e-5)

    # with zero_grad each step sees only its own gradient
    for _ in range(3):
        opt.zero_grad()
        opt_t.zero_grad()
        ((model(X) - y) ** 2).mean().backward()
        ((ref(Xt) - yt) ** 2).mean().backward()
        opt.step()
        opt_t.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-5)
        assert_close(p, q, rtol=1e-5)


class _EgEncDec(enn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = enn.Linear(4, 3)
        self.decoder = enn.Linear(3, 2)


class _TorchEncDec(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(4, 3)
        self.decoder = torch.nn.Linear(3, 2)


def test_003_accidental_detach(rng):
    eg.manual_seed(7)
    model = _EgEncDec()
    ref = _TorchEncDec()
    copy_params(model, ref)
    x, xt = pair(rng.standard_normal((5, 4)).astype(np.float32))

    h = model.encoder(x)
    h = h.detach()
    y = model.decoder(h)
    y.sum().backward()
    assert model.encoder.weight.grad is None and model.encoder.bias.grad is None
    assert model.decoder.weight.grad is not None

    ht = ref.encoder(xt).detach()
    ref.decoder(ht).sum().backward()
    assert_close(model.decoder.weight.grad, ref.decoder.weight.grad)
    assert_close(model.decoder.bias.grad, ref.decoder.bias.grad)

    # without the detach the encoder is reached too
    model.zero_grad()
    ref.zero_grad()
    model.decoder(model.encoder(x)).sum().backward()
    ref.decoder(ref.encoder(xt)).sum().backward()
    assert_close(model.encoder.weight.grad, ref.encoder.weight.grad)
    assert_close(model.encoder.bias.grad, ref.encoder.bias.grad)
