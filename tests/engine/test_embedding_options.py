"""nn.Embedding / F.embedding's max_norm (rows renormalised in place, outside autograd),
norm_type and scale_grad_by_freq against PyTorch: the output, the weight after the call, its
version counter and the weight gradient."""

import numpy as np
import torch
from _module_pairs import assert_close, backward_both, copy_weights
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 6),
    dim=st.integers(1, 4),
    idx_shape=st.lists(st.integers(1, 4), min_size=1, max_size=2),
    max_norm=st.sampled_from([None, 0.5, 1.0, 2.0]),
    norm_type=st.sampled_from([1.0, 2.0, 3.0, float("inf")]),
    freq=st.booleans(),
    pad=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_layer_matches_torch(n, dim, idx_shape, max_norm, norm_type, freq, pad, seed):
    rng = np.random.default_rng(seed)
    kwargs = dict(max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=freq)
    kwargs["padding_idx"] = int(rng.integers(n)) if pad else None
    t_mod = torch.nn.Embedding(n, dim, **kwargs)
    e_mod = eg.nn.Embedding(n, dim, **kwargs)
    copy_weights(t_mod, e_mod)
    idx = rng.integers(0, n, idx_shape)
    t_out, e_out = t_mod(torch.tensor(idx)), e_mod(eg.tensor(idx))
    assert_close(e_out, t_out, what="output")
    assert_close(e_mod.weight, t_mod.weight, what="weight after the renorm")
    backward_both(t_out, e_out, seed)
    assert_close(e_mod.weight.grad, t_mod.weight.grad, what="weight grad")
    assert repr(e_mod) == repr(t_mod)


def test_functional_renorm_bumps_the_version_and_records_no_graph():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0]], np.float32)
    idx = np.array([0, 1, 0])
    versions = []
    for m in (torch, eg):
        weight = m.tensor(w, requires_grad=True)
        before = weight._version
        out = m.nn.functional.embedding(m.tensor(idx), weight, max_norm=1.0)
        versions.append(weight._version - before)
        assert weight.grad_fn is None
        assert_close(weight, torch.tensor([[0.6, 0.8], [0.3, 0.4], [1.0, 0.0]]))
        assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
    assert versions[0] == versions[1] == 1


def test_double_backward():
    """The weight gradient is linear in the output's gradient, so a create_graph backward gives
    the same numbers and a graph that runs again."""
    idx = np.array([[0, 2, 2], [1, 2, 0]])
    w = np.random.default_rng(1).standard_normal((3, 2))
    res = []
    for m in (torch, eg):
        weight = m.tensor(w, requires_grad=True)
        g = m.tensor(np.ones((2, 3, 2)), requires_grad=True)
        out = m.nn.functional.embedding(m.tensor(idx), weight, padding_idx=1)
        (gw,) = m.autograd.grad(out, weight, g, create_graph=True)
        (gg,) = m.autograd.grad((gw * gw).sum(), g)
        res.append((gw.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0])
    np.testing.assert_allclose(res[1][1], res[0][1])


def test_double_backward_with_scale_grad_by_freq_is_the_derivative():
    """A known difference: PyTorch's embedding_dense_double_backward ignores
    scale_grad_by_freq (it sends 2 * gw[idx] here); the engine's gradient of the scaled gradient
    is the true derivative, 2 * gw[idx] / count[idx]."""
    idx = np.array([[0, 2, 2], [1, 2, 0]])
    weight = eg.tensor(np.zeros((3, 2)), requires_grad=True)
    g = eg.tensor(np.ones((2, 3, 2)), requires_grad=True)
    out = eg.nn.functional.embedding(eg.tensor(idx), weight, scale_grad_by_freq=True)
    (gw,) = eg.autograd.grad(out, weight, g, create_graph=True)
    np.testing.assert_allclose(gw.detach().numpy(), np.ones((3, 2)))
    (gg,) = eg.autograd.grad((gw * gw).sum(), g)
    counts = np.bincount(idx.ravel())[idx]
    np.testing.assert_allclose(gg.numpy(), np.broadcast_to((2.0 / counts)[..., None], (2, 3, 2)))
