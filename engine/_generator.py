"""The random generator: PyTorch's CPU generator as a state machine, word for word.

PyTorch's CPU generator (`CPUGeneratorImpl`) is a 32-bit Mersenne Twister (mt19937) seeded the
standard way (`init_genrand` on the low 32 bits of the seed) plus one cached normal sample (the
second half of a Box-Muller pair). Every distribution draws from it either one 32-bit word
(`random`) or two (`random64`: the first word is the high half). numpy ships the same twister as
`np.random.MT19937`, seeded identically by the legacy `RandomState(seed)` path, so the engine
keeps the twister's state there and PyTorch's extra state beside it. The words are drawn in bulk
by `_random_fill` (C: the twist and tempering run on that numpy state, checked at import; the
float fills draw their own words as they go), or by numpy where that module is not built.
`get_state` and `set_state` read and write PyTorch's 5056-byte layout, so a state saved by
`torch.get_rng_state()` can be loaded here and the other way round.

Draws for a "cuda" generator are made on this same CPU twister (they equal PyTorch's CPU draws,
not the Philox numbers PyTorch's CUDA generator gives).
"""

import os

import numpy as np

from . import _device
from ._tensor import wrap

try:  # the twister and the float fills in C (_random_fill.c, built by `pip install`; optional)
    from . import _random_fill
except ImportError:
    _random_fill = None

DEFAULT_SEED = 67280421310721  # PyTorch's default_generator seed
_N = 624  # words of mt19937 state
_U64 = 1 << 64

# -- PyTorch's state layout (CPUGeneratorImplState, packed as the C compiler lays it out) -------
_STATE = np.dtype(
    {
        "names": [
            "seed",
            "left",
            "seeded",
            "next",
            "state",
            "normal_x",
            "normal_y",
            "normal_rho",
            "normal_is_valid",
            "next_float",
            "next_float_valid",
        ],
        "formats": [
            "<u8",
            "<i4",
            "<i4",
            "<u8",
            ("<u8", _N),
            "<f8",
            "<f8",
            "<f8",
            "<i4",
            "<f4",
            "u1",
        ],
        "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
        "itemsize": 5056,
    }
)
STATE_SIZE = _STATE.itemsize


def _seed_value(seed):
    """PyTorch's reading of a seed: an int in [-2**63, 2**64), negatives wrapped to uint64."""
    if isinstance(seed, float) or not isinstance(seed, (int, np.integer)):
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise RuntimeError(
            "Overflow when unpacking long long" if seed < 0 else "Overflow when unpacking long"
        )
    return seed % _U64


