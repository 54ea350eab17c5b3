"""The in-place ops of the editor (`add_ sub_ mul_ div_ clamp_ relu_ zero_ fill_`, `setitem`),
`getitem`, the view a write can go through, and `index`, indexing by integer tensors or masks
(`C[Xb]`, `x[idx, target]`: a copy, as in PyTorch, never a view).

An in-place op writes into the tensor wired into its `input` and outputs that same tensor, one
version later: `extra["writes"] = "input"` says so to validation (an in-place node must come
after its input in the document), the executor (statement order, no cache, versions in the
value records), the exporter (a statement, `x.add_(1)`, not an assignment) and the page (drawn
as a write into its input). The engine does the rest exactly as PyTorch: the version counter,
the leaf error, CopySlices when `input` is a view (a `getitem` node's output).

An index is a param string in PyTorch's syntax (`0`, `0:2`, `:, 1`, `..., ::2`), read by
`parse_index` with a small grammar, never by eval; in `index`'s, `#` stands for each tensor
wired into `indices`, in order (`:, #` is x[:, idx]).
"""

import math
import re

import numpy as np

import engine as eg

from ..registry import OpSpec, Param, Port, register

WRITES = {"writes": "input"}
CATEGORY = "in place"
# zero_ and fill_ keep nothing of the value they write over
_OVERWRITTEN = "0 ({} overwrites every element: nothing of the old value reaches the output)"

_PART = re.compile(r"^\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?$")
MAX_INDEX_PARTS = 16


def parse_index(text):
    """`text` (PyTorch's index syntax: ints, slices `a:b:c`, `...`, `None`, comma-separated)
    as a Python index; ValueError in the user's words for anything else."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("index must not be empty: write it as in x[...], e.g. 0 or 0:2")
    parts = text.split(",")
    if parts[-1].strip() == "" and len(parts) > 1:
        parts = parts[:-1]  # `0,` is the tuple (0,)
    if len(parts) > MAX_INDEX_PARTS:
        raise ValueError(f"index has {len(parts)} parts; at most {MAX_INDEX_PARTS}")
    key = []
    for part in parts:
        p = part.strip()
        if p == "...":
            key.append(Ellipsis)
            continue
        if p == "None":
            key.append(None)
            continue
        m = _PART.match(p) if p else None
        if m is None or len(p) > 40:
            raise ValueError(
                f"index part '{p}' is not an integer, a slice (start:stop:step), ... or None"
            )
        if ":" not in p:
            key.append(int(m.group(1)))
            continue
        start, stop, step = (None if g is None else int(g) for g in m.groups())
        if step == 0:
            raise ValueError("slice step cannot be zero")
        key.append(slice(start, stop, step))
    return key[0] if len(key) == 1 and "," not in text else tuple(key)


def index_code(key):
    """The index as it is written between brackets (`0:2`, `:, 1`)."""
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if k is Ellipsis:
            out.append("...")
        elif k is None:
            out.append("None")
        elif isinstance(k, slice):
            s = ("" if k.start is None else str(k.start)) + ":"
            s += "" if k.stop is None else str(k.stop)
            if k.step is not None:
                s += f":{k.step}"
            out.append(s)
        else:
            out.append(str(k))
    text = ", ".join(out)
    return text + "," if isinstance(key, tuple) and len(key) == 1 else text


class IndexProblem(ValueError):
    """A bad index param: validation reports it at the node's `index` (its `param`)."""

    param = "index"


def _index(p):
    try:
        return parse_index(p.get("index"))
    except ValueError as exc:
        raise IndexProblem(str(exc)) from None


INDEX = Param("index", "str", "0", doc="the index as written in x[...]: 0, 0:2, :, 1, ...")
SCALAR = Param(
    "scalar", "float", None, nullable=True, doc="the number used while other is not connected"
)
VALUE = Param(
    "scalar", "float", None, nullable=True, doc="the number written while value is not connected"
)


def _number(p):
    v = p.get("scalar")
    if v is None:
        raise ValueError("no scalar is set")
    return v


register(
    OpSpec(
        "getitem",
        "shape",
        "input[index]: basic indexing gives a view, sharing input's memory and version",
        (
            Port(
                "input",
                derivative="1 for each element input[index] picked (added up where picked "
                "twice), 0 elsewhere (the edge gets grad put back in place, zeros around it)",
                derivative_kind="jacobian",
            ),
        ),
        run=lambda ctx, ins, p: ins[0][_index(p)],
        code=lambda lib, args, p: f"{args[0]}[{index_code(_index(p))}]",
        params=(INDEX,),
    )
)

