"""A script's weights file: the `.safetensors` file an exported script loads from beside itself
(export/sidecar.py), given to the import with the script (`from_python(text, weights=...)`):

    from pathlib import Path                               (read, binding nothing a graph needs)
    from safetensors.torch import load_file                (engine Python: engine.serialization's
    state_dict = load_file(Path(__file__).with_suffix(".safetensors"))       load_safetensors)
    self.conv1.weight.copy_(state_dict["conv1.weight"])    a layer's stored values
    w = state_dict["w"].requires_grad_()                   a leaf of the file's values
    self.w = nn.Parameter(state_dict["Affine.w"].clone())   (each instance's own tensor)

The loader's argument is not read (the file is the one given); a script that loads a file the
import was not given fails at that line. The file is parsed as data, never run: its header is
checked (its size, each tensor's dtype, shape and place in the file, every count against
limits.py) before safetensors reads the numbers.
"""

import ast
import json
import math
import struct

import numpy as np

from ..limits import DEFAULT, MAX_LIST_ITEMS
from .problems import Unsupported

# the weights a script may load: what one run may hold, and no more than a server reads
MAX_WEIGHTS_BYTES = 512 * 1024**2
_MAX_HEADER = 16 * 1024**2  # the JSON header (names, dtypes, shapes, offsets)
_DTYPES = {"F32": ("float32", 4), "F64": ("float64", 8)}
_LOADERS = {
    ("safetensors.torch", "load_file"),
    ("safetensors.numpy", "load_file"),
    ("engine.serialization", "load_safetensors"),
}
_QUIET = _LOADERS | {("pathlib", "Path")}
MISSING = (
    "this line loads the weights from the .safetensors file beside the script, which was not "
    "given: import the script together with its weights file (<script>.safetensors)"
)


class WeightsError(ValueError):
    """A weights file that is not read (its message says why)."""


def read_weights(data):
    """{name: numpy array} of a safetensors file's bytes, or of a {name: array or nested
    lists} mapping; WeightsError for what is not a weights file within the limits."""
    if data is None:
        return None
    if isinstance(data, dict):
        out = {}
        if len(data) > MAX_LIST_ITEMS:
            raise WeightsError(f"{len(data):,} tensors; at most {MAX_LIST_ITEMS:,} are read")
        for name, value in data.items():
            arr = np.asarray(value)
            if arr.dtype.kind != "f":
                raise WeightsError(f"{name}: the values must be floating point numbers")
            _check_size(name, arr.shape)
            out[str(name)] = arr
        return out
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise WeightsError("the weights must be a safetensors file's bytes")
    data = bytes(data)
    _check_header(data)
    from safetensors.numpy import load

    try:
        return load(data)
    except Exception as exc:  # (the header was checked: what is left is the library's word)
        raise WeightsError(f"not a safetensors file: {exc}") from None


def _check_size(name, shape):
    n = math.prod(shape)
    if n > DEFAULT.max_elements:
        raise WeightsError(
            f"{name}: {n:,} numbers, over the limit of {DEFAULT.max_elements:,} per tensor"
        )


def _check_header(data):
    """The file's header read and checked before any tensor is: its length, then each
    tensor's dtype (float32 or float64), shape and byte range."""
    if len(data) > MAX_WEIGHTS_BYTES:
        raise WeightsError(f"a weights file of at most {MAX_WEIGHTS_BYTES // 1024**2} MiB is read")
    if len(data) < 8:
        raise WeightsError("not a safetensors file: too short")
    (size,) = struct.unpack("<Q", data[:8])
    if size > min(_MAX_HEADER, len(data) - 8):
        raise WeightsError("not a safetensors file: its header's length is wrong")
    try:
        header = json.loads(data[8 : 8 + size])
    except (UnicodeDecodeError, ValueError):
        raise WeightsError("not a safetensors file: its header is no JSON") from None
    if not isinstance(header, dict):
        raise WeightsError("not a safetensors file: its header is no JSON object")
    header.pop("__metadata__", None)
    if len(header) > MAX_LIST_ITEMS:
        raise WeightsError(f"{len(header):,} tensors; at most {MAX_LIST_ITEMS:,} are read")
    body, total = len(data) - 8 - size, 0
    for name, info in header.items():
        if not isinstance(info, dict):
            raise WeightsError(f"{name}: no tensor entry")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dtype not in _DTYPES:
            raise WeightsError(f"{name}: dtype {dtype!r}; float32 and float64 are read")
        if not (
            isinstance(shape, list)
            and len(shape) <= 8
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        ):
            raise WeightsError(f"{name}: no shape")
        _check_size(name, shape)
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= body
            and offsets[1] - offsets[0] == math.prod(shape) * _DTYPES[dtype][1]
        ):
            raise WeightsError(f"{name}: its bytes are not where its header says")
        total += offsets[1] - offsets[0]
    if total > DEFAULT.max_total_bytes:
        raise WeightsError("the tensors pass the limit on one run's values")


class WeightsFile:
    """The loaded file's variables in the script being read, and their tensors."""

    def __init__(self, imp, tensors):
        self.imp = imp  # the statement walker (importer._Importer)
        self.tensors = tensors  # {name: array}, None where no file was given
        self.loaders = set()  # the names the imports bind to a loader
        self.loaded = set()  # the variables holding the loaded file

    def share(self, other):
        """Read the file `other` (the script's walker) loaded: a class's methods use it."""
        self.tensors, self.loaders, self.loaded = other.tensors, other.loaders, other.loaded

    def imports(self, stmt):
        """Whether `stmt` imports the loader (and Path): read here, without a note."""
        if not isinstance(stmt, ast.ImportFrom) or stmt.level or not stmt.module:
            return False
        if not all((stmt.module, a.name) in _QUIET for a in stmt.names):
            return False
        for a in stmt.names:
            if (stmt.module, a.name) in _LOADERS:
                self.loaders.add(a.asname or a.name)
        return True

    def claims(self, stmt):
        """`name = load_file(...)`."""
        return (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in self.loaders
        )

    def read(self, stmt):
        name = stmt.targets[0].id
        if len(stmt.value.args) != 1 or stmt.value.keywords:
            raise Unsupported(f"{stmt.value.func.id} takes the file's path")
        if self.tensors is None:
            raise Unsupported(MISSING)
        self.loaded.add(name)
        self.imp.env.pop(name, None)
        return None

    def key(self, node):
        """The tensor name of `state_dict["name"]` (or of its `.clone()`, a tensor of its own);
        None for any other expression."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "clone"
            and not node.args
            and not node.keywords
        ):
            node = node.func.value
        if not (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.loaded
        ):
            return None
        key = node.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise Unsupported(f"{node.value.id}[...] takes a tensor's name")
        if key.value not in self.tensors:
            raise Unsupported(f"the weights file has no tensor {key.value!r}")
        return key.value

    def values(self, node):
        """(nested lists, dtype) of `state_dict["name"]`; None for any other expression."""
        key = self.key(node)
        if key is None:
            return None
        arr = self.tensors[key]
        return arr.tolist(), str(arr.dtype)

    def source(self, node, meta):
        """The tensor node of `state_dict["name"]` (`.requires_grad_()`: a leaf that requires
        grad); None for any other expression."""
        rg = False
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "requires_grad_"
            and not node.args
            and not node.keywords
        ):
            node, rg = node.func.value, True
        found = self.values(node) if self.loaded else None
        if found is None:
            return None
        params = {"value": found[0], "dtype": found[1]}
        if rg:
            params["requires_grad"] = True
        return self.imp.add_node("tensor", params, [], meta)
