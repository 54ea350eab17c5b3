"""Run the engine on PyTorch's own sample inputs (its OpInfo database) and report where it differs.

    .venv/bin/pip install expecttest   # torch.testing's internals import it
    .venv/bin/python scripts/audit_against_opinfo.py [--ops add,mul] [--samples 6] [--verbose]

For every op in torch's OpInfo database that the engine also has (as `engine.<name>`, a Tensor
method or `engine.nn.functional.<name>`), each float64 sample input is run through both
libraries: values, dtypes and shapes are compared, then a random upstream gradient is sent back
and every input's gradient compared. Errors count as matches when both raise. A development
tool to find gaps in the op surface; the tests in tests/engine are what CI runs.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import traceback
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import engine as eg  # noqa: E402

SKIP_PREFIXES = ("linalg.", "special.", "fft.", "_", "sparse.", "masked.", "signal.")


def engine_callable(op):
    """The engine's form of the variant torch's sample inputs are written for: the method
    where the OpInfo has one (its `op` is then often a lambda reordering arguments), else the
    function."""
    name = op.name
    if name.startswith(SKIP_PREFIXES):
        return None
    if name.startswith("nn.functional."):
        return getattr(eg.nn.functional, name.split(".")[-1], None)
    method_name = getattr(op.method_variant, "__name__", None) or name
    attr = getattr(eg.Tensor, method_name, None)
    if isinstance(attr, property):
        return lambda x, *a, **k: getattr(x, method_name)
    function = getattr(eg, name, None)
    if callable(function) and not isinstance(function, eg.dtype) and op.op.__name__ != "<lambda>":
        return function
    if attr is not None:
        if name.endswith("_"):  # in place: torch's samples write into a copy
            return lambda x, *a, **k: getattr(x.clone(), method_name)(*a, **k)
        return lambda x, *a, **k: getattr(x, method_name)(*a, **k)
    return function if callable(function) and not isinstance(function, eg.dtype) else None


def to_engine(v):
    if isinstance(v, torch.Tensor):
        arr = v.detach().cpu().numpy().copy()
        t = eg.tensor(arr)
        if v.requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(v, torch.dtype):
        return getattr(eg, str(v).split(".")[-1], v)
    if isinstance(v, (list, tuple)):
        return type(v)(to_engine(x) for x in v)
    if isinstance(v, dict):
        return {k: to_engine(x) for k, x in v.items()}
    return v


def tensors(out):
    if isinstance(out, (torch.Tensor, eg.Tensor)):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for x in out for t in tensors(x)]
    return []


def leaves(v):
    return [t for t in tensors(v) if t.requires_grad]


def compare(name, sample, fn):
    args_t = [sample.input, *sample.args]
    kwargs_t = dict(sample.kwargs)
    args_e, kwargs_e = to_engine(args_t), to_engine(kwargs_t)
    # random ops draw the same numbers from both: the engine's generator is PyTorch's, and 42 is
    # the seed OpInfo's wrapper_set_seed gives the torch side of its random entries
    torch.manual_seed(42)
    eg.manual_seed(42)
    try:
        out_t = sample_op(name)(*args_t, **kwargs_t)
        if name.endswith("_") and out_t is sample.input:
            out_t = out_t.clone()
    except Exception as exc:  # noqa: BLE001
        try:
            fn(*args_e, **kwargs_e)
        except Exception:  # noqa: BLE001
            return None
        return f"torch raised {type(exc).__name__}, engine did not"
    try:
        out_e = fn(*args_e, **kwargs_e)
    except Exception as exc:  # noqa: BLE001
        return f"engine raised {type(exc).__name__}: {str(exc)[:120]}"
    ts, es = tensors(out_t), tensors(out_e)
    if len(ts) != len(es):
        return f"{len(es)} output tensors, torch {len(ts)}"
    for a, b in zip(ts, es):
        if tuple(a.shape) != tuple(b.shape):
            return f"shape {tuple(b.shape)}, torch {tuple(a.shape)}"
        if str(a.dtype).split(".")[-1] != str(b.dtype).split(".")[-1]:
            return f"dtype {b.dtype}, torch {a.dtype}"
        av = a.detach().numpy()
        bv = np.asarray(b.detach().cpu().tolist(), dtype=av.dtype).reshape(av.shape)
        if not np.allclose(bv, av, rtol=1e-5, atol=1e-6, equal_nan=True):
            return "values differ"
    grads_from = [(a, b) for a, b in zip(ts, es) if a.requires_grad and a.dtype.is_floating_point]
    if not grads_from:
        return None
    rng = np.random.default_rng(0)
    loss_t = loss_e = 0
    for a, b in grads_from:
        up = rng.standard_normal(tuple(a.shape))
        loss_t = loss_t + (a * torch.tensor(up, dtype=a.dtype)).sum()
        loss_e = loss_e + (b * eg.tensor(up, dtype=getattr(eg, str(b.dtype).split(".")[-1]))).sum()
    in_t, in_e = leaves(args_t) + leaves(kwargs_t), leaves(args_e) + leaves(kwargs_e)
    try:
        gt = torch.autograd.grad(loss_t, in_t, allow_unused=True)
    except Exception:  # noqa: BLE001 - torch cannot differentiate it: nothing to compare
        return None
    try:
        ge = eg.autograd.grad(loss_e, in_e, allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        return f"engine backward raised {type(exc).__name__}: {str(exc)[:120]}"
    for i, (a, b) in enumerate(zip(gt, ge)):
        if a is None:
            continue
        if b is None:
            if torch.count_nonzero(a) == 0:
                continue
            return f"no gradient for input {i}"
        if not np.allclose(b.detach().cpu().numpy(), a.numpy(), rtol=1e-5, atol=1e-6):
            return f"gradient of input {i} differs"
    return None


_OPS = {}


def sample_op(name):
    return _OPS[name]


def op_cases(op_names=()):
    """(key, op, engine callable) for each OpInfo entry the engine has, in op_db order."""
    from torch.testing._internal.common_methods_invocations import op_db

    cases = []
    for op in op_db:
        if op_names and op.name not in op_names:
            continue
        fn = engine_callable(op)
        if fn is None or torch.float64 not in op.supported_dtypes("cpu"):
            continue
        _OPS[op.name] = op.op
        key = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        cases.append((key, op, fn))
    return cases


def problems_of(op, fn, max_samples):
    """What differs on each of the op's first float64 sample inputs (empty: all match)."""
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
    except Exception:  # noqa: BLE001 - torch cannot make samples for it here
        return [], 0
    found = []
    for sample in samples[:max_samples]:
        try:
            problem = compare(op.name, sample, fn)
        except Exception:  # noqa: BLE001
            problem = "audit crashed: " + traceback.format_exc(limit=1).splitlines()[-1]
        if problem:
            found.append(problem)
    return found, len(samples[:max_samples])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    wanted = set(filter(None, args.ops.split(",")))
    results = {}
    warnings.simplefilter("ignore")
    for key, op, fn in op_cases(wanted):
        got = problems_of(op, fn, args.samples)
        if got:
            results[key] = (got[1], len(got[0]), got[0])
    total = sum(r[0] for r in results.values())
    failed = sum(r[1] for r in results.values())
    for key, (n, bad, problems) in sorted(results.items()):
        if bad:
            common = collections.Counter(problems).most_common(2 if args.verbose else 1)
            print(f"{key}: {bad}/{n} differ; " + "; ".join(f"{p} (x{c})" for p, c in common))
    print(f"\n{len(results)} ops, {total} samples, {total - failed} match, {failed} differ")


if __name__ == "__main__":
    main()
