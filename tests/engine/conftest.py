"""Runs the engine's "cuda" tests on every machine: where no real, working cupy is installed
(CI has no GPU), the numpy-backed stand-in in fake_cupy.py is installed as `cupy` before the
engine first looks for it, so `eg.cuda.is_available()` is True and the cupy path is exercised.
A real cupy with a GPU is never masked. WIREGRAD_FAKE_CUPY=0 turns the stand-in off (then the
cuda tests skip without a GPU, as they did before)."""

import os
import sys


def _real_cupy_works():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # not installed, or installed without a driver or a GPU
        return False


def _choose():
    if os.environ.get("WIREGRAD_FAKE_CUPY", "1") == "0" or _real_cupy_works():
        return None
    # a cupy that imported but has no GPU: drop it and its submodules, the stand-in replaces them
    for name in [n for n in sys.modules if n.split(".")[0] in ("cupy", "cupyx")]:
        del sys.modules[name]
    import fake_cupy

    return fake_cupy.install()


_FAKE = _choose()


def pytest_report_header(config):
    if _FAKE is not None:
        return "cupy: the numpy stand-in tests/engine/fake_cupy.py (no GPU here)"
    if "cupy" in sys.modules and _real_cupy_works():
        cupy = sys.modules["cupy"]
        return f"cupy: real cupy {cupy.__version__} with a GPU"
    return "cupy: none (the cuda tests skip)"
