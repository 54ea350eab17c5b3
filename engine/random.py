"""`eg.random`: the default generator's seed and state, as `torch.random` has them.

The default generator is PyTorch's CPU generator draw for draw (`_generator`), so after
`eg.manual_seed(s)` every random factory, `nn.init` function, layer constructor and dropout mask
gives the numbers `torch.manual_seed(s)` gives (docs/random.md lists the exceptions).
"""

import contextlib

from ._generator import Generator, default_generator

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


def manual_seed(seed):
    """Seed the default generator; returns it (`torch.manual_seed`)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator from the system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state: a uint8 tensor of 5056 bytes in PyTorch's layout."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """Draws inside the block leave the default generator where it was (`torch.random.fork_rng`).
    The engine has one stream for every device, so `devices` and `device_type` change nothing."""
    if not enabled:
        yield
        return
    saved = default_generator.clone_state()
    try:
        yield
    finally:
        default_generator.restore_state(saved)
