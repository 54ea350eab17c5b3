"""matmul, the shape ops (transpose, reshape, flatten, unsqueeze, squeeze, permute, cat, stack)
and detach. The size of a result that can outgrow its inputs (matmul, cat, stack) is checked
before it is allocated."""

import math

import numpy as np

import engine as eg
import engine.nn.functional as F
from engine.watch import array_of

from ..registry import CallForm, OpSpec, Param, Port, Unsupported, register
from .common import DTYPES, call_code, operator_code

# the elements keep their order: each output element is one input element
SAME_LAYOUT = "1 (the upstream gradient, reshaped back to input's shape)"


def _matmul_checked(ctx, ins, p):
    """matmul, its result's size checked first (a [N, 1] @ [1, N] is N * N elements)."""
    a, b = array_of(ins[0]).shape, array_of(ins[1]).shape
    if len(a) >= 2 and len(b) >= 2:
        try:
            batch = np.broadcast_shapes(a[:-2], b[:-2])
        except ValueError:
            batch = ()  # matmul says why
        ctx.check_numel(math.prod(batch) * a[-2] * b[-1])
    return eg.matmul(ins[0], ins[1])


register(
    OpSpec(
        "matmul",
        "linear algebra",
        "matrix product, with PyTorch's rules for 1-D and batched inputs",
        (
            Port("input", derivative="grad @ otherᵀ", derivative_kind="grad"),
            Port("other", derivative="inputᵀ @ grad", derivative_kind="grad"),
        ),
        run=_matmul_checked,
        code=operator_code("@"),
        call=CallForm(args=("input", "other"), aliases=("mm",), operator="@"),
        example={"other": {"shape": [3, 2], "init": "rand"}},
    )
)
# the dims of torch.t(x) / x.t() / x.T (a matrix's transpose) and x.mT (of the last two dims)
_FIXED_DIMS = {"t": (0, 1), "T": (0, 1), "mT": (-2, -1)}


def _transpose_read(name, vals, values):
    """transpose(x, d0, d1) as written; t() / .T / .mT with their fixed dims."""
    if name not in _FIXED_DIMS:
        return vals
    d0, d1 = _FIXED_DIMS[name]
    fixed = {"dim0": d0, "dim1": d1}
    if vals and vals != fixed:  # (its own dims, written out, are read as they are)
        raise Unsupported(f"{name} takes no dims: write transpose(x, dim0, dim1)")
    return fixed


register(
    OpSpec(
        "transpose",
        "shape",
        "swaps two dims",
        (
            Port(
                "input",
                derivative="grad.transpose({dim0}, {dim1}) (the upstream gradient, transposed "
                "back)",
                derivative_kind="grad",
            ),
        ),
        run=lambda ctx, ins, p: eg.transpose(ins[0], p.get("dim0", 0), p.get("dim1", 1)),
        code=lambda lib, args, p: (
            f"{lib}.transpose({args[0]}, {p.get('dim0', 0)}, {p.get('dim1', 1)})"
        ),
        params=(Param("dim0", "int", 0), Param("dim1", "int", 1)),
        call=CallForm(
            args=("input", "dim0", "dim1"),
            required=("dim0", "dim1"),
            aliases=("t",),
            attributes=("T", "mT"),
            read=_transpose_read,
            usual="method",
        ),
    )
)
register(
    OpSpec(
        "reshape",
        "shape",
        "the same elements in a new shape (-1 once for the rest)",
        (Port("input", derivative=SAME_LAYOUT),),
        run=lambda ctx, ins, p: eg.reshape(ins[0], tuple(p.get("shape", [-1]))),
        code=lambda lib, args, p: f"{lib}.reshape({args[0]}, {tuple(p.get('shape', [-1]))!r})",
        params=(Param("shape", "shape", [-1], doc="the new shape; -1 is inferred"),),
        call=CallForm(
            args=("input", "shape"),
            aliases=("view",),
            required=("shape",),
            varargs="shape",
            usual="method",
        ),
    )
)
register(
    OpSpec(
        "flatten",
        "shape",
        "merges dims start_dim..end_dim into one",
        (Port("input", derivative=SAME_LAYOUT),),
        run=lambda ctx, ins, p: eg.flatten(ins[0], p.get("start_dim", 0), p.get("end_dim", -1)),
        code=call_code("flatten", ("start_dim", "end_dim"), {"start_dim": 0, "end_dim": -1}),
        params=(Param("start_dim", "int", 0), Param("end_dim", "int", -1)),
        call=CallForm(args=("input", "start_dim", "end_dim"), usual="method"),
    )
)
register(
    OpSpec(
        "unsqueeze",
        "shape",
        "inserts a dim of size 1",
        (Port("input", derivative=SAME_LAYOUT),),
        run=lambda ctx, ins, p: eg.unsqueeze(ins[0], p.get("dim", 0)),
        code=lambda lib, args, p: f"{lib}.unsqueeze({args[0]}, {p.get('dim', 0)})",
        params=(Param("dim", "int", 0),),
        call=CallForm(args=("input", "dim"), required=("dim",), usual="method"),
    )
)
register(
    OpSpec(
        "squeeze",
        "shape",
        "removes dims of size 1 (all, or just dim)",
        (Port("input", derivative=SAME_LAYOUT),),
        run=lambda ctx, ins, p: eg.squeeze(ins[0], p.get("dim")),
        code=call_code("squeeze", ("dim",), {"dim": None}),
        params=(Param("dim", "int", None, nullable=True),),
        call=CallForm(args=("input", "dim"), usual="method"),
    )
)
register(
    OpSpec(
        "permute",
        "shape",
        "reorders the dims",
        (
            Port(
                "input",
                derivative="grad permuted back by the inverse of {dims} (the upstream gradient, "
                "its dims put back in input's order)",
                derivative_kind="grad",
            ),
        ),
        run=lambda ctx, ins, p: eg.permute(ins[0], tuple(p.get("dims", []))),
        code=lambda lib, args, p: f"{lib}.permute({args[0]}, {tuple(p.get('dims', []))!r})",
        params=(Param("dims", "shape", [1, 0], doc="the new order of the dims"),),
        call=CallForm(args=("input", "dims"), required=("dims",), varargs="dims", usual="method"),
    )
)


