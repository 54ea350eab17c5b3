"""scaled_dot_product_attention, MultiheadAttention and TransformerEncoder(Layer) against
PyTorch: values, gradients (input and parameter), masks, layouts, errors, and a few training
steps with the same weights."""

import numpy as np
import pytest
import torch
from _torch_compare import (
    Mask,
    R,
    assert_same_array,
    case,
    compare_with_torch,
    eg,
    eg_F,
    f32,
    gradcheck_case,
    seed_for,
    to_np,
)

import engine.nn as enn


def sdpa(**kw):
    return lambda m, F, q, k, v, *mask: F.scaled_dot_product_attention(q, k, v, *mask, **kw)


def sdpa_neg_mask(m, F, q, k, v, mask):
    """A float mask with -inf entries, one whole row masked (PyTorch's safe softmax gives 0)."""
    bias = m.zeros(tuple(mask.shape), dtype=q.dtype).masked_fill(mask, float("-inf"))
    bias[0] = float("-inf")
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def _mask_row_empty(m, F, q, k, v, mask):
    mask = mask.clone()
    mask[1] = False
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


CASES = [
    case("plain", sdpa(), R(2, 3, 4, 5), R(2, 3, 6, 5), R(2, 3, 6, 7)),
    case("3d", sdpa(), R(2, 4, 5), R(2, 6, 5), R(2, 6, 3)),
    case("2d", sdpa(), R(4, 5), R(6, 5), R(6, 3)),
    case("causal", sdpa(is_causal=True), R(2, 3, 4, 5), R(2, 3, 4, 5), R(2, 3, 4, 5)),
    case("causal_rect", sdpa(is_causal=True), R(1, 2, 3, 4), R(1, 2, 5, 4), R(1, 2, 5, 4)),
    case("scale", sdpa(scale=0.3), R(2, 3, 4, 5), R(2, 3, 6, 5), R(2, 3, 6, 7)),
    case("bool_mask", sdpa(), R(2, 3, 4, 5), R(2, 3, 6, 5), R(2, 3, 6, 7), Mask(4, 6)),
    case("bool_mask_bcast", sdpa(), R(2, 3, 4, 5), R(2, 3, 6, 5), R(2, 3, 6, 7), Mask(2, 1, 4, 6)),
    case("empty_row", _mask_row_empty, R(2, 4, 5), R(2, 6, 5), R(2, 6, 3), Mask(4, 6)),
    case("float_mask", sdpa(), R(2, 3, 4, 5), R(2, 3, 6, 5), R(2, 3, 6, 7), R(3, 1, 6)),
    case("float_mask_neg_inf", sdpa_neg_mask, R(2, 4, 5), R(2, 6, 5), R(2, 6, 3), Mask(4, 6)),
    case("batch_bcast", sdpa(), R(2, 3, 4, 5), R(1, 3, 6, 5), R(2, 1, 6, 7)),
    case("gqa", sdpa(enable_gqa=True), R(2, 4, 4, 5), R(2, 2, 6, 5), R(2, 2, 6, 7)),
    case("f32", sdpa(is_causal=True), f32(R(2, 4, 5)), f32(R(2, 4, 5)), f32(R(2, 4, 5))),
    case("no_grad_key", sdpa(), R(2, 4, 5), R(2, 6, 5, grad=False), R(2, 6, 3)),
]


@pytest.mark.parametrize("name, fn, specs", CASES)
def test_sdpa_vs_torch(name, fn, specs):
    compare_with_torch(name, fn, specs)


# PyTorch has no double backward for its CPU causal kernel: those are left to gradcheck
@pytest.mark.parametrize(
    "name, fn, specs", [c for c in CASES if c.id != "f32" and not c.id.startswith("causal")]
)
def test_sdpa_double_backward_vs_torch(name, fn, specs):
    def twice(m, F, *inputs):
        out = fn(m, F, *inputs)
        diff = [x for x in inputs if x.requires_grad]
        g = m.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)))
        grads = m.autograd.grad(out, diff, g, create_graph=True)
        sum((gr * gr).sum() for gr in grads).backward()

    compare_with_torch(name + "-double", twice, specs)


