"""The optional C kernels of engine/_fused.c and when they apply.

Each kernel does a numpy sequence's float32 operations in one pass, in the same order, so the
results are the same bits with or without it (tests/engine/test_fused.py); where the module is
not built (no C compiler at install) `kernels` is None and the numpy steps run.
"""

import numpy as np

try:  # built by `pip install` (setup.py); optional
    from .. import _fused as kernels
except ImportError:
    kernels = None


def takes(*arrays):
    """Whether the kernels apply to these arrays: built, and all C-contiguous float32 numpy
    arrays of one shape."""
    if kernels is None:
        return False
    shape = arrays[0].shape
    for a in arrays:
        if a.__class__ is not np.ndarray or a.dtype != np.float32 or a.shape != shape:
            return False
        if not a.flags.c_contiguous:
            return False
    return True
