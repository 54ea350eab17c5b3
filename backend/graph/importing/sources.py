"""Tensor sources read from code: eg.tensor(value), zeros / ones / randn / rand (sizes, dtype,
a seeded generator), eg.arange(n) and eg.arange(n).reshape(shape), and eg.tensor of numpy's
default_rng(seed).standard_normal(shape) / .random(shape), all as `tensor` nodes."""

import ast
import math

import numpy as np

from .problems import Unsupported
from .random_draws import MAX_VALUES
from .syntax import dtype_of_values, is_number, lists, literal

SOURCE_FUNCTIONS = ("tensor", "arange", "zeros", "ones", "randn", "rand", "normal")


class SourceReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def source(self, node, fn, meta):
        """The tensor node of a call of `fn` (one of SOURCE_FUNCTIONS; "arange" also for
        eg.arange(n).reshape(shape))."""
        kwargs = {k.arg: k.value for k in node.keywords}
        if None in kwargs:
            raise Unsupported("**kwargs are not supported")
        if fn == "arange" and isinstance(node.func, ast.Attribute) and node.func.attr == "reshape":
            params, kwargs = self._arange_reshaped(node)
        elif fn == "arange":
            params = self._arange(node, kwargs)
        elif fn == "tensor":
            if len(node.args) != 1:
                raise Unsupported("eg.tensor takes one value")
            arg = node.args[0]
            array = arg.value if isinstance(arg, ast.Subscript) else arg
            if isinstance(array, ast.Name) and array.id in self.imp.datasets.arrays:
                return self.imp.datasets.tensor(arg, array.id, kwargs, meta)
            params = self._tensor(arg, kwargs)
        elif fn == "normal":
            params = self._normal(node, kwargs)
        else:
            params = self._sized(node, fn, kwargs)
        return self._finish(fn, params, kwargs, meta)

    def _arange_reshaped(self, node):
        """eg.arange(n).reshape(shape): (params, the keywords of the arange call)."""
        inner = node.func.value
        shape = (
            literal(node.args[0]) if len(node.args) == 1 else tuple(literal(a) for a in node.args)
        )
        if isinstance(shape, int):
            shape = (shape,)
        kwargs = {k.arg: k.value for k in inner.keywords}
        params = {"init": "arange", "shape": list(shape), "value": None}
        params["dtype"] = self.imp.modules.dtype_in(kwargs) or "int64"
        if len(inner.args) != 1:
            raise Unsupported("write eg.arange(n).reshape(shape)")
        return params, kwargs

    def _arange(self, node, kwargs):
        """arange(n): an arange init; arange(start, end[, step]) and a float bound: their
        values, as PyTorch counts them (a float bound makes a float32 tensor)."""
        bounds = [literal(a) for a in node.args]
        for k in ("start", "end", "step"):
            if k in kwargs:
                bounds.append(literal(kwargs.pop(k)))
        if not 1 <= len(bounds) <= 3 or not all(is_number(b) for b in bounds):
            raise Unsupported("write eg.arange(n) or eg.arange(start, end, step) of numbers")
        dtype = self.imp.modules.dtype_in(kwargs)
        floats = any(isinstance(b, float) for b in bounds)
        if len(bounds) == 1 and not floats:
            return {
                "init": "arange",
                "shape": [bounds[0]],
                "value": None,
                "dtype": dtype or "int64",
            }
        start, end, step = ([0, bounds[0], 1] if len(bounds) == 1 else [*bounds, 1])[:3]
        if step == 0:
            raise Unsupported("arange's step must not be zero")
        n = max(0, math.ceil((end - start) / step))
        if n > MAX_VALUES:
            raise Unsupported(f"arange of more than {MAX_VALUES:,} numbers")
        dtype = dtype or ("float32" if floats else "int64")
        values = [start + i * step for i in range(n)]
        if dtype in ("int64", "bool"):
            values = [int(v) for v in values]
        else:
            values = [float(v) for v in values]
        return {"value": values, "dtype": dtype}

    def _tensor(self, arg, kwargs):
        """eg.tensor(<literal>) or eg.tensor(<numpy draw>)."""
        rnd = self.numpy_random(arg)
        if rnd is not None:
            rnd["dtype"] = self.imp.modules.dtype_in(kwargs) or "float64"
            return rnd
        value = lists(literal(arg))
        if isinstance(value, str) or value is None:
            raise Unsupported("eg.tensor takes numbers or nested lists of numbers")
        dtype = self.imp.modules.dtype_in(kwargs) or dtype_of_values(value)
        return {"value": value, "dtype": dtype}

    def _sized(self, node, fn, kwargs):
        """zeros / ones / randn / rand of sizes (as arguments, a tuple, or size=)."""
        shape = [literal(a) for a in node.args]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = list(shape[0])
        if "size" in kwargs:
            shape = list(literal(kwargs.pop("size")))
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise Unsupported(f"{fn} takes sizes (whole numbers)")
        params = {"init": fn, "shape": shape, "value": None}
        params["dtype"] = self.imp.modules.dtype_in(kwargs) or "float32"
        if fn in ("randn", "rand"):
            # PyTorch's numbers where they can be drawn now (random_draws.py), else a seed
            node = kwargs.pop("generator", None)
            values = self.imp.random.draw(fn, shape, params["dtype"], node)
            if values is not None:
                return {"value": values, "dtype": params["dtype"]}
            gen = self.imp.random.generator(node) if node is not None else None
            params["seed"] = gen.seed if gen is not None else 0
        return params

    def _normal(self, node, kwargs):
        """torch.normal(mean, std, size=...) of numbers: N(mean, std²) draws, PyTorch's where
        they can be (random_draws.py), else numpy's seeded draw scaled, with a note."""
        given = [*node.args]
        for k in ("mean", "std", "size"):
            if k in kwargs:
                given.append(kwargs.pop(k))
        values = [literal(a) for a in given]
        if len(values) != 3 or not all(is_number(v) for v in values[:2]):
            raise Unsupported("torch.normal is read as normal(mean, std, size=(...)) of numbers")
        mean, std, shape = float(values[0]), float(values[1]), values[2]
        shape = [shape] if isinstance(shape, int) else list(shape)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in shape):
            raise Unsupported("normal's size takes whole numbers")
        dtype = self.imp.modules.dtype_in(kwargs) or "float32"
        gen_node = kwargs.pop("generator", None)
        drawn = self.imp.random.draw("normal", shape, dtype, gen_node, (mean, std))
        if drawn is None:
            gen = self.imp.random.generator(gen_node) if gen_node is not None else None
            if math.prod(shape) > MAX_VALUES:
                raise Unsupported(f"normal of more than {MAX_VALUES:,} numbers")
            rng = np.random.default_rng(gen.seed if gen is not None else 0)
            drawn = (rng.standard_normal(shape) * std + mean).tolist()
        return {"value": drawn, "dtype": dtype}

    def _finish(self, fn, params, kwargs, meta):
        """requires_grad=, device= (ignored), no other keyword; then the node."""
        rg = kwargs.pop("requires_grad", None)
        if rg is not None:
            rg = literal(rg)
            if not isinstance(rg, bool):
                raise Unsupported("requires_grad must be True or False")
            params["requires_grad"] = rg
        kwargs.pop("device", None)
        if kwargs:
            raise Unsupported(f"{fn} has no argument '{next(iter(kwargs))}' here")
        if params.get("value") is None:
            params.pop("value", None)
        return self.imp.add_node("tensor", params, [], meta)

    def seed_of(self, node):
        """The seed of `eg.Generator().manual_seed(S)`; 0 when no generator is given."""
        if node is None:
            return 0
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "manual_seed"
            and len(node.args) == 1
            and self.imp.modules.is_call(node.func.value, "lib", "Generator")
        ):
            seed = literal(node.args[0])
            if isinstance(seed, int) and not isinstance(seed, bool):
                return seed
        raise Unsupported("a generator must be written eg.Generator().manual_seed(<int>)")

    def numpy_random(self, node):
        """{init, seed, shape} for np.random.default_rng(S).standard_normal(shape) / .random."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return None
        draw = node.func.attr
        rng = node.func.value
        if not self.imp.modules.is_call(rng, "np", "random.default_rng"):
            return None
        if draw not in ("standard_normal", "random") or len(node.args) != 1 or len(rng.args) != 1:
            raise Unsupported("only default_rng(seed).standard_normal(shape) or .random(shape)")
        seed = literal(rng.args[0])
        shape = literal(node.args[0])
        shape = [shape] if isinstance(shape, int) else list(shape)
        return {
            "init": "randn" if draw == "standard_normal" else "rand",
            "seed": seed,
            "shape": shape,
        }