TENSOR_PART = "#"  # in index's index param: the next tensor of its indices


def tensor_index(text, tensors):
    """The Python index of `index`'s param `text` with each `#` part the next of `tensors`;
    an empty text is the tensors in order (input[i0, i1, ...]). ValueError in the user's
    words where the text or the count of tensors does not fit."""
    tensors = list(tensors)
    if not isinstance(text, str) or not text.strip():
        if not tensors:
            raise ValueError("index takes at least one tensor of indices")
        return tensors[0] if len(tensors) == 1 else tuple(tensors)
    parts = text.split(",")
    single = len(parts) == 1
    if parts[-1].strip() == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > MAX_INDEX_PARTS:
        raise ValueError(f"index has {len(parts)} parts; at most {MAX_INDEX_PARTS}")
    wanted = sum(p.strip() == TENSOR_PART for p in parts)
    if wanted != len(tensors):
        raise ValueError(
            f"index has {wanted} '#' (one per tensor of indices) but {len(tensors)} tensors "
            "are wired into indices"
        )
    key, left = [], iter(tensors)
    for part in parts:
        key.append(next(left) if part.strip() == TENSOR_PART else parse_index(part))
    return key[0] if single else tuple(key)


def _tensor_index_code(text, names):
    if not isinstance(text, str) or not text.strip():
        return ", ".join(names)
    parts = text.split(",")
    trailing = len(parts) > 1 and not parts[-1].strip()  # `#,` is the tuple (ids,)
    left = iter(names)
    out = [
        next(left) if p.strip() == TENSOR_PART else p.strip()
        for p in (parts[:-1] if trailing else parts)
    ]
    return ", ".join(out) + ("," if trailing else "")


