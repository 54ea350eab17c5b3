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
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool_ = dtype("bool", np.bool_, 0, "BoolTensor")

DEFAULT_FLOAT = float32
_BY_NUMPY = {d.np: d for d in (float16, float32, float64, uint8, int32, int64, bool_)}
# numpy integer dtypes PyTorch has no twin for are widened to int64 on the way in
_WIDENED = {np.dtype(t): int64 for t in (np.int8, np.int16, np.uint16, np.uint32, np.uint64)}
_BY_PYTHON = {float: float32, int: int64, bool: bool_}


def from_numpy(np_dtype):
    d = _BY_NUMPY.get(np_dtype) or _WIDENED.get(np_dtype)
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype}. The only supported "
            "types are: float64, float32, float16, int64, int32, uint8, and bool."
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
