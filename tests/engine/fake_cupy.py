"""A numpy-backed stand-in for the part of cupy the engine uses, so that the engine's "cuda"
path runs in CI, where there is no GPU. Test code only: never shipped in the engine.

`install()` puts it in sys.modules as `cupy` (and `cupyx`) before the engine first asks for cupy;
tests/engine/conftest.py does that when no real, working cupy is present.

What it enforces is what makes the cupy path break on a real GPU and pass on the CPU:

- `ndarray` is its own type, not a numpy array: `type(a) is np.ndarray` is False, data moves
  only through `cupy.asarray(host)` and `cupy.asnumpy(a)` / `a.get()`.
- `np.asarray(a)` and anything else that converts implicitly raise cupy's own TypeError.
- A numpy array handed to a cupy function, an operator or a scatter raises TypeError
  ("Unsupported type"), as cupy's kernels do; indices may be host arrays (cupy copies them).
- Results that numpy gives as numpy scalars (`a.sum()`, `a[0]` of a 1-d array) are 0-d device
  arrays, as in cupy, so code that expects a number must ask for one (`float`, `.item()`).
- Views keep cupy's `base` (the array owning the memory) and `a.data.ptr`; `a.flags` has
  only cupy's three fields (no `writeable`).
- ufuncs' `reduce` / `accumulate` / `at` only where cupy has them (`maximum.accumulate` is a
  NotImplementedError), scatters only in the dtypes cupy's atomics take.
- Functions and methods cupy does not have (the names below come from cupy's own
  `cupy/__init__.py` and `ndarray` at commit 6b6d956, Aug 2026) are AttributeErrors.

Stricter than cupy on purpose: a numpy function called directly on device data (`np.exp(a)`,
`np.concatenate([a, b])`) is refused, although cupy would dispatch most of them to its own
functions (NEP 13/18): the engine asks `xp(array)` for the module, and a numpy function that
cupy lacks would fail only on the GPU. The operators' ufuncs (`np.float32(2) * a`) and a few
functions that only read metadata (`np.shape`, `np.result_type`) are let through as cupy does.
"""

from __future__ import annotations

import sys
import types

import numpy as np


def _words(text):
    return frozenset(text.split())


# cupy's public module-level names (cupy/__init__.py), less those only for file I/O and kernels
_CUPY_NAMES = _words(
    """
    abs absolute acos acosh add all allclose amax amin angle any append apply_along_axis arange
    arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort
    argwhere around array array_equal array_equiv array_split asanyarray asarray
    ascontiguousarray asfortranarray asin asinh atan atan2 atanh atleast_1d atleast_2d
    atleast_3d average bincount bitwise_and bitwise_count bitwise_invert bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor bool_ broadcast broadcast_arrays
    broadcast_to byte can_cast cbrt cdouble ceil choose clip column_stack complex128 complex64
    complexfloating compress concat concatenate conj conjugate convolve copy copysign copyto
    corrcoef correlate cos cosh count_nonzero cov cross csingle cumprod cumsum cumulative_prod
    cumulative_sum deg2rad degrees delete diag diag_indices diag_indices_from diagflat diagonal
    diff digitize divide divmod dot double dsplit dstack dtype e einsum empty empty_like equal
    euler_gamma exp exp2 expand_dims expm1 extract eye fabs fill_diagonal finfo fix flatnonzero
    flip fliplr flipud float16 float32 float64 floating floor floor_divide fmax fmin fmod frexp
    full full_like gcd generic gradient greater greater_equal half heaviside histogram hsplit
    hstack hypot i0 identity iinfo imag indices inexact inf inner int16 int32 int64 int8 int_
    intc integer interp intersect1d intp invert isclose iscomplex iscomplexobj isdtype isfinite
    isin isinf isnan isneginf isposinf isreal isrealobj isscalar issubdtype ix_ kron lcm ldexp
    left_shift less less_equal lexsort linspace log log10 log1p log2 logaddexp logaddexp2
    logical_and logical_not logical_or logical_xor logspace longlong matmul matrix_transpose max
    maximum may_share_memory mean median meshgrid min min_scalar_type minimum mod modf moveaxis
    multiply nan nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian
    nanmin nanprod nanstd nansum nanvar ndim negative newaxis nextafter nonzero not_equal number
    ones ones_like outer pad partition percentile permute_dims pi piecewise place positive pow
    power prod promote_types ptp put put_along_axis putmask quantile rad2deg radians ravel
    ravel_multi_index real reciprocal remainder repeat require reshape resize result_type
    right_shift rint roll rollaxis rot90 round searchsorted select setdiff1d setxor1d shape
    shares_memory short sign signbit signedinteger sin sinc single sinh size sort split sqrt
    square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh tensordot tile
    trace transpose trapezoid tri tril tril_indices tril_indices_from trim_zeros triu
    triu_indices triu_indices_from true_divide trunc ubyte uint uint16 uint32 uint64 uint8 uintc
    uintp ulonglong union1d unique unique_all unique_counts unique_inverse unique_values
    unpackbits unravel_index unsignedinteger unwrap ushort vander var vdot vsplit vstack where
    zeros zeros_like
    """
)
_LINALG_NAMES = _words(
    "cholesky cond cross det eig eigh eigvals eigvalsh inv lstsq matmul matrix_power matrix_rank "
    "matrix_transpose norm pinv qr slogdet solve svd tensorinv tensorsolve"
)
# cupy.ndarray's methods (cupy/_core/core.pyx); the attributes are properties of the class below
_METHODS = _words(
    """
    all any argmax argmin argpartition argsort astype byteswap choose clip compress conj conjugate
    copy cumprod cumsum diagonal dot fill flatten item max mean min nonzero partition prod ptp put
    ravel repeat reshape round searchsorted sort squeeze std sum swapaxes take tobytes tolist trace
    transpose var view
    """
)
# numpy functions cupy serves too (through __array_function__) that only read metadata
_METADATA_FUNCTIONS = frozenset((np.shape, np.ndim, np.size, np.result_type, np.can_cast))
# the ufuncs behind Python's operators: `np.float32(2) * a` reaches a's __array_ufunc__ with them
_OPERATOR_UFUNCS = frozenset(
    (np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder, np.power)
    + (np.matmul, np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
    + (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift, np.divmod)
)

_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. "
    "Please use `.get()` to construct a NumPy array explicitly."
)


