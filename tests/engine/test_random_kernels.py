"""PyTorch's random stream and its uniform and normal fills in C (engine/_random_fill.c) against
PyTorch and against the numpy steps that do the same where the module is not built (the
fallbacks in _generator and _distributions): the twister's words around its twists, rand,
uniform_, randn and normal_ of every size class (for normals: the scalar path below 16,
whole blocks of 16, a recomputed tail, 10**6), float32 and float64, several seeds, bounds,
means and deviations, to the bit (the sign of a zero included), and the stream left where
PyTorch leaves it. The module's portable build and
its AVX2 build give the same bits; the float32 fused multiply-add the numpy path uses is
correctly rounded even where float64 rounding lands halfway between two float32 values."""

import copy
import random
from fractions import Fraction

import numpy as np
import pytest
import torch

import engine as eg
from engine import _avx_mathfun, _generator
from engine._generator import Generator

SEEDS = [0, 3, 42, 2**32 + 9]
SIZES = [1, 5, 15, 16, 17, 31, 32, 33, 47, 48, 100, 1000, 4097, 65537]
FLOATS = [(torch.float32, eg.float32), (torch.float64, eg.float64)]
MOMENTS = [(0.0, 1.0), (0.5, 2.5), (-3.0, 0.1), (1e-3, 7.0)]
BOUNDS = [(0.0, 1.0), (-1.0, 1.0), (-0.0721, 0.0721), (3.0, 3.5), (-1e4, 2.5)]


def bits(t):
    """The values as raw bytes, so -0.0 and 0.0 (equal as numbers) tell apart."""
    a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)
    return np.ascontiguousarray(a).view(np.uint8)


def same_bits(a, b):
    x, y = bits(a), bits(b)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_array_equal(y, x)


def in_step():
    assert torch.randint(0, 2**40, (4,)).tolist() == eg.randint(0, 2**40, (4,)).tolist()


@pytest.fixture
def numpy_fill(monkeypatch):
    """Draws inside `use()` take the numpy steps (numpy's words too), as without the C module."""

    def use(fn, *args):
        with monkeypatch.context() as m:
            m.setattr(_generator, "_random_fill", None)
            return fn(*args)

    return use


def test_the_kernel_is_built():
    # `pip install -e .` builds it (setup.py); the randn speed target counts on it
    assert _generator._random_fill is not None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_randn_and_normal_match_pytorch(seed, tdt, edt):
    torch.manual_seed(seed)
    eg.manual_seed(seed)
    for n in SIZES:
        same_bits(torch.randn(n, dtype=tdt), eg.randn(n, dtype=edt))
        mean, std = MOMENTS[n % len(MOMENTS)]
        t = torch.empty(n, dtype=tdt).normal_(mean, std)
        e = eg.empty(n, dtype=edt).normal_(mean, std)
        same_bits(t, e)
    in_step()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_rand_and_uniform_match_pytorch(seed, tdt, edt):
    torch.manual_seed(seed)
    eg.manual_seed(seed)
    for n in [0, *SIZES]:
        same_bits(torch.rand(n, dtype=tdt), eg.rand(n, dtype=edt))
        low, high = BOUNDS[n % len(BOUNDS)]
        t = torch.empty(n, dtype=tdt).uniform_(low, high)
        e = eg.empty(n, dtype=edt).uniform_(low, high)
        same_bits(t, e)
    in_step()


@pytest.mark.parametrize("seed", [0, 11])
@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_a_million_match_pytorch(seed, tdt, edt):
    torch.manual_seed(seed)
    eg.manual_seed(seed)
    same_bits(torch.randn(10**6, dtype=tdt), eg.randn(10**6, dtype=edt))
    same_bits(
        torch.empty(10**6 + 5, dtype=tdt).normal_(2.0, 0.3),
        eg.empty(10**6 + 5, dtype=edt).normal_(2.0, 0.3),
    )
    same_bits(torch.rand(10**6, dtype=tdt), eg.rand(10**6, dtype=edt))
    same_bits(
        torch.empty(10**6, dtype=tdt).uniform_(-0.3, 0.7),
        eg.empty(10**6, dtype=edt).uniform_(-0.3, 0.7),
    )
    in_step()