@pytest.mark.parametrize(
    "name, fn, specs",
    [
        c
        for c in CASES
        if c.id in ("plain", "causal", "float_mask", "gqa", "bool_mask", "empty_row")
    ],
)
def test_sdpa_gradcheck(name, fn, specs):
    assert gradcheck_case(name, fn, specs) is True


def test_sdpa_dropout_seeded_and_scaled():
    rng = np.random.default_rng(0)
    q, k, v = (eg.tensor(rng.standard_normal((2, 4, 8))) for _ in range(3))
    eg.manual_seed(3)
    a = eg_F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    eg.manual_seed(3)
    b = eg_F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    plain = eg_F.scaled_dot_product_attention(q, k, v)
    assert not np.allclose(to_np(a), to_np(plain))


ERRORS = [
    (
        "causal_and_mask",
        lambda m, F, q: F.scaled_dot_product_attention(
            q[0], q[0], q[0], attn_mask=m.ones(3, 3, dtype=m.bool), is_causal=True
        ),
    ),
    (
        "gqa_heads",
        lambda m, F, q: F.scaled_dot_product_attention(
            q, m.zeros(2, 3, 3, 5), m.zeros(2, 3, 3, 5), enable_gqa=True
        ),
    ),
    (
        "long_mask",
        lambda m, F, q: F.scaled_dot_product_attention(
            q, q, q, attn_mask=m.ones(3, 3, dtype=m.int64)
        ),
    ),
    (
        "mha_causal_no_mask",
        lambda m, F, q: m.nn.MultiheadAttention(5, 1)(q[0], q[0], q[0], is_causal=True),
    ),
    (
        "mha_mask_shape",
        lambda m, F, q: m.nn.MultiheadAttention(5, 1)(q[0], q[0], q[0], attn_mask=m.zeros(4, 5)),
    ),
    (
        "mha_3d_mask_shape",
        lambda m, F, q: m.nn.MultiheadAttention(5, 1)(q[0], q[0], q[0], attn_mask=m.zeros(2, 4, 4)),
    ),
    ("mha_heads", lambda m, F, q: m.nn.MultiheadAttention(8, 3)),
    ("encoder_activation", lambda m, F, q: m.nn.TransformerEncoderLayer(8, 2, activation="tanh")),
]


