"""Calls read from code: a layer (`fc(x)`), a tensor source (sources.py), or a function or
method of the op registry (eg.exp(y), F.relu(y), y.sum(dim=0), x.reshape(2, 3), torch.max(x,
dim=1).values), bound to the op's ports and params by the signature tables below."""

import ast

from .. import registry
from .problems import Unsupported
from .sources import SOURCE_FUNCTIONS
from .syntax import dotted, literal

# name -> (op, positional args, keyword-only args); args named as the op's ports and params
_SIGS = {
    **{n: (n, ("input", "other"), ()) for n in ("add", "sub", "mul", "div", "pow")},
    **{n: (n, ("input", "other"), ()) for n in ("maximum", "minimum", "matmul")},
    **{n: (n, ("input", "other"), ()) for n in ("gt", "lt", "ge", "le", "eq", "ne")},
    "where": ("where", ("condition", "input", "other"), ()),
    **{
        n: (n, ("input",), ())
        for n in ("exp", "log", "sqrt", "abs", "sin", "cos", "reciprocal")
        + ("relu", "sigmoid", "tanh", "neg", "detach")
    },
    "negative": ("neg", ("input",), ()),
    "clamp": ("clamp", ("input", "min", "max"), ()),
    "clip": ("clamp", ("input", "min", "max"), ()),
    "leaky_relu": ("leaky_relu", ("input", "negative_slope"), ()),
    "softmax": ("softmax", ("input", "dim"), ()),
    "log_softmax": ("log_softmax", ("input", "dim"), ()),
    "sum": ("sum", ("input", "dim", "keepdim"), ()),
    "mean": ("mean", ("input", "dim", "keepdim"), ()),
    "max": ("max", ("input", "dim", "keepdim"), ()),
    "min": ("min", ("input", "dim", "keepdim"), ()),
    "amax": ("max", ("input", "dim", "keepdim"), ()),
    "amin": ("min", ("input", "dim", "keepdim"), ()),
    "var": ("var", ("input", "dim"), ("correction", "keepdim", "unbiased")),
    "std": ("std", ("input", "dim"), ("correction", "keepdim", "unbiased")),
    "mm": ("matmul", ("input", "other"), ()),
    "transpose": ("transpose", ("input", "dim0", "dim1"), ()),
    "reshape": ("reshape", ("input", "shape"), ()),
    "view": ("reshape", ("input", "shape"), ()),
    "flatten": ("flatten", ("input", "start_dim", "end_dim"), ()),
    "unsqueeze": ("unsqueeze", ("input", "dim"), ()),
    "squeeze": ("squeeze", ("input", "dim"), ()),
    "permute": ("permute", ("input", "dims"), ()),
    "cat": ("cat", ("tensors", "dim"), ()),
    "concat": ("cat", ("tensors", "dim"), ()),
    "stack": ("stack", ("tensors", "dim"), ()),
    **{
        n: (n, ("input", "target"), ("reduction",))
        for n in ("mse_loss", "l1_loss", "binary_cross_entropy", "cross_entropy")
    },
}
_FUNCTIONAL_ONLY = {"leaky_relu", "mse_loss", "l1_loss", "binary_cross_entropy", "cross_entropy"}
_NOT_METHODS = _FUNCTIONAL_ONLY | {"cat", "concat", "stack", "where"}
# what PyTorch takes when an argument is left out, where it is not the op's param default
_CODE_DEFAULTS = {"clamp": {"min": None, "max": None}}
_REQUIRED = {
    "softmax": ("dim",),
    "log_softmax": ("dim",),
    "transpose": ("dim0", "dim1"),
    "reshape": ("shape",),
    "unsqueeze": ("dim",),
    "permute": ("dims",),
}
_VARARGS = {"reshape": "shape", "view": "shape", "permute": "dims"}  # x.reshape(2, 3)


class CallReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def call(self, node, meta, values=False):
        """The node of a call; `values`: the call is read as `<call>.values`."""
        imp, func = self.imp, node.func
        if isinstance(func, ast.Name) and func.id in imp.layers.declared and not values:
            return imp.layers.call(func.id, node, meta)  # h = fc(x)
        d = dotted(func)
        kind, rest = imp.modules.func_kind(d)
        if kind == "lib" and rest in SOURCE_FUNCTIONS:
            return imp.sources.source(node, rest, meta)
        receiver = None
        if kind is None and isinstance(func, ast.Attribute):
            # a method: x.exp(), x.sum(dim=0), eg.arange(6).reshape((2, 3))
            special = self._special_method(node, meta)
            if special is not None:
                return special
            receiver, rest, kind = func.value, func.attr, "method"
        if kind not in ("lib", "F", "method"):
            if d is None:
                raise Unsupported("only calls of eg./torch./F. functions and methods")
            raise Unsupported(f"'{d}' is not a function of the op registry")
        sig = _SIGS.get(rest)
        if (
            sig is None
            or rest in (_FUNCTIONAL_ONLY if kind == "lib" else ())
            or (kind == "method" and rest in _NOT_METHODS)
        ):
            raise Unsupported(f"'{d or rest}' is not an op of the registry")
        bound = self._bind(node, rest, sig, receiver)
        return self.make_op(sig[0], rest, bound, meta, values)

    def _special_method(self, node, meta):
        """x.requires_grad_() (on a tensor source) and eg.arange(n).reshape(shape): their node;
        None for any other method."""
        func = node.func
        if func.attr == "requires_grad_" and not node.args and not node.keywords:
            inner = self.imp.exprs.expr(func.value, meta)
            self.imp.mark_requires_grad(inner)
            return inner
        if func.attr == "reshape" and self.imp.modules.is_call(func.value, "lib", "arange"):
            return self.imp.sources.source(node, "arange", meta)
        return None

    def _bind(self, node, name, sig, receiver):
        """{argument name: value node} of a call of `name` by its signature; a method's
        receiver is its first argument."""
        _, positional, kwonly = sig
        args = list(node.args)
        if receiver is not None:
            if (
                name in _VARARGS
                and args
                and not isinstance(args[0], (ast.Tuple, ast.List))
                and (len(args) > 1 or isinstance(args[0], ast.Constant))
            ):
                args = [ast.Tuple(elts=args, ctx=ast.Load())]
            args = [receiver] + args
        if any(isinstance(a, ast.Starred) for a in args):
            raise Unsupported("*args are not supported")
        if len(args) > len(positional):
            raise Unsupported(f"{name} takes at most {len(positional)} positional arguments")
        bound = dict(zip(positional, args))
        for k in node.keywords:
            if k.arg is None:
                raise Unsupported("**kwargs are not supported")
            if k.arg in bound:
                raise Unsupported(f"{name} got '{k.arg}' twice")
            if k.arg not in positional and k.arg not in kwonly:
                raise Unsupported(f"{name} has no argument '{k.arg}' here")
            bound[k.arg] = k.value
        return bound

    # -- the op node ----------------------------------------------------------------------------
    def make_op(self, op, name, bound, meta, values):
        """The node of `op` called as `name` with arguments `bound` (value nodes by name)."""
        spec = registry.get(op)
        scalar = self._scalar_other(spec, bound)
        vals = self._param_values(spec, op, name, bound, values)
        params = dict(_CODE_DEFAULTS.get(op, {}))
        if scalar is not None:
            params["scalar"] = scalar
        inputs = self._inputs(spec, name, bound, scalar)
        for k, v in vals.items():
            if spec.param(k) is None:
                raise Unsupported(f"{name} has no argument '{k}' here")
            params[k] = v
        return self.imp.add_node(op, params, inputs, meta)

    def _scalar_other(self, spec, bound):
        """A number given as `other` of add/sub/mul/div/pow (eg.pow(x, 2)), taken out of
        bound; None where other is a tensor or not given."""
        if spec.extra.get("scalar_for") == "other" and "other" in bound:
            kind, v = self.imp.exprs.operand(bound["other"])
            if kind == "number":
                bound.pop("other")
                return v
        return None

    def _param_values(self, spec, op, name, bound, values):
        """The literal arguments that are not ports, taken out of bound, as param values."""
        ports = {p.name for p in spec.inputs}
        vals = {}
        for k in list(bound):
            if k not in ports:
                v = literal(bound.pop(k))
                vals[k] = list(v) if isinstance(v, tuple) else v
        if op in ("max", "min"):
            dim = vals.get("dim")
            if name in ("max", "min") and isinstance(dim, int) and not values:
                raise Unsupported(f"{name}(x, dim) gives (values, indices): add .values")
            if name in ("amax", "amin") and isinstance(dim, int):
                vals["dim"] = [dim]
        elif values:
            raise Unsupported(".values is supported after max/min along a dim")
        if "unbiased" in vals:
            if "correction" in vals:
                raise Unsupported("give correction or unbiased, not both")
            vals["correction"] = 1 if vals.pop("unbiased") else 0
        for req in _REQUIRED.get(op, ()):
            if req not in vals:
                raise Unsupported(f"{name} needs {req}=")
        return vals

    def _inputs(self, spec, name, bound, scalar):
        """[(port, node id)] of the op's ports, in the spec's order."""
        inputs = []
        for port in spec.inputs:
            a = bound.pop(port.name, None)
            if a is None:
                if not port.optional or (port.name == "other" and scalar is None):
                    raise Unsupported(f"{name} needs its '{port.name}' input")
                continue
            if port.variadic:
                if not isinstance(a, (ast.List, ast.Tuple)):
                    raise Unsupported(f"{name} takes a list of tensors")
                inputs += [(port.name, self.imp.exprs.operand_node(e)) for e in a.elts]
            else:
                inputs.append((port.name, self.imp.exprs.operand_node(a)))
        return inputs