class Generator:
    """`eg.Generator()`: an independent random stream, PyTorch's `torch.Generator` draw for draw
    (`eg.Generator().manual_seed(0)` gives `torch.Generator().manual_seed(0)`'s numbers)."""

    def __init__(self, device="cpu"):
        self.device = _device.device(device)
        self._bits = np.random.MT19937()
        self._words = np.random.Generator(self._bits)
        self.manual_seed(DEFAULT_SEED)

    # -- seeding --------------------------------------------------------------------------------
    def manual_seed(self, seed):
        self._seed = _seed_value(seed)
        # RandomState(int) runs mt19937's init_genrand, which is what PyTorch's constructor does.
        key = np.random.RandomState(self._seed & 0xFFFFFFFF).get_state()[1]
        self._set_words(key, _N)
        self._fresh = True  # PyTorch's `next_` reads 0 until the first draw, 624 after a twist
        self.next_double_normal = None  # the cached second Box-Muller sample (scalar path)
        self.next_float_normal = None  # kept for the state layout; CPU kernels never set it
        return self

    def seed(self):
        """Seed from the operating system's entropy, as PyTorch does; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def _set_words(self, key, pos):
        self._bits.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.asarray(key, np.uint32), "pos": int(pos)},
        }

    # -- the raw words --------------------------------------------------------------------------
    def words(self, n):
        """`n` 32-bit draws (PyTorch's `random()`) as uint32, in stream order."""
        self._fresh = False
        if n <= 0:
            return np.empty(0, np.uint32)
        if _random_fill is not None:
            out = np.empty(n, np.uint32)
            _random_fill.words(self._bits.capsule, out)
            return out
        # A full-range bounded draw is the bare next_uint32 (no rejection): the twister's words.
        return self._words.integers(0, 0xFFFFFFFF, size=n, dtype=np.uint32, endpoint=True)

    def fill(self, kernel, out, a, b):
        """Run one of _random_fill's float fills on `out`, drawing its words from this stream."""
        self._fresh = False
        # the capsule is looked up each time, never kept: a deepcopy's MT19937 has its own
        kernel(self._bits.capsule, out, a, b)
        return out

    def random(self, n):
        """`n` 32-bit draws as uint64 (room for the arithmetic the samplers do on them)."""
        return self.words(n).astype(np.uint64)

    def random64(self, n):
        """`n` 64-bit draws (PyTorch's `random64()`: two words, the first one high)."""
        w = self.random(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    # -- PyTorch's byte state -------------------------------------------------------------------
    def get_state(self):
        """The state as a uint8 tensor in PyTorch's layout (`torch.get_rng_state()`'s bytes)."""
        st = self._bits.state["state"]
        pos = int(st["pos"])
        rec = np.zeros((), _STATE)
        rec["seed"] = self._seed
        rec["left"] = _N + 1 - pos
        rec["seeded"] = 1
        rec["next"] = 0 if self._fresh else pos
        rec["state"] = st["key"].astype(np.uint64)
        if self.next_double_normal is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self.next_double_normal
        if self.next_float_normal is not None:
            rec["next_float_valid"] = 1
            rec["next_float"] = self.next_float_normal
        return wrap(np.frombuffer(rec.tobytes(), np.uint8).copy())

    def set_state(self, new_state):
        arr = getattr(new_state, "_data", new_state)
        arr = np.asarray(arr if type(arr) is np.ndarray else arr.get())
        if arr.dtype != np.uint8:
            raise TypeError(
                f"expected a torch.ByteTensor, but got {_legacy_name(new_state)} "
                "(RNG state must be a torch.ByteTensor)"
            )
        if arr.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                f"state size to be {arr.size}"
            )
        rec = np.frombuffer(np.ascontiguousarray(arr).tobytes(), _STATE)[0]
        left = int(rec["left"])
        if not 1 <= left <= _N + 1 or not int(rec["seeded"]):
            raise RuntimeError("Invalid mt19937 state")
        self._seed = int(rec["seed"])
        self._set_words((rec["state"] & 0xFFFFFFFF).astype(np.uint32), min(_N, _N + 1 - left))
        self._fresh = left == 1 and int(rec["next"]) == 0
        self.next_double_normal = float(rec["normal_y"]) if int(rec["normal_is_valid"]) else None
        self.next_float_normal = float(rec["next_float"]) if int(rec["next_float_valid"]) else None
        return self

    def clone_state(self):
        """A copy of the whole state (for fork_rng), cheaper than the byte layout."""
        saved = (self._seed, self._fresh, self.next_double_normal, self.next_float_normal)
        return self._bits.state, saved

    def restore_state(self, saved):
        bits, (self._seed, self._fresh, self.next_double_normal, self.next_float_normal) = saved
        self._bits.state = bits

    def __repr__(self):
        return f"<engine._C.Generator object at {hex(id(self))}>"


def _c_twister_agrees():
    """_random_fill runs the twister on numpy's MT19937 state struct, whose layout numpy does
    not publish: check that it draws numpy's words and leaves numpy's state, across a twist."""
    key = np.random.RandomState(20240229).get_state()[1]
    mine, numpys = np.random.MT19937(), np.random.MT19937()
    for bits in (mine, numpys):
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 600}}
    got = np.empty(1300, np.uint32)
    _random_fill.words(mine.capsule, got)
    want = np.random.Generator(numpys).integers(0, 0xFFFFFFFF, 1300, np.uint32, endpoint=True)
    a, b = mine.state["state"], numpys.state["state"]
    return (got == want).all() and a["pos"] == b["pos"] and (a["key"] == b["key"]).all()


if _random_fill is not None and not _c_twister_agrees():
    _random_fill = None


def _legacy_name(t):
    dt = getattr(t, "dtype", None)
    return getattr(dt, "legacy_name", type(t).__name__)


default_generator = Generator()
