"""Devices: "cpu" arrays live in numpy, "cuda" arrays in cupy;
ops ask `xp(array)` for the module."""

import numpy as np

_cupy = None
_cupy_error = None


def _load_cupy():
    global _cupy, _cupy_error
    if _cupy is None and _cupy_error is None:
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise RuntimeError("no CUDA device was found")
            _cupy = cupy
        except Exception as exc:  # ImportError, or cupy present without a driver or a GPU
            _cupy_error = exc
    return _cupy


def cuda_available():
    return _load_cupy() is not None


def use_cupy(module, error=None):
    """Replace the cupy the engine found (tests only): a stand-in module such as
    tests/engine/fake_cupy.py, or None with `error` to act as a machine without a GPU.
    Returns the previous (module, error), to be restored the same way."""
    global _cupy, _cupy_error
    _load_cupy()
    previous = (_cupy, _cupy_error)
    _cupy, _cupy_error = module, (None if module is not None else error)
    return previous


def is_device_array(obj):
    """Whether `obj` is a cupy array (always False where cupy was never loaded)."""
    return _cupy is not None and isinstance(obj, _cupy.ndarray)


def require_cupy():
    cp = _load_cupy()
    if cp is None:
        raise RuntimeError(
            "CUDA is not available: the 'cuda' device needs cupy and an NVIDIA GPU "
            f"(install with `pip install 'wiregrad[gpu]'`). Cause: {_cupy_error}"
        )
    return cp


_ndarray = np.ndarray


def xp(array):
    """The array module (numpy or cupy) that owns `array`. Every op calls it: keep it cheap."""
    if array.__class__ is _ndarray or isinstance(array, (np.generic, int, float)):
        return np  # numpy scalars (what indexing a 0-d array gives) and numbers are the CPU's
    return require_cupy().get_array_module(array)


class device:  # noqa: N801 - PyTorch spells it in lower case
    __slots__ = ("type", "index")

    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        spec = str(spec)
        if ":" in spec:
            spec, idx = spec.split(":", 1)
            index = int(idx)
        if spec not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {spec}"
            )
        if spec == "cuda" and index is None:
            index = 0
        self.type, self.index = spec, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")


def device_of(array):
    if type(array) is np.ndarray:
        return CPU
    return device("cuda", array.device.id)


def move(array, target):
    """Copy `array` onto the device `target` (a `device`); a no-op when it is already there."""
    if target.type == "cpu":
        return array if type(array) is np.ndarray else array.get()
    cp = require_cupy()
    with cp.cuda.Device(target.index or 0):
        return cp.asarray(array)


def scatter_add(array, index, values):
    """array[index] += values, adding repeated indices (numpy's add.at; cupyx's scatter_add)."""
    if type(array) is np.ndarray:
        np.add.at(array, index, values)
    else:
        import cupyx

        cupyx.scatter_add(array, index, values)