def _indexed_numel(shape, key):
    """An upper bound of the elements input[key] has, worked out before it is made: the index
    tensors' elements (broadcast together; a mask's at most its own) times the elements of the
    dims they do not pick from."""
    parts = key if isinstance(key, tuple) else (key,)

    def dims(k):  # how many of input's dims a part of the key takes
        if k is None or k is Ellipsis:
            return 0
        return max(1, k.ndim) if getattr(k, "dtype", None) == eg.bool else 1

    picked, counts, dim = 1, [], 0
    for k in parts:
        if k is Ellipsis:
            dim += max(0, len(shape) - sum(map(dims, parts)))
        elif hasattr(k, "shape"):
            n = dims(k)
            picked *= math.prod(shape[dim : dim + n])
            counts.append((math.prod(k.shape),) if n > 1 or k.dtype == eg.bool else k.shape)
            dim += n
        else:
            dim += dims(k)
    try:
        count = math.prod(np.broadcast_shapes(*map(tuple, counts))) if counts else 1
    except ValueError:
        return 0  # PyTorch's error says why, when it runs
    return count * (math.prod(shape) // picked if picked else 0)


def _index_run(ctx, ins, p):
    x, indices = ins[0], [t for t in ins[1] if t is not None]
    try:
        key = tensor_index(p.get("index"), indices)
    except ValueError as exc:
        raise IndexProblem(str(exc)) from None
    ctx.check_numel(_indexed_numel(tuple(x.shape), key))
    return x[key]


register(
    OpSpec(
        "index",
        "shape",
        "input[indices]: indexing by integer tensors (or a mask) picks elements into a new "
        "tensor, a copy (C[ids] looks rows up, x[range(n), target] one element per row)",
        (
            Port(
                "input",
                derivative="1 for each element the indices pick (added up where one is picked "
                "more than once), 0 elsewhere (the edge gets grad added back in place, zeros "
                "around it)",
                derivative_kind="jacobian",
            ),
            Port(
                "indices",
                variadic=True,
                doc="integer (int64) tensors or a bool mask, one for each # of index",
                no_grad="indices are positions into input, not a function of anything: no "
                "gradient flows into them (the elements of input they pick get it)",
            ),
        ),
        run=_index_run,
        code=lambda lib, args, p: f"{args[0]}[{_tensor_index_code(p.get('index'), args[1:])}]",
        params=(
            Param(
                "index",
                "str",
                "",
                doc="the index as written in x[...] with # for each tensor of indices, in "
                "order: #, :, #, #, #, 0; empty: the tensors in order (x[#, #, ...])",
            ),
        ),
        example={"indices": {"value": [1, 0, 1], "dtype": "int64"}},
    )
)

# binary writes: other, or the number `scalar` while other is unconnected (as add, mul, ...)
# the local derivatives of (input, other), and input's while scalar stands in for other; input:
# its value before the write
for _name, _doc, (_d_input, _d_other, _d_scalar) in (
    ("add_", "input += other, written into input", ("1", "1", "")),
    ("sub_", "input -= other, written into input", ("1", "−1", "")),
    ("mul_", "input *= other, written into input", ("other", "input", "{scalar} (the scalar)")),
    ("div_", "input /= other, written into input", ("1/other", "−input/other²", "1/{scalar}")),
):

    def _run(ctx, ins, p, m=_name):
        other = ins[1] if ins[1] is not None else _number(p)
        return getattr(ins[0], m)(other)

    def _code(lib, args, p, m=_name):
        other = args[1] if len(args) > 1 else repr(p["scalar"])
        return f"{args[0]}.{m}({other})"

    register(
        OpSpec(
            _name,
            CATEGORY,
            _doc,
            (
                Port(
                    "input",
                    doc="the tensor written",
                    derivative=_d_input,
                    derivative_scalar=_d_scalar,
                ),
                Port("other", optional=True, derivative=_d_other),
            ),
            run=_run,
            code=_code,
            params=(SCALAR,),
            extra={**WRITES, "scalar_for": "other"},
        )
    )


def _clamp_code(lib, args, p):
    parts = [f"min={p['min']!r}"] if p.get("min") is not None else []
    parts += [f"max={p['max']!r}"] if p.get("max") is not None else []
    return f"{args[0]}.clamp_({', '.join(parts)})"


register(
    OpSpec(
        "clamp_",
        CATEGORY,
        "limits input to [min, max], written into input",
        (
            Port(
                "input",
                doc="the tensor written",
                derivative="1 where min ≤ input ≤ max, else 0",
            ),
        ),
        run=lambda ctx, ins, p: ins[0].clamp_(p.get("min"), p.get("max")),
        code=_clamp_code,
        params=(
            Param("min", "float", None, nullable=True),
            Param("max", "float", 1.0, nullable=True),
        ),
        extra=WRITES,
    )
)
register(
    OpSpec(
        "relu_",
        CATEGORY,
        "max(0, input), written into input",
        (Port("input", doc="the tensor written", derivative="1 where input > 0, else 0"),),
        run=lambda ctx, ins, p: ins[0].relu_(),
        code=lambda lib, args, p: f"{args[0]}.relu_()",
        extra=WRITES,
    )
)
register(
    OpSpec(
        "zero_",
        CATEGORY,
        "fills input with zeros",
        (Port("input", doc="the tensor written", derivative=_OVERWRITTEN.format("zero_")),),
        run=lambda ctx, ins, p: ins[0].zero_(),
        code=lambda lib, args, p: f"{args[0]}.zero_()",
        extra=WRITES,
    )
)
register(
    OpSpec(
        "fill_",
        CATEGORY,
        "fills input with value",
        (Port("input", doc="the tensor written", derivative=_OVERWRITTEN.format("fill_")),),
        run=lambda ctx, ins, p: ins[0].fill_(p.get("value", 0.0)),
        code=lambda lib, args, p: f"{args[0]}.fill_({p.get('value', 0.0)!r})",
        params=(Param("value", "float", 0.0),),
        extra=WRITES,
    )
)


def _setitem_run(ctx, ins, p):
    x, value = ins
    x[_index(p)] = value if value is not None else _number(p)
    return x


def _setitem_code(lib, args, p):
    """A statement, not an expression: the exporter writes it as it is."""
    value = args[1] if len(args) > 1 else repr(p["scalar"])
    return f"{args[0]}[{index_code(_index(p))}] = {value}"


register(
    OpSpec(
        "setitem",
        CATEGORY,
        "input[index] = value, written into input (through a view: CopySlices)",
        (
            Port(
                "input",
                doc="the tensor written",
                derivative="1 outside input[index], 0 inside it (overwritten by value)",
            ),
            Port(
                "value",
                optional=True,
                doc="or scalar",
                derivative="1 for each element of input[index] it was written to (added up over "
                "the dims it was broadcast along)",
                derivative_kind="jacobian",
            ),
        ),
        run=_setitem_run,
        code=_setitem_code,
        params=(INDEX, VALUE),
        example={"value": {"shape": [3], "init": "rand"}},  # input[0] of a [2, 3] input
        extra={**WRITES, "scalar_for": "value", "statement": True},
    )
)

INPLACE_OPS = tuple(n for n in ("add_", "sub_", "mul_", "div_", "clamp_", "relu_", "zero_"))
INPLACE_OPS += ("fill_", "setitem")