@pytest.mark.parametrize("tdt,edt", FLOATS, ids=["float32", "float64"])
def test_fills_write_into_the_tensor_and_its_views(tdt, edt):
    """A contiguous tensor is filled where it lies: a view of rows fills its base's rows, the
    rest of the base keeps its values, and the versions move on as PyTorch's do."""
    torch.manual_seed(4)
    eg.manual_seed(4)
    tb, eb = torch.zeros(6, 40, dtype=tdt), eg.zeros(6, 40, dtype=edt)
    tv, ev = tb[1:4], eb[1:4]
    tv.uniform_(-2.0, 3.0)
    ev.uniform_(-2.0, 3.0)
    same_bits(tb, eb)
    tb[4:].normal_(1.0, 0.5)
    eb[4:].normal_(1.0, 0.5)
    same_bits(tb, eb)
    assert ev._version == tv._version and eb._version == tb._version
    tw, ew = torch.empty(30, 20, dtype=tdt), eg.empty(30, 20, dtype=edt)
    tw.T.normal_()  # not contiguous: the scalar path, in memory order
    ew.T.normal_()
    same_bits(tw, ew)
    tw.T.uniform_(-1.0, 1.0)
    ew.T.uniform_(-1.0, 1.0)
    same_bits(tw, ew)
    in_step()