class CUDARuntimeError(RuntimeError):
    pass


# -- moving between the wrapper and numpy ---------------------------------------------------------
def _unsupported(x):
    return TypeError(f"Unsupported type {type(x)}")


def _unwrap(x):
    """The numpy data under `x` (into lists, tuples and dicts); a host array is refused."""
    cls = x.__class__
    if cls is ndarray:
        return x._a
    if cls is np.ndarray:
        raise _unsupported(x)
    if cls is list or cls is tuple:
        return cls(_unwrap(v) for v in x)
    if cls is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _unwrap_index(key):
    """Indices may come from the host: cupy copies lists and numpy arrays over."""
    cls = key.__class__
    if cls is ndarray:
        return key._a
    if cls is tuple:
        return tuple(_unwrap_index(k) for k in key)
    if cls is list:
        return [_unwrap_index(k) for k in key]
    return key


def _is_advanced(key):
    keys = key if key.__class__ is tuple else (key,)
    return any(isinstance(k, (ndarray, np.ndarray, list, bool, np.bool_)) for k in keys)


def _root(a):
    """The object at the end of a numpy array's base chain (the array that owns its memory)."""
    while True:
        base = getattr(a, "base", None)
        if base is None:
            return a
        a = base


def _device_arrays(args, out):
    for x in args:
        cls = x.__class__
        if cls is ndarray:
            out.append(x)
        elif cls is list or cls is tuple:
            _device_arrays(x, out)
        elif cls is dict:
            _device_arrays(tuple(x.values()), out)
    return out


def _wrap(r, args=()):
    """A result back on the device: arrays and numpy scalars (as 0-d arrays, as cupy gives
    them) become `ndarray`s; a view gets the device array owning its memory as `base`."""
    cls = r.__class__
    if cls is np.ndarray:
        inputs = _device_arrays(args, [])
        for w in inputs:
            if w._a is r:
                return w  # an `out=` array or an in-place method returning its own array
        if r.base is None:
            return ndarray._make(r, None)
        root = _root(r)
        for w in inputs:
            owner = w if w._base is None else w._base
            if owner._a is root:
                return ndarray._make(r, owner)
        owner = ndarray._make(root, None) if isinstance(root, np.ndarray) else None
        return ndarray._make(r, owner)
    if isinstance(r, np.generic):
        return ndarray._make(np.array(r), None)
    if cls is tuple or cls is list:
        return cls(_wrap(v, args) for v in r)
    return r


