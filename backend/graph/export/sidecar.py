"""Stored values in a `.safetensors` file beside the script: the values no seed gives (a
training's weights, edited layer values, trained or edited leaves) where a graph holds more
than INLINE_LIMIT numbers of them. The script loads the file once, next to itself,

    state_dict = load_file(Path(__file__).with_suffix(".safetensors"))

and copies each tensor in where it wrote the literal before:
`self.conv1.weight.copy_(state_dict["conv1.weight"])`, `w = state_dict["w"].requires_grad_()`,
`self.w = nn.Parameter(state_dict["Affine.w"].clone())` (each object its own tensor). A
tensor's name is the Python path of what it fills, `self.` left out (a model class's: its
state_dict key), a class's own values prefixed by the class (`Affine.fc.weight`), so the names
are unique in one script. Below the limit the values stay in the script (a few edited numbers
read better there). A tensor whose numbers its dtype cannot hold exactly (an edited 0.1 of a
float32 layer) stays inline too: the document keeps what was typed, and the importer reads the
file back as its dtype's values.
"""

import numpy as np

NAME = "state_dict"  # the script's variable holding the loaded file
INLINE_LIMIT = 256  # more stored numbers than this: the file (a 16x16 matrix still inline)
_DTYPES = {"float32": np.float32, "float64": np.float64}


def stored_source(spec, params):
    """(values, dtype) of a source whose values no seed gives (a parameter, or a tensor that
    requires grad, holding a literal of a float dtype), else None. A tensor without grad is
    data, and stays in the script."""
    if spec is None or spec.name not in ("tensor", "parameter") or params.get("value") is None:
        return None
    if spec.name == "tensor" and not params.get("requires_grad"):
        return None
    dtype = params.get("dtype") or "float32"
    return (params["value"], dtype) if dtype in _DTYPES else None


def stored_numbers(doc):
    """How many numbers the (flat) document's nodes store that no seed gives and the file can
    hold exactly (a layer's counted as float32, the dtype layers have)."""
    from .. import registry

    total = 0
    for n in doc.nodes:
        spec = registry.get(n.op)
        if spec is None:
            continue
        found = stored_source(spec, n.params)
        values = [found] if found else []
        if spec.layer is not None:
            state = [n.params.get(p) for p, _ in spec.layer.state]
            values += [(v, "float32") for v in state if v is not None]
        for v, dtype in values:
            arr = exact(v, dtype)
            total += arr.size if arr is not None else 0
    return total


def exact(values, dtype):
    """`values` as an array of `dtype`, where every number is that dtype's exactly (else
    None: the script keeps the literal)."""
    kind = _DTYPES.get(dtype)
    if kind is None:
        return None
    try:
        wide = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    arr = wide.astype(kind)
    if not np.array_equal(arr.astype(np.float64), wide):  # (NaN too: kept inline)
        return None
    return np.ascontiguousarray(arr) if arr.ndim else arr.copy()


class Sidecar:
    """The tensors one script writes to its file; `on`: the graph stores more than the limit."""

    def __init__(self, on=False):
        self.on = on
        self.tensors = {}
        self.scope = ""  # "Affine." while a class's own values are written

    def ref(self, expr, values, dtype):
        """The code of the stored tensor for the path `expr` (`self.fc.weight`), its values
        kept for the file; None where the value stays in the script."""
        if not self.on:
            return None
        arr = exact(values, dtype)
        if arr is None:
            return None
        base = self.scope + expr.removeprefix("self.")
        key, k = base, 2
        while key in self.tensors and not _same(self.tensors[key], arr):
            key, k = f"{base}#{k}", k + 1
        self.tensors[key] = arr
        return f'{NAME}["{key}"]'  # (a key is a path of identifiers)

    def used(self, text):
        """The tensors the finished script reads (writers that gave way leave theirs out)."""
        return {k: v for k, v in self.tensors.items() if f'{NAME}["{k}"]' in text}


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def load_lines(lib):
    """The lines that load the file (after the script's helpers, before the model)."""
    call = "load_file" if lib == "torch" else "load_safetensors"
    return [
        "# -- the weights the graph stores: the .safetensors file of this script's name, beside it",
        f'{NAME} = {call}(Path(__file__).with_suffix(".safetensors"))',
    ]


def import_lines(lib):
    load = (
        "from safetensors.torch import load_file"
        if lib == "torch"
        else "from engine.serialization import load_safetensors"
    )
    return ["from pathlib import Path", load]


def file_bytes(tensors, metadata=None):
    """The safetensors file of {name: array} (empty: None)."""
    if not tensors:
        return None
    from safetensors.numpy import save

    return save(dict(sorted(tensors.items())), metadata=metadata)
