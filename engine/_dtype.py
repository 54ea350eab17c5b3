"""Dtypes: thin named wrappers over numpy dtypes, printed and promoted the way PyTorch does."""

import numpy as np


class dtype:  # noqa: N801 - PyTorch spells it in lower case
    __slots__ = ("name", "np", "is_floating_point", "itemsize", "category", "legacy_name")

    def __init__(self, name, np_dtype, category, legacy_name):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = category == 2
        self.itemsize = self.np.itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating: PyTorch's promotion categories
        self.legacy_name = legacy_name  # the type name in PyTorch's messages, e.g. FloatTensor

    def __repr__(self):
        return f"engine.{self.name}"

    def __reduce__(self):
        return self.name


float16 = dtype("float16", np.float16, 2, "HalfTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool_ = dtype("bool", np.bool_, 0, "BoolTensor")

DEFAULT_FLOAT = float32
ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
_BY_NUMPY = {d.np: d for d in ALL}
# numpy integer dtypes the engine has no twin for are widened to int64 on the way in
_WIDENED = {np.dtype(t): int64 for t in (np.uint16, np.uint32, np.uint64)}
_BY_PYTHON = {float: float32, int: int64, bool: bool_}


def from_numpy(np_dtype):
    d = _BY_NUMPY.get(np_dtype) or _WIDENED.get(np_dtype)
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported "
            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        )
    return d


def get(d):
    """Accept an engine dtype, a numpy dtype or a Python type; return the engine dtype."""
    if isinstance(d, dtype):
        return d
    if d in _BY_PYTHON:
        return _BY_PYTHON[d]
    return from_numpy(np.dtype(d))


def result_type(a, b):
    """PyTorch's promotion of two arrays: a 0-d one decides only when its category is higher."""
    da, db = from_numpy(a.dtype), from_numpy(b.dtype)
    if da is db:
        return da.np
    if (a.ndim == 0) != (b.ndim == 0):
        dim_d, zero_d = (da, db) if b.ndim == 0 else (db, da)
        return dim_d.np if zero_d.category <= dim_d.category else zero_d.np
    if da.category != db.category:  # int64 with float32 is float32 in PyTorch (numpy says 64)
        return (da if da.category > db.category else db).np
    return np.promote_types(da.np, db.np)


def scalar_result(arr_dtype, scalar):
    """Dtype of `tensor op python_number`: the tensor's unless the number's category is higher."""
    d = from_numpy(arr_dtype)
    cat = 0 if isinstance(scalar, bool) else 2 if isinstance(scalar, float) else 1
    if cat <= d.category:
        return d.np
    return DEFAULT_FLOAT.np if cat == 2 else int64.np


# -- PyTorch's public promotion API ---------------------------------------------------------------
def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both convert to without losing category."""
    a = _dtype_arg(type1, "type1", 1)
    b = _dtype_arg(type2, "type2", 2)
    return _promote(a, b)


def _dtype_arg(d, name, pos):
    if isinstance(d, dtype):
        return d
    if d in _BY_PYTHON:  # PyTorch reads a Python type as its widest twin
        return {float: float64, int: int64, bool: bool_}[d]
    raise TypeError(
        f"promote_types(): argument '{name}' (position {pos}) must be torch.dtype, "
        f"not {type(d).__name__}"
    )


def _promote(a, b):
    if a is None or b is None:
        return b if a is None else a
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return from_numpy(np.promote_types(a.np, b.np))


def _combine(higher, lower):
    """How a higher-priority group's dtype (dims > 0-d tensors > numbers) meets a lower one's."""
    if higher is not None and higher.category == 2:
        return higher
    if higher is bool_ or (lower is not None and lower.category == 2):
        return _promote(higher, lower)
    return higher if higher is not None else lower


def tensor_result_type(tensor, other):
    """torch.result_type: the dtype an op on these two operands (tensors or numbers) computes in."""
    groups = [None, None, None]  # tensors with dims, 0-d tensors, Python numbers
    for x in (tensor, other):
        arr = getattr(x, "_data", None)
        if arr is not None:
            i, d = (0 if arr.ndim else 1), from_numpy(arr.dtype)
        elif isinstance(x, (bool, int, float, np.generic)):
            x = x.item() if isinstance(x, np.generic) else x
            i = 2
            d = bool_ if isinstance(x, bool) else int64 if isinstance(x, int) else DEFAULT_FLOAT
        else:
            raise TypeError(
                "result_type() received an invalid combination of arguments - got "
                f"({type(tensor).__name__}, {type(other).__name__})"
            )
        groups[i] = _promote(groups[i], d)
    dims, zero, number = groups
    return _combine(dims, _combine(zero, number))


_BY_LEGACY = {d.legacy_name: d for d in ALL}


def from_type_string(name):
    """The dtype a legacy type string such as 'torch.FloatTensor' (or 'torch.cuda.FloatTensor')
    names, with the device type it asks for; ValueError for anything else, as in PyTorch."""
    parts = name.split(".")
    cuda = len(parts) == 3 and parts[1] == "cuda"
    if (len(parts) == 2 or cuda) and parts[0] == "torch" and parts[-1] in _BY_LEGACY:
        return _BY_LEGACY[parts[-1]], "cuda" if cuda else "cpu"
    raise ValueError(f"invalid type: '{name}'")