def _forward(fn, name):
    def call(*args, **kwargs):
        return _wrap(fn(*_unwrap(args), **_unwrap(kwargs)), (args, kwargs))

    call.__name__ = call.__qualname__ = name
    return call


# -- the device -----------------------------------------------------------------------------------
class _Runtime(types.ModuleType):
    current = 0

    @staticmethod
    def getDeviceCount():  # noqa: N802 - cupy's name
        return 1

    def getDevice(self):  # noqa: N802
        return self.current

    def setDevice(self, index):  # noqa: N802
        if not 0 <= index < 1:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self.current = index


runtime = _Runtime("cupy.cuda.runtime")


class Device:
    def __init__(self, device=None):
        self.id = runtime.getDevice() if device is None else int(device)
        self._prev = []

    def __enter__(self):
        self._prev.append(runtime.getDevice())
        runtime.setDevice(self.id)
        return self

    def __exit__(self, *exc):
        runtime.setDevice(self._prev.pop())

    def use(self):
        runtime.setDevice(self.id)

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class _Pointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class _Flags:
    """cupy's flags: three read-only fields, no `writeable`."""

    __slots__ = ("_c", "_f", "_own")

    def __init__(self, flags):
        self._c, self._f, self._own = flags.c_contiguous, flags.f_contiguous, flags.owndata

    c_contiguous = property(lambda self: self._c)
    f_contiguous = property(lambda self: self._f)
    owndata = property(lambda self: self._own)


# -- the array ------------------------------------------------------------------------------------
def _binary(ufunc, reflected=False):
    def op(self, other):
        if other.__class__ is ndarray:
            other = other._a
        elif isinstance(other, np.ndarray):
            raise _unsupported(other)
        elif not isinstance(other, (int, float, complex, np.generic)):
            return NotImplemented
        r = ufunc(other, self._a) if reflected else ufunc(self._a, other)
        return _wrap(r)

    return op


def _inplace(ufunc):
    def op(self, other):
        if other.__class__ is ndarray:
            other = other._a
        elif isinstance(other, np.ndarray):
            raise _unsupported(other)
        ufunc(self._a, other, out=self._a)
        return self

    return op


def _unary(ufunc):
    return lambda self: _wrap(ufunc(self._a))


