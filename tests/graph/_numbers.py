"""Comparing numbers in the graph tests: tensors of either library, arrays and Python numbers,
as numpy arrays of the same shape within a tolerance."""

import numpy as np

# float32 runs against PyTorch: a few ulps of the values a graph's ops reach
RTOL32, ATOL32 = 1e-5, 1e-6


def npy(t):
    """A tensor (engine or torch, grad or not), an array or a number as a numpy array."""
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def close(actual, expected, rtol=RTOL32, atol=ATOL32, what=""):
    """Assert the same shape and values within rtol/atol (float32's by default)."""
    actual, expected = npy(actual), npy(expected)
    assert actual.shape == expected.shape, f"{what} shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)
