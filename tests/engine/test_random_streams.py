"""The engine's random numbers are PyTorch's: after the same seed every draw gives the same
values and leaves the stream in the same place (integers and permutations exactly, floats to the
last bit, the AVX2 randn kernel included), for the global generator and Generator objects."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import engine as eg

SEEDS = [0, 1, 7, 42, 123456789, 2**32 + 5, 2**63 + 11]
SIZES = [1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 1000, 4097, 10000]
FLOATS = [(torch.float32, eg.float32), (torch.float64, eg.float64)]


def values(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def same(a, b):
    x, y = values(a), values(b)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
    np.testing.assert_array_equal(y, x)


def seed_both(s):
    torch.manual_seed(s)
    eg.manual_seed(s)


def in_step():
    """Both streams are at the same place: their next draws agree."""
    same(torch.randint(0, 2**40, (3,)), eg.randint(0, 2**40, (3,)))


# -- factories, every size ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_rand_and_randn_every_size(seed, tdt, edt):
    seed_both(seed)
    for n in SIZES:
        same(torch.rand(n, dtype=tdt), eg.rand(n, dtype=edt))
        same(torch.randn(n, dtype=tdt), eg.randn(n, dtype=edt))
        same(torch.randn(3, n % 7 + 1, dtype=tdt), eg.randn(3, n % 7 + 1, dtype=edt))
    in_step()


def test_randn_cached_normal_crosses_calls():
    """The scalar path keeps the sine of a Box-Muller pair for the next draw, across calls and
    across dtypes, and a vectorised draw in between leaves it in place."""
    seed_both(3)
    for n, dt in [(3, 0), (1, 1), (20, 0), (5, 1), (1, 0), (17, 1), (2, 0)]:
        tdt, edt = FLOATS[dt]
        same(torch.randn(n, dtype=tdt), eg.randn(n, dtype=edt))
    in_step()


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_randint_ranges_and_dtypes(seed):
    seed_both(seed)
    for low, high in [
        (0, 2),
        (0, 10),
        (-5, 5),
        (0, 2**28 - 1),
        (0, 2**28),
        (3, 2**40),
        (-(2**62), 2**62),
    ]:
        for n in (1, 17, 1000):
            same(torch.randint(low, high, (n,)), eg.randint(low, high, (n,)))
    for tdt, edt in [
        (torch.int32, eg.int32),
        (torch.int16, eg.int16),
        (torch.uint8, eg.uint8),
        (torch.float32, eg.float32),
        (torch.float64, eg.float64),
    ]:
        same(torch.randint(0, 100, (50,), dtype=tdt), eg.randint(0, 100, (50,), dtype=edt))
    same(torch.randint(6, (2, 3)), eg.randint(6, (2, 3)))
    in_step()


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_randperm(seed):
    seed_both(seed)
    for n in [0, 1, 2, 3, 16, 17, 100, 10000]:
        same(torch.randperm(n), eg.randperm(n))
    same(torch.randperm(9, dtype=torch.int32), eg.randperm(9, dtype=eg.int32))
    in_step()


def test_like_forms():
    seed_both(5)
    x, y = torch.zeros(4, 5), eg.zeros(4, 5)
    same(torch.rand_like(x), eg.rand_like(y))
    same(torch.randn_like(x), eg.randn_like(y))
    same(torch.randint_like(x, 3, 9), eg.randint_like(y, 3, 9))
    same(torch.randn_like(x, dtype=torch.float64), eg.randn_like(y, dtype=eg.float64))
    in_step()


# -- in-place fills -------------------------------------------------------------------------------
@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_uniform_and_normal_fills(tdt, edt):
    for seed in SEEDS[:4]:
        seed_both(seed)
        for n in SIZES:
            a, b = torch.empty(n, dtype=tdt), eg.empty(n, dtype=edt)
            same(a.uniform_(-0.37, 1.25), b.uniform_(-0.37, 1.25))
            same(a.normal_(0.3, 1.7), b.normal_(0.3, 1.7))
            same(a.exponential_(2.5), b.exponential_(2.5))
        in_step()


def test_strided_targets_fill_in_memory_order():
    seed_both(11)
    a, b = torch.empty(6, 5).t(), eg.empty(6, 5).t()
    same(a.normal_(), b.normal_())  # not contiguous: the scalar path, memory order
    same(a.uniform_(), b.uniform_())
    a, b = torch.empty(8, 8)[:, ::2], eg.empty(8, 8)[:, ::2]
    same(a.normal_(1.0, 2.0), b.normal_(1.0, 2.0))
    in_step()


def test_random_fills():
    seed_both(2)
    for tdt, edt in [
        (torch.int64, eg.int64),
        (torch.int32, eg.int32),
        (torch.uint8, eg.uint8),
        (torch.float32, eg.float32),
        (torch.float64, eg.float64),
        (torch.bool, eg.bool),
    ]:
        a, b = torch.empty(40, dtype=tdt), eg.empty(40, dtype=edt)
        same(a.random_(), b.random_())
        if tdt is not torch.bool:
            same(a.random_(7), b.random_(7))
        same(
            a.random_(2, 9) if tdt != torch.bool else a.random_(0, 2),
            b.random_(2, 9) if edt is not eg.bool else b.random_(0, 2),
        )
    in_step()


def test_bernoulli_forms():
    seed_both(4)
    for n in [1, 15, 16, 17, 1000]:
        p32 = torch.rand(n)
        p64 = torch.rand(n, dtype=torch.float64)
        e32, e64 = eg.tensor(p32.numpy()), eg.tensor(p64.numpy())
        eg.rand(n), eg.rand(n, dtype=eg.float64)  # the same draws as torch's p
        same(torch.bernoulli(p32), eg.bernoulli(e32))
        same(torch.bernoulli(p64), eg.bernoulli(e64))
        same(torch.empty(n).bernoulli_(0.3), eg.empty(n).bernoulli_(0.3))
        same(
            torch.empty(n, dtype=torch.int64).bernoulli_(0.7),
            eg.empty(n, dtype=eg.int64).bernoulli_(0.7),
        )
        same(torch.bernoulli(p32, 0.25), eg.bernoulli(e32, 0.25))
        same(
            torch.zeros(n, 2).bernoulli_(torch.full((n, 1), 0.4)),
            eg.zeros(n, 2).bernoulli_(eg.full((n, 1), 0.4)),
        )
    in_step()


def test_normal_tensor_forms():
    seed_both(6)
    mean, std = torch.randn(4, 5), torch.rand(4, 5)
    em, es = eg.tensor(mean.numpy()), eg.tensor(std.numpy())
    eg.randn(4, 5), eg.rand(4, 5)
    for tm, ts, m, s in [(mean, std, em, es), (mean, 0.5, em, 0.5), (0.5, std, 0.5, es)]:
        same(torch.normal(tm, ts), eg.normal(m, s))
    same(torch.normal(2.0, 3.0, (40,)), eg.normal(2.0, 3.0, (40,)))
    same(torch.normal(mean[0], std), eg.normal(em[0], es))  # broadcast
    in_step()


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(replacement):
    seed_both(8)
    for shape in [(5,), (3, 7), (2, 100)]:
        for dt, edt in FLOATS:
            p = torch.rand(*shape, dtype=dt) + 0.01
            e = eg.tensor(p.numpy())
            eg.rand(*shape, dtype=edt)
            for k in (1, 2, 5):
                same(torch.multinomial(p, k, replacement), eg.multinomial(e, k, replacement))
    in_step()


# -- generators and state -------------------------------------------------------------------------
def test_generators_are_independent_of_the_global_stream():
    seed_both(0)
    tg, eg_g = torch.Generator().manual_seed(99), eg.Generator().manual_seed(99)
    same(torch.randn(20, generator=tg), eg.randn(20, generator=eg_g))
    same(torch.rand(3), eg.rand(3))  # the global streams did not move
    same(torch.randperm(7, generator=tg), eg.randperm(7, generator=eg_g))
    same(torch.empty(5).uniform_(generator=tg), eg.empty(5).uniform_(generator=eg_g))
    same(torch.empty(5).normal_(generator=tg), eg.empty(5).normal_(generator=eg_g))
    same(torch.randint(0, 9, (4,), generator=tg), eg.randint(0, 9, (4,), generator=eg_g))
    assert eg_g.initial_seed() == tg.initial_seed() == 99
    assert eg.Generator().initial_seed() == torch.Generator().initial_seed()
    in_step()


def test_seeds_are_read_as_pytorch_reads_them():
    for s in [0, -1, -(2**63), 2**64 - 1, 2**32 + 3]:
        assert eg.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
        same(torch.rand(3), eg.rand(3))
    assert eg.initial_seed() == torch.initial_seed()
    with pytest.raises(RuntimeError):
        eg.manual_seed(2**64)


def test_rng_state_is_pytorch_s_bytes_and_round_trips():
    seed_both(21)
    torch.randn(3, dtype=torch.float64), eg.randn(3, dtype=eg.float64)  # a cached normal
    state = eg.get_rng_state()
    assert state.dtype == eg.uint8 and tuple(state.shape) == (5056,)
    same(torch.get_rng_state(), state)
    first = eg.randn(5)
    eg.set_rng_state(state)
    same(first, eg.randn(5))
    torch.set_rng_state(torch.get_rng_state())
    eg.set_rng_state(eg.tensor(torch.get_rng_state().numpy()))  # PyTorch's state loads here
    same(torch.randn(7, dtype=torch.float64), eg.randn(7, dtype=eg.float64))
    g = eg.Generator().manual_seed(4)
    g.set_state(eg.manual_seed(9).get_state())
    same(eg.randn(4), eg.randn(4, generator=g))
    seed_both(0)
    same(torch.get_rng_state(), eg.get_rng_state())  # freshly seeded, next_ still 0


def test_fork_rng_restores_the_stream():
    seed_both(13)
    with eg.random.fork_rng():
        eg.randn(100)
    same(torch.randn(5), eg.randn(5))
    assert eg.random.initial_seed() == 13


# -- a random mixed sequence stays in step --------------------------------------------------------
DRAWS = st.sampled_from(
    [
        "rand",
        "randn",
        "randn64",
        "randint",
        "randint64",
        "randperm",
        "uniform",
        "normal",
        "bernoulli",
        "exponential",
        "multinomial",
    ]
)


def draw(lib, kind, n):
    f32 = lib.float32
    if kind == "rand":
        return lib.rand(n)
    if kind == "randn":
        return lib.randn(n)
    if kind == "randn64":
        return lib.randn(n, dtype=lib.float64)
    if kind == "randint":
        return lib.randint(-3, 50, (n,))
    if kind == "randint64":
        return lib.randint(0, 2**33, (n,))
    if kind == "randperm":
        return lib.randperm(n)
    if kind == "uniform":
        return lib.empty(n, dtype=f32).uniform_(-2.0, 0.5)
    if kind == "normal":
        return lib.empty(n, dtype=lib.float64).normal_(1.0, 0.1)
    if kind == "bernoulli":
        return lib.empty(n).bernoulli_(0.6)
    if kind == "exponential":
        return lib.empty(n).exponential_()
    return lib.multinomial(lib.ones(n + 1), 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.tuples(DRAWS, st.integers(1, 70)), max_size=12))
def test_mixed_draws_stay_in_step(seed, steps):
    seed_both(seed)
    for kind, n in steps:
        same(draw(torch, kind, n), draw(eg, kind, n))
    in_step()


# -- nn.init and the layers ------------------------------------------------------------------------
INITS = [
    ("uniform_", (-0.3, 0.2), {}),
    ("normal_", (0.1, 0.3), {}),
    ("constant_", (0.25,), {}),
    ("ones_", (), {}),
    ("zeros_", (), {}),
    ("xavier_uniform_", (1.3,), {}),
    ("xavier_normal_", (), {}),
    ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
    ("kaiming_normal_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("trunc_normal_", (0.0, 0.02), {}),
    ("trunc_normal_", (0.0, 1.0, 1.5, 3.0), {}),  # the rejection branch
    ("sparse_", (0.3,), {}),
]


@pytest.mark.parametrize(
    "name,args,kwargs", INITS, ids=[f"{n}{i}" for i, (n, _, _) in enumerate(INITS)]
)
@pytest.mark.parametrize("shape", [(7, 5), (40, 30)])
def test_nn_init_draws_as_pytorch(name, args, kwargs, shape):
    for seed in (0, 1, 2):
        seed_both(seed)
        a, b = torch.empty(*shape), eg.empty(*shape)
        getattr(torch.nn.init, name)(a, *args, **kwargs)
        getattr(eg.nn.init, name)(b, *args, **kwargs)
        same(a, b)
        in_step()


def test_nn_init_generators_eye_dirac_orthogonal():
    tg, g = torch.Generator().manual_seed(3), eg.Generator().manual_seed(3)
    a, b = torch.empty(6, 4, 3, 3), eg.empty(6, 4, 3, 3)
    same(
        torch.nn.init.kaiming_uniform_(a, generator=tg), eg.nn.init.kaiming_uniform_(b, generator=g)
    )
    same(
        torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), 2), eg.nn.init.dirac_(eg.empty(4, 2, 3, 3), 2)
    )
    same(torch.nn.init.eye_(torch.empty(3, 5)), eg.nn.init.eye_(eg.empty(3, 5)))
    for shape in [(4, 9), (9, 4), (3, 2, 5)]:
        seed_both(1)
        a = torch.nn.init.orthogonal_(torch.empty(*shape), 1.5)
        b = eg.nn.init.orthogonal_(eg.empty(*shape), 1.5)
        np.testing.assert_allclose(values(b), values(a), rtol=1e-5, atol=1e-6)  # LAPACK's QR
        in_step()


def net(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 6, 3, groups=2)
            self.up = nn.ConvTranspose2d(6, 2, 2)
            self.c1 = nn.Conv1d(2, 3, 3)
            self.emb = nn.Embedding(10, 8, padding_idx=0)
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
            self.kv = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True)
            self.ln = nn.LayerNorm(8)
            self.fc1 = nn.Linear(8 + 6 * 4, 16)
            self.drop = nn.Dropout(0.3)
            self.fc2 = nn.Linear(16, 3)

        def forward(self, img, ids):
            h = self.bn(self.conv1(img)).relu()
            h = self.conv2(h).relu()  # (N, 6, 4, 4)
            h = h.mean(dim=(2, 3))
            e = self.emb(ids)
            e = self.ln(self.attn(e, e, e, need_weights=False)[0]).mean(dim=1)
            z = self.drop(torch_cat(nn, [e, h.repeat(1, 4)]))
            return self.fc2(self.fc1(z).tanh())

    return Net()


def torch_cat(nn, ts):
    return (torch if nn is torch.nn else eg).cat(ts, dim=1)


@pytest.mark.parametrize("seed", [0, 1, 1234])
def test_manual_seed_then_model_gives_pytorch_parameters_and_first_loss(seed):
    seed_both(seed)
    tm, em = net(torch.nn), net(eg.nn)
    tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
    assert tp.keys() == ep.keys()
    for k in tp:
        same(tp[k], ep[k])
    img, ids = torch.randn(2, 1, 6, 6), torch.randint(0, 10, (2, 5))
    eimg, eids = eg.randn(2, 1, 6, 6), eg.randint(0, 10, (2, 5))
    same(img, eimg)
    same(ids, eids)
    target = torch.randint(0, 3, (2,))
    etarget = eg.randint(0, 3, (2,))
    loss_t = torch.nn.functional.cross_entropy(tm(img, ids), target)  # dropout masks included
    loss_e = eg.nn.functional.cross_entropy(em(eimg, eids), etarget)
    np.testing.assert_allclose(values(loss_e), values(loss_t), rtol=1e-5)
    in_step()


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_masks(p):
    seed_both(17)
    x, y = torch.ones(3, 4, 5), eg.ones(3, 4, 5)
    F, G = torch.nn.functional, eg.nn.functional
    same(F.dropout(x, p), G.dropout(y, p))
    same(F.dropout2d(torch.ones(2, 3, 4, 4), p), G.dropout2d(eg.ones(2, 3, 4, 4), p))
    same(F.dropout1d(torch.ones(2, 3, 4), p), G.dropout1d(eg.ones(2, 3, 4), p))
    in_step()


def test_cuda_generator_draws_the_cpu_stream():
    g = eg.Generator(device="cuda" if eg.cuda.is_available() else "cpu").manual_seed(5)
    same(torch.randn(20, generator=torch.Generator().manual_seed(5)), eg.randn(20, generator=g))