@pytest.mark.parametrize("name, fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as te:
        fn(torch, torch.nn.functional, torch.zeros(2, 4, 3, 5))
    with pytest.raises(Exception) as ee:
        fn(eg, eg_F, eg.zeros(2, 4, 3, 5))
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


# -- MultiheadAttention ----------------------------------------------------------------------------
def _copy(tm, em):
    em.load_state_dict({k: eg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


MHA_KINDS = [
    {},
    {"kdim": 3, "vdim": 5},
    {"add_bias_kv": True, "add_zero_attn": True},
    {"bias": False},
]
MHA_CALLS = [
    {},
    {"attn_mask": "bool"},
    {"attn_mask": "float"},
    {"attn_mask": "3d"},
    {"key_padding_mask": "bool"},
    {"attn_mask": "bool", "key_padding_mask": "bool", "need_weights": False},
    {"attn_mask": "float", "average_attn_weights": False},
    {"attn_mask": "causal", "is_causal": True, "need_weights": False},
]


def _masks(call, m, rng, n, L, s, h):
    am = rng.random((L, s)) < 0.3
    am[:, 0] = False
    kpm = rng.random((n, s)) < 0.3
    kpm[:, 1] = False
    out = {}
    for k, v in call.items():
        if v == "bool":
            out[k] = m.tensor(am if k == "attn_mask" else kpm)
        elif v == "float":
            out[k] = m.tensor(rng.standard_normal((L, s)))
        elif v == "3d":
            out[k] = m.tensor(rng.standard_normal((n * h, L, s)))
        elif v == "causal":
            out[k] = m.tensor(np.triu(np.ones((L, s), dtype=bool), 1))
        else:
            out[k] = v
    return out


# the causal hint is checked with the default layout only (one is enough)
MHA_CASES = [
    pytest.param(kind, call, id=f"{'-'.join(kind) or 'default'}:{'-'.join(call) or 'plain'}")
    for kind in MHA_KINDS
    for call in MHA_CALLS
    if not ("is_causal" in call and kind)
]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind,call", MHA_CASES)
def test_multihead_attention_vs_torch(batch_first, kind, call):
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, **kind).double()
    em = enn.MultiheadAttention(8, 2, batch_first=batch_first, **kind).double()
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(em) == repr(tm)
    _copy(tm, em)
    rng = np.random.default_rng(seed_for(f"{batch_first}{kind}{call}"))
    n, L, s = 2, 4, (4 if "is_causal" in call else 6)
    shape = (lambda a, b, d: (a, b, d)) if batch_first else (lambda a, b, d: (b, a, d))
    arrays = [
        rng.standard_normal(shape(n, L, 8)),
        rng.standard_normal(shape(n, s, kind.get("kdim", 8))),
        rng.standard_normal(shape(n, s, kind.get("vdim", 8))),
    ]
    if "is_causal" in call:
        arrays[1] = arrays[2] = arrays[0]
    mask_rng_state = rng.bit_generator.state
    results = []
    for m, mod in ((torch, tm), (eg, em)):
        rng.bit_generator.state = mask_rng_state
        kw = _masks(call, m, rng, n, L, s, 2)
        ins = [m.tensor(a, requires_grad=True) for a in arrays]
        out, w = mod(*ins, **kw)
        g = np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))
        out.backward(m.tensor(g))
        results.append((out, w, ins, list(mod.parameters())))
    (to, tw, ti, tp), (eo, ew, ei, ep) = results
    assert_same_array(to_np(eo), to_np(to), "output")
    assert (ew is None) == (tw is None)
    if tw is not None:
        assert_same_array(to_np(ew), to_np(tw), "weights")
    for a, b in zip(ei + ep, ti + tp):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert_same_array(to_np(a.grad), to_np(b.grad), "grad")


def test_multihead_attention_unbatched_and_self_attention():
    tm = torch.nn.MultiheadAttention(6, 3).double()
    em = enn.MultiheadAttention(6, 3).double()
    _copy(tm, em)
    x = np.random.default_rng(0).standard_normal((5, 6))
    kpm = np.array([False, False, True, False, True])
    to_, tw = tm(*(torch.tensor(x),) * 3, key_padding_mask=torch.tensor(kpm))
    xe = eg.tensor(x)
    eo, ew = em(xe, xe, xe, key_padding_mask=eg.tensor(kpm))
    assert_same_array(to_np(eo), to_np(to_), "unbatched out")
    assert_same_array(to_np(ew), to_np(tw), "unbatched weights")


