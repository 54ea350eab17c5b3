"""What the op families share: code templates, run() builders and the size checks
made before an op allocates its result."""

import math

import numpy as np

import engine as eg
from engine.watch import array_of

DTYPES = ("float32", "float64", "int64", "bool")


def kwargs_code(params, names, defaults):
    """`, k=v` for each param that differs from its default (so code stays short)."""
    parts = [f"{n}={params[n]!r}" for n in names if params.get(n) != defaults.get(n)]
    return "".join(", " + p for p in parts)


def call_code(fn, names=(), defaults=None, *, functional=False):
    """code() writing `lib.fn(args, k=v)` (or `F.fn(...)`)."""
    defaults = defaults or {}

    def code(lib, args, params):
        head = f"F.{fn}" if functional else f"{lib}.{fn}"
        return f"{head}({', '.join(args)}{kwargs_code(params, names, defaults)})"

    return code


def operator_code(symbol):
    def code(lib, args, params):
        return f"{args[0]} {symbol} {args[1]}"

    return code


def on_input(fn, args=None, kwargs=None):
    """run() for an op on its first input, with params turned into arguments."""
    if args is None and kwargs is None:  # most ops: fn(input), with no arguments to unpack

        def run_plain(ctx, ins, p):
            return fn(ins[0])

        return run_plain

    def run(ctx, ins, p):
        return fn(ins[0], *(args(p) if args else ()), **(kwargs(p) if kwargs else {}))

    return run


def on_inputs(fn, kwargs=None):
    """run() for an op on all its inputs in port order."""

    def run(ctx, ins, p):
        return fn(*ins, **(kwargs(p) if kwargs else {}))

    return run


def check_broadcast(ctx, ins):
    """Check the size of the broadcast result first: inputs of [N, 1] and [1, N] are small and
    make N * N elements, to be refused at the limit before numpy allocates them (a server's
    validation would otherwise hold gigabytes for a moment, or fail in numpy's words). Inputs
    of one shape (the usual case) give that shape: nothing to check."""
    if shapes_differ(ins):
        shapes = [array_of(t).shape for t in ins if isinstance(t, eg.Tensor)]
        try:
            n = math.prod(np.broadcast_shapes(*shapes))
        except ValueError:
            n = 0  # shapes that do not broadcast: the op says so in PyTorch's words
        ctx.check_numel(n)


def broadcast_checked(run):
    """run() that first checks the size of the broadcast result (check_broadcast)."""

    def checked(ctx, ins, p):
        check_broadcast(ctx, ins)
        return run(ctx, ins, p)

    return checked


def pair_checked(fn):
    """run() for an op on its two inputs, fn(input, other), that first checks the size of the
    broadcast result (check_broadcast) unless both are tensors of one shape."""
    tensor = eg.Tensor

    def run(ctx, ins, p):
        a, b = ins
        if a.__class__ is not tensor or b.__class__ is not tensor or a._data.shape != b._data.shape:
            check_broadcast(ctx, ins)
        return fn(a, b)

    return run


def shapes_differ(ins):
    """Whether the tensors among `ins` have more than one shape (a loop, not a set: this runs
    before every binary op, and a set of shapes cost a good part of an op on small tensors)."""
    shape = None
    for t in ins:
        if t.__class__ is eg.Tensor or isinstance(t, eg.Tensor):
            s = array_of(t).shape
            if shape is None:
                shape = s
            elif s != shape:
                return True
    return False