class ndarray:  # noqa: N801 - cupy's name
    """A device array: numpy storage (`_a`) that numpy itself may not touch."""

    __slots__ = ("_a", "_base", "__weakref__")
    __hash__ = None

    @classmethod
    def _make(cls, a, base):
        self = object.__new__(cls)
        self._a, self._base = a, base
        return self

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        self._a, self._base = np.empty(shape, dtype, order=order), None

    # the refusals
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc in _OPERATOR_UFUNCS and not kwargs:
            return _forward(ufunc, ufunc.__name__)(*inputs)  # refuses a numpy array among them
        raise TypeError(
            f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} was called on "
            "a cupy array (refused by the test stand-in tests/engine/fake_cupy.py): "
            "use the array module of the data, `xp(array)`"
        )

    def __array_function__(self, func, types, args, kwargs):
        if func in _METADATA_FUNCTIONS:
            return func(*_unwrap(args), **_unwrap(kwargs))
        raise TypeError(
            f"numpy.{func.__name__} was called on a cupy array (refused by the test stand-in "
            "tests/engine/fake_cupy.py): use the array module of the data, `xp(array)`"
        )

    # attributes
    shape = property(lambda self: self._a.shape)

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    base = property(lambda self: self._base)
    flags = property(lambda self: _Flags(self._a.flags))
    data = property(lambda self: _Pointer(self._a.__array_interface__["data"][0]))
    device = property(lambda self: Device(0))
    T = property(lambda self: _wrap(self._a.T, (self,)))
    mT = property(lambda self: _wrap(self._a.mT, (self,)))  # noqa: N815 - numpy's name

    @property
    def real(self):
        return _wrap(self._a.real, (self,))

    @property
    def imag(self):
        return _wrap(self._a.imag, (self,))

    def __getattr__(self, name):
        if name in _METHODS:
            method = getattr(self._a, name)
            return lambda *args, **kwargs: _wrap(
                method(*_unwrap(args), **_unwrap(kwargs)), (self, args, kwargs)
            )
        raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")

    # to the host
    def get(self, stream=None, order="C", out=None, blocking=True):
        if out is not None:
            out[...] = self._a
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        if arr.__class__ is not np.ndarray:
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        self._a[...] = arr

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __bool__(self):
        return bool(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec) if self._a.ndim == 0 else str(self._a)

    def __copy__(self):
        return _wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return _wrap(self._a.copy())

    def __reduce__(self):
        return array, (self.get(),)

    # indexing: a 0-d result is a view as in cupy (numpy would give a scalar copy)
    def __getitem__(self, key):
        k = _unwrap_index(key)
        r = self._a[k]
        if isinstance(r, np.generic):
            r = self._a[(k if k.__class__ is tuple else (k,)) + (Ellipsis,)]
        return _wrap(r, (self,))

    def __setitem__(self, key, value):
        if value.__class__ is ndarray:
            value = value._a
        elif isinstance(value, (np.ndarray, list, tuple)):
            if _is_advanced(key):
                raise _unsupported(value)
            if np.ndim(value) != 0:  # cupy fills the basic case from a scalar only
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[_unwrap_index(key)] = value

    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.remainder), _binary(np.remainder, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __matmul__, __rmatmul__ = _binary(np.matmul), _binary(np.matmul, True)
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lshift__, __rshift__ = _binary(np.left_shift), _binary(np.right_shift)
    __divmod__ = _binary(np.divmod)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __iadd__, __isub__ = _inplace(np.add), _inplace(np.subtract)
    __imul__, __itruediv__ = _inplace(np.multiply), _inplace(np.true_divide)
    __ifloordiv__, __imod__ = _inplace(np.floor_divide), _inplace(np.remainder)
    __ipow__, __iand__ = _inplace(np.power), _inplace(np.bitwise_and)
    __ior__, __ixor__ = _inplace(np.bitwise_or), _inplace(np.bitwise_xor)
    __ilshift__, __irshift__ = _inplace(np.left_shift), _inplace(np.right_shift)
    __neg__, __pos__ = _unary(np.negative), _unary(np.positive)
    __abs__, __invert__ = _unary(np.absolute), _unary(np.invert)


# what cupy's ufunc methods support (cupy/_core/_kernel.pyx, _routines_indexing.pyx); the rest
# raise NotImplementedError there, so they do here
_METHOD_UFUNCS = {
    "reduce": ("add", "multiply"),
    "accumulate": ("add", "multiply"),
    "reduceat": ("add",),
}
_I32 = ("int32", "uint32")
_SCATTER_DTYPES = {  # ufunc.at and cupyx.scatter_*: the dtypes cupy's atomics take
    "add": _I32 + ("int64", "uint64", "float16", "float32", "float64"),
    "subtract": _I32,
    "maximum": _I32 + ("int64", "uint64", "float32", "float64"),
    "minimum": _I32 + ("int64", "uint64", "float32", "float64"),
    "bitwise_and": _I32 + ("int64", "uint64"),
    "bitwise_or": _I32 + ("int64", "uint64"),
    "bitwise_xor": _I32 + ("int64", "uint64"),
}


def _scatter_into(np_ufunc, a, indices, values):
    name = np_ufunc.__name__
    if a.__class__ is not ndarray:
        raise _unsupported(a)
    if name not in _SCATTER_DTYPES:
        raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
    values = _unwrap(values)
    dtype = np.result_type(values) if isinstance(values, np.ndarray) else a.dtype
    if np.dtype(dtype).name not in _SCATTER_DTYPES[name]:
        raise TypeError(f"cupy.{name}.at does not support {np.dtype(dtype).name} as data type")
    np_ufunc.at(a._a, _unwrap_index(indices), values)


def _unsupported_method(name, method):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"`cupy_{name}.{method}` is not supported yet")

    return refuse


class ufunc:  # noqa: N801 - cupy's name
    """A numpy ufunc taking and giving device arrays, with the methods cupy's ufuncs have."""

    def __init__(self, np_ufunc):
        self._u = np_ufunc
        self.__name__ = name = np_ufunc.__name__
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs
        self._call = _forward(np_ufunc, name)
        self.outer = _forward(np_ufunc.outer, "outer")
        for method, names in _METHOD_UFUNCS.items():
            if name in names:
                setattr(self, method, _forward(getattr(np_ufunc, method), method))
            else:
                setattr(self, method, _unsupported_method(name, method))

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def at(self, a, indices, b=None):
        _scatter_into(self._u, a, indices, b)

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"