def _joined_checked(fn):
    """cat or stack, the size of the result checked before it is allocated: many inputs within
    the per-tensor limit can join into one far over it (the sum of their sizes is the result's
    size whatever the dim)."""

    def run(ctx, ins, p):
        tensors = ins[0]
        ctx.check_numel(sum(t.numel() for t in tensors if isinstance(t, eg.Tensor)))
        return fn(tensors, p.get("dim", 0))

    return run


for _name, _doc, _aliases, _derivative in (
    (
        "cat",
        "joins tensors along an existing dim",
        ("concat",),
        "1 for the slice along dim {dim} that came from this input, 0 elsewhere (the edge gets "
        "that slice of grad)",
    ),
    (
        "stack",
        "joins tensors along a new dim",
        (),
        "1 at this input's index along the new dim {dim}, 0 elsewhere (the edge gets grad at "
        "that index)",
    ),
):
    register(
        OpSpec(
            _name,
            "shape",
            _doc,
            (Port("tensors", variadic=True, derivative=_derivative, derivative_kind="jacobian"),),
            run=_joined_checked(getattr(eg, _name)),
            code=lambda lib, args, p, n=_name: (
                f"{lib}.{n}([{', '.join(args)}], dim={p.get('dim', 0)})"
            ),
            params=(Param("dim", "int", 0),),
            call=CallForm(
                args=("tensors", "dim"), aliases=_aliases, forms=("function", "functional")
            ),
        )
    )
# x.float() / x.double() / x.long() / x.bool(): the dtype from the method's name
_CASTS = {"float": "float32", "double": "float64", "long": "int64", "bool": "bool"}


def _cast_read(name, vals, values):
    if name in _CASTS:
        if vals:
            raise Unsupported(f"{name}() takes no arguments here")
        return {"dtype": _CASTS[name]}
    return vals


register(
    OpSpec(
        "to_dtype",
        "shape",
        "the same values as another dtype (x.float(), x.long(), x.to(torch.float64)); from "
        "integers or bools no gradient flows back, as none flows into them",
        (
            Port(
                "input",
                derivative="1 (the gradient cast back to input's dtype)",
            ),
        ),
        run=lambda ctx, ins, p: ins[0].to(getattr(eg, p.get("dtype") or "float32")),
        code=lambda lib, args, p: f"{args[0]}.to({lib}.{p.get('dtype') or 'float32'})",
        params=(Param("dtype", "choice", "float32", choices=DTYPES),),
        extra={"composite": True},  # (to its own dtype: the same tensor, no engine op)
        call=CallForm(args=("input",), aliases=tuple(_CASTS), forms=("method",), read=_cast_read),
    )
)
register(
    OpSpec(
        "one_hot",
        "shape",
        "each integer class index of input as a row of num_classes values, 1 at the index and "
        "0 elsewhere (int64); num_classes -1: the largest index + 1",
        (
            Port(
                "input",
                doc="int64 class indices",
                no_grad="one_hot reads class indices (integers): no gradient flows back to "
                "{source}.",
            ),
        ),
        run=lambda ctx, ins, p: F.one_hot(ins[0], int(p.get("num_classes", -1))),
        code=lambda lib, args, p: f"F.one_hot({args[0]}, num_classes={p.get('num_classes', -1)})",
        params=(Param("num_classes", "int", -1, min=-1, max=100_000),),
        call=CallForm(args=("input", "num_classes"), forms=("functional",)),
        example={"input": {"value": [0, 2, 1], "dtype": "int64"}},
    )
)
# zeros_like / ones_like: a fresh tensor of input's shape and dtype, read at run time (so an
# imported `torch.ones_like(out)` needs no shape while reading); no gradient flows back
for _name, _fill in (("zeros_like", "zeros"), ("ones_like", "ones")):
    register(
        OpSpec(
            _name,
            "shape",
            f"a tensor of {_fill} with input's shape and dtype (no gradient flows back)",
            (
                Port(
                    "input",
                    no_grad=(
                        "{op} reads only the shape and dtype of its input: no gradient flows "
                        "back to {source}."
                    ),
                ),
            ),
            run=lambda ctx, ins, p, f=_name: getattr(eg, f)(ins[0]),
            code=lambda lib, args, p, f=_name: f"{lib}.{f}({args[0]})",
            call=CallForm(forms=("function",)),
        )
    )

register(
    OpSpec(
        "detach",
        "autograd",
        "the same values, cut from the graph (no gradient flows back)",
        (
            Port(
                "input",
                no_grad="detach sends no gradient back to its input: it cuts the graph here.",
            ),
        ),
        run=lambda ctx, ins, p: ins[0].detach(),
        code=lambda lib, args, p: f"{args[0]}.detach()",
        call=CallForm(usual="method"),
    )
)