@pytest.mark.parametrize("seed,at", [(2746, 39010), (1918, 50706)])
def test_a_zero_uniform_gives_plus_zero(seed, at):
    """A word whose low 24 bits are 0 in a radius lane gives log(1) = 0 and a radius of -0;
    PyTorch's fused `* 1 + 0` turns the -0 product into +0, the engine too, in C and numpy."""
    n = (at // 16 + 1) * 16
    assert Generator().manual_seed(seed).words(at + 1)[at] & 0xFFFFFF == 0
    torch.manual_seed(seed)
    t = torch.randn(n)
    assert not np.signbit(t[at].item()) and t[at].item() == 0
    eg.manual_seed(seed)
    same_bits(t, eg.randn(n))


def draws(fill, seed, n, dtype, a, b):
    """`fill` ("normal_", "uniform_") of n elements on a fresh generator, and the words that
    follow (where the stream stands)."""
    g = Generator().manual_seed(seed)
    out = getattr(eg.empty(n, dtype=dtype), fill)(a, b, generator=g)
    return out, g.words(3)


@pytest.mark.parametrize("seed", [1, 2**40 + 1])
@pytest.mark.parametrize(
    "fill,a,b", [("normal_", *m) for m in MOMENTS[:3]] + [("uniform_", *b) for b in BOUNDS[:3]]
)
def test_numpy_steps_give_the_same_bits(numpy_fill, seed, fill, a, b):
    for n in [1, 15, 16, 17, 40, 1000, 4097, 10**5]:
        for dt in (eg.float32, eg.float64):
            c_out, c_next = draws(fill, seed, n, dt, a, b)
            np_out, np_next = numpy_fill(draws, fill, seed, n, dt, a, b)
            same_bits(np_out, c_out)
            np.testing.assert_array_equal(np_next, c_next)
    c_out, _ = draws(fill, seed, 10**6, eg.float32, a, b)
    same_bits(numpy_fill(draws, fill, seed, 10**6, eg.float32, a, b)[0], c_out)


@pytest.mark.parametrize("n", [16, 33, 4096, 10**6 + 7])
def test_portable_and_simd_builds_agree(n):
    kernels = _generator._random_fill
    for fill, dt in [
        (kernels.normal_f32, np.float32),
        (kernels.normal_f64, np.float64),
        (kernels.uniform_f32, np.float32),
        (kernels.uniform_f64, np.float64),
    ]:
        fast_g, portable_g = Generator().manual_seed(n), Generator().manual_seed(n)
        fast, portable = np.empty(n, dt), np.empty(n, dt)
        fill(fast_g._bits.capsule, fast, -0.25, 1.5)
        fill(portable_g._bits.capsule, portable, -0.25, 1.5, True)
        np.testing.assert_array_equal(fast.view(np.uint8), portable.view(np.uint8))
        np.testing.assert_array_equal(fast_g.words(5), portable_g.words(5))
    fast, portable = np.empty(n, np.uint32), np.empty(n, np.uint32)
    kernels.words(Generator().manual_seed(7)._bits.capsule, fast)
    kernels.words(Generator().manual_seed(7)._bits.capsule, portable, True)
    np.testing.assert_array_equal(fast, portable)


@pytest.mark.parametrize("seed", [0, 5, 2**32 - 1])
def test_words_are_numpys_across_twists(numpy_fill, seed):
    """Runs of every length from every place in the 624-word ring: the C twister gives numpy's
    words and leaves the state (PyTorch's 5056 bytes) as numpy's does."""
    c, ref = Generator().manual_seed(seed), Generator().manual_seed(seed)
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.choice([0, 1, 2, 7, 623, 624, 625, 1249, rng.randrange(3000)])
        np.testing.assert_array_equal(c.words(n), numpy_fill(ref.words, n))
        np.testing.assert_array_equal(c.get_state()._data, ref.get_state()._data)


def test_a_copied_generator_draws_its_own_stream():
    g = Generator().manual_seed(3)
    g.words(10)
    c = copy.deepcopy(g)
    np.testing.assert_array_equal(c.words(700), g.words(700))  # the same place, apart
    a = eg.randn(100, generator=g)
    b = eg.randn(100, generator=c)
    same_bits(a, b)
    np.testing.assert_array_equal(c.get_state()._data, g.get_state()._data)


def test_the_kernels_refuse_what_does_not_fit():
    kernels = _generator._random_fill
    bits = Generator()._bits.capsule
    with pytest.raises(ValueError, match="16 or more 4-byte elements"):
        kernels.normal_f32(bits, np.empty(15, np.float32), 0.0, 1.0)
    with pytest.raises(ValueError, match="8-byte elements"):
        kernels.uniform_f64(bits, np.empty(5, np.float32)[:3], 0.0, 1.0)
    with pytest.raises(ValueError, match="whole number of words"):
        kernels.words(bits, np.empty(3, np.uint8))
    with pytest.raises(TypeError, match="BitGenerator capsule"):
        kernels.words(object(), np.empty(3, np.uint32))
    with pytest.raises(TypeError):
        kernels.uniform_f32(bits, np.empty(4, np.float32)[::2], 0.0, 1.0)  # not contiguous
    out = np.empty(0, np.float32)
    kernels.uniform_f32(bits, out, 0.0, 1.0)  # nothing to fill is fine


# -- the numpy path's float32 fused multiply-add --------------------------------------------------
def round_f32(q):
    """The float32 nearest to the rational q, ties to even (exact, no float64 step)."""
    f = np.float32(float(q))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    dist = [abs(Fraction(float(c)) - q) for c in cands]
    best = min(dist)
    near = [c for c, d in zip(cands, dist) if d == best]
    return near[0] if len(near) == 1 else next(c for c in near if not c.view(np.uint32) & 1)


def test_fma32_rounds_once():
    rng = random.Random(5)
    cases = []
    for _ in range(3000):
        a, b, c = (np.float32(rng.uniform(-2, 2) * 2.0 ** rng.randint(-30, 5)) for _ in range(3))
        cases.append((a, b, c))
    # float64 rounding lands exactly halfway between two float32s while the exact sum is below
    # (above, negated): the float32 answer is then the nearer one, not the even one
    one_up = np.float32(1 + 2.0**-23)
    below = np.float32(2.0**-24 * (1 - 2.0**-23))
    cases += [(one_up, below, one_up), (-one_up, below, -one_up), (one_up, -below, -one_up)]
    a, b, c = (np.array(col, np.float32) for col in zip(*cases))
    got = _avx_mathfun.fma32(a, b, c)
    exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in cases]
    want = np.array([round_f32(q) for q in exact], np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert got[-3] == one_up and got[-2] == -one_up  # where float64 then float32 gives 1 + 2**-22