# -- the modules ----------------------------------------------------------------------------------
def asarray(a, dtype=None, order=None, *, blocking=False):
    if a.__class__ is ndarray:
        return a if dtype is None or a.dtype == dtype else _wrap(a._a.astype(dtype))
    return ndarray._make(np.array(_unwrap_index(a), dtype=dtype, order=order or "K"), None)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if obj.__class__ is ndarray and not copy:
        return asarray(obj, dtype)
    r = np.array(_unwrap_index(obj), dtype=dtype, order=order, copy=True, ndmin=ndmin)
    return ndarray._make(r, None)


def ascontiguousarray(a, dtype=None):
    if a.__class__ is ndarray:
        return _wrap(np.ascontiguousarray(a._a, dtype=dtype), (a,))
    return ndarray._make(np.array(a, dtype=dtype, order="C", copy=True), None)


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if a.__class__ is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args):
    return _cupy if any(a.__class__ is ndarray for a in args) else np


def _module_getattr(namespace, names, prefix):
    def getattr_(name):
        if name not in names:
            raise AttributeError(f"module '{prefix}' has no attribute '{name}'")
        obj = getattr(namespace, name)
        if isinstance(obj, np.ufunc):
            obj = ufunc(obj)
        elif callable(obj) and not isinstance(obj, type):
            obj = _forward(obj, name)
        setattr(sys.modules[prefix], name, obj)  # looked up once per name
        return obj

    return getattr_


def _scatter(np_ufunc):
    def scatter(a, slices, value):
        _scatter_into(np_ufunc, a, slices, value)

    return scatter


def _build():
    cp = types.ModuleType("cupy")
    cp.__version__ = "14.0.0+fake"
    cp.__getattr__ = _module_getattr(np, _CUPY_NAMES, "cupy")
    cp.ndarray, cp.ufunc = ndarray, ufunc
    cp.asarray, cp.array, cp.ascontiguousarray = asarray, array, ascontiguousarray
    cp.asanyarray = asarray
    cp.asnumpy, cp.get_array_module = asnumpy, get_array_module
    cp.is_available = lambda: True
    cp.fake = True  # how a test tells the stand-in from the real cupy

    cuda = types.ModuleType("cupy.cuda")
    cuda.Device, cuda.runtime = Device, runtime
    cuda.is_available = lambda: True
    cuda.get_device_id = runtime.getDevice
    runtime.CUDARuntimeError = CUDARuntimeError
    cp.cuda = cuda

    linalg = types.ModuleType("cupy.linalg")
    linalg.__getattr__ = _module_getattr(np.linalg, _LINALG_NAMES, "cupy.linalg")
    cp.linalg = linalg

    lib = types.ModuleType("cupy.lib")
    stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
    stride_tricks.as_strided = _forward(np.lib.stride_tricks.as_strided, "as_strided")
    lib.stride_tricks = stride_tricks
    cp.lib = lib

    cpx = types.ModuleType("cupyx")
    cpx.scatter_add = _scatter(np.add)
    cpx.scatter_max = _scatter(np.maximum)
    cpx.scatter_min = _scatter(np.minimum)
    scipy_ = types.ModuleType("cupyx.scipy")
    special = types.ModuleType("cupyx.scipy.special")

    def special_getattr(name):
        import scipy.special  # scikit-learn, a dependency, brings scipy

        fn = getattr(scipy.special, name) if not name.startswith("_") else None
        if not callable(fn):  # dunders too: inspect and torch probe every module's __file__
            raise AttributeError(f"module 'cupyx.scipy.special' has no attribute '{name}'")
        obj = ufunc(fn) if isinstance(fn, np.ufunc) else _forward(fn, name)
        setattr(special, name, obj)
        return obj

    special.__getattr__ = special_getattr
    scipy_.special = special
    cpx.scipy = scipy_

    modules = {
        "cupy": cp,
        "cupy.cuda": cuda,
        "cupy.cuda.runtime": runtime,
        "cupy.linalg": linalg,
        "cupy.lib": lib,
        "cupy.lib.stride_tricks": stride_tricks,
        "cupyx": cpx,
        "cupyx.scipy": scipy_,
        "cupyx.scipy.special": special,
    }
    for module in modules.values():
        module.__file__ = __file__
    return modules


_modules = _build()
_cupy = _modules["cupy"]


def install():
    """Make `import cupy` / `import cupyx...` give the stand-in; returns the cupy module."""
    sys.modules.update(_modules)
    return _cupy