def test_multihead_attention_init():
    eg.manual_seed(0)
    m = enn.MultiheadAttention(64, 4)
    w = to_np(m.in_proj_weight)
    bound = np.sqrt(6.0 / (64 + 3 * 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not to_np(m.in_proj_bias).any() and not to_np(m.out_proj.bias).any()
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert m.in_proj_weight.dtype == eg.float32


# -- TransformerEncoder ----------------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_vs_torch(norm_first, activation, batch_first):
    kw = dict(
        dim_feedforward=16,
        dropout=0.0,
        activation=activation,
        batch_first=batch_first,
        norm_first=norm_first,
    )
    tm = torch.nn.TransformerEncoderLayer(8, 2, **kw).double()
    em = enn.TransformerEncoderLayer(8, 2, **kw).double()
    assert list(em.state_dict()) == list(tm.state_dict())
    assert repr(em) == repr(tm)
    _copy(tm, em)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    causal = np.triu(np.full((5, 5), -np.inf), 1)
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 3:] = True
    for extra in ({}, {"is_causal": True}, {"kpm": True}):
        outs = []
        for m, mod in ((torch, tm), (eg, em)):
            xi = m.tensor(x, requires_grad=True)
            kw2 = {}
            if "is_causal" in extra:
                kw2 = {"src_mask": m.tensor(causal), "is_causal": True}
            if "kpm" in extra:
                kw2 = {"src_key_padding_mask": m.tensor(kpm)}
            y = mod(xi, **kw2)
            (y * m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
            outs.append((y, xi, [p.grad for p in mod.parameters()]))
            mod.zero_grad()
        (ty, tx, tg), (ey, ex, eg_) = outs
        assert_same_array(to_np(ey), to_np(ty), f"out {extra}")
        assert_same_array(to_np(ex.grad), to_np(tx.grad), f"input grad {extra}")
        for a, b in zip(eg_, tg):
            assert_same_array(to_np(a), to_np(b), f"param grad {extra}")


def test_tiny_transformer_training_steps_vs_torch():
    """Embedding -> 2-layer pre-norm encoder (causal) -> Linear, Adam, three steps: every
    parameter equal to PyTorch's after each step."""

    def build(nn):
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
        return nn.ModuleDict(
            {
                "emb": nn.Embedding(11, 8, padding_idx=0),
                "enc": nn.TransformerEncoder(
                    layer, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False
                ),
                "head": nn.Linear(8, 11),
            }
        )

    tm, em = build(torch.nn).double(), build(enn).double()
    assert list(em.state_dict()) == list(tm.state_dict())
    _copy(tm, em)
    to = torch.optim.Adam(tm.parameters(), lr=1e-2)
    eo = eg.optim.Adam(em.parameters(), lr=1e-2)
    rng = np.random.default_rng(2)
    mask = np.triu(np.full((6, 6), -np.inf), 1)
    for _ in range(3):
        tokens = rng.integers(0, 11, (3, 6))
        target = rng.integers(0, 11, (3 * 6,))
        for m, mod, opt in ((torch, tm, to), (eg, em, eo)):
            opt.zero_grad()
            h = mod["enc"](mod["emb"](m.tensor(tokens)), mask=m.tensor(mask))
            loss = m.nn.functional.cross_entropy(mod["head"](h).reshape(-1, 11), m.tensor(target))
            loss.backward()
            opt.step()
        for (k, tp), ep in zip(tm.named_parameters(), em.parameters()):
            np.testing.assert_allclose(
                # atol 1e-10: parameters whose true gradient is 0 (the key part of in_proj_bias)
                # take Adam steps on rounding noise, which differs from run to run in torch
                to_np(ep),
                tp.detach().numpy(),
                rtol=1e-9,
                atol=1e-10,
                err_msg=k,
            )


def test_encoder_detects_causal_mask():
    from engine.nn.attention import _is_causal_mask

    assert _is_causal_mask(eg.tensor(np.triu(np.full((4, 4), -np.inf), 1)), 4)
    assert _is_causal_mask(eg.tensor(np.triu(np.ones((4, 4), dtype=bool), 1)), 4)
    assert not _is_causal_mask(eg.zeros(4, 4), 4)
    assert not _is_causal_mask(None, 4)


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3, 4, 5)) for _ in range(3)]
    mask = rng.random((4, 4)) < 0.5
    mask[:, 0] = True
    res = {}
    for dev in ("cpu", "cuda"):
        q, k, v = (eg.tensor(a, device=dev, requires_grad=True) for a in arrays)
        out = eg_F.scaled_dot_product_attention(q, k, v, attn_mask=eg.tensor(mask, device=dev))
        out2 = eg_F.scaled_dot_product_attention(q, k, v, is_causal=True)
        (out.sum() + (out2 * out2).sum()).backward()
        res[dev] = [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (q, k, v)]
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    m = enn.MultiheadAttention(8, 2, batch_first=True).to("cuda")
    x = eg.randn(2, 3, 8, device="cuda")
    assert m(x, x, x)[0].device.type == "cuda"
