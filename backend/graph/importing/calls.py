"""Calls read from code: a layer (`fc(x)`), a tensor source (sources.py), or a function or
method of the op registry (eg.exp(y), F.relu(y), y.sum(dim=0), x.reshape(2, 3), torch.max(x,
dim=1).values), bound to the op's ports and params by the op's call form (registry.CallForm:
its signature, aliases, forms, required and varargs params)."""

import ast

import engine

from .. import registry
from .constants import NOT
from .import_lines import DTYPES
from .problems import Unsupported
from .python_values import MathModule
from .random_draws import MAX_VALUES
from .sources import SOURCE_FUNCTIONS
from .syntax import dotted, literal

# How `kind` (modules.ModuleNames.func_kind: eg./torch., F., or a method) names a call form
_FORM = {"lib": "function", "F": "functional", "method": "method"}


def on_device(call):
    """Whether `call` is x.to(<device>) / x.cpu(): the same values wherever they are (the
    device a constant string once constants.py has written it in: "cpu", "cuda:0")."""
    if call.func.attr == "cpu":
        return not call.args and not call.keywords
    arg = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if arg is None:
        kw = {k.arg: k.value for k in call.keywords}
        arg = kw.get("device") if len(kw) == 1 else None
    return (
        isinstance(arg, ast.Constant)
        and isinstance(arg.value, str)
        and arg.value.split(":")[0] in ("cpu", "cuda", "mps", "xpu")
    )


def _sets_true(call):
    """x.requires_grad_() / x.requires_grad_(True) / requires_grad=True."""
    return requires_grad_flag(call) is True


def requires_grad_flag(call):
    """The flag of x.requires_grad_(<flag>) (True where none is given); None where it is not
    written as True or False."""
    given = [*call.args, *(k.value for k in call.keywords if k.arg == "requires_grad")]
    if len(given) != len(call.args) + len(call.keywords) or len(given) > 1:
        return None
    if not given:
        return True
    flag = given[0]
    return flag.value if isinstance(flag, ast.Constant) and isinstance(flag.value, bool) else None


class CallReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def call(self, node, meta, values=False):
        """The node of a call; `values`: the call is read as `<call>.values`."""
        imp, func = self.imp, node.func
        if isinstance(func, ast.Name) and not values:
            # a layer's node inside an expression is named after the layer (self.fc1: fc1)
            named = meta or func.id.removeprefix("self.")
            if func.id in imp.layers.declared:
                return imp.layers.call(func.id, node, named)  # h = fc(x)
            if func.id in imp.nn.declared:
                return imp.nn.call(func.id, node, named)  # h = act(x), loss_fn(p, t)
            if func.id in imp.classes.instances:
                return imp.classes.call(func.id, node, named)  # y = net(x): a module node
        if isinstance(func, ast.Call) and imp.modules.call_kind(func)[0] == "nn" and not values:
            return self._made_and_called(node, meta)  # nn.CrossEntropyLoss()(out, y)
        d = dotted(func)
        kind, rest = imp.modules.func_kind(d)
        if kind == "lib" and rest in SOURCE_FUNCTIONS:
            return imp.sources.source(node, rest, meta)
        if kind == "lib" and rest in ("zeros_like", "ones_like"):
            return self._like(node, rest, meta)
        if kind == "lib" and rest == "linspace":
            return self._linspace(node, meta)
        receiver = None
        if kind is None and isinstance(func, ast.Attribute) and self._module_name(func.value):
            raise Unsupported(self._not_a_tensor_function(d, func))
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
        if rest in ("max", "min") and self._of_two_tensors(node, receiver):
            rest = {"max": "maximum", "min": "minimum"}[rest]  # torch.max(a, b): elementwise
        spec = registry.called(rest)
        if spec is None or _FORM[kind] not in spec.call.forms:
            raise Unsupported(f"'{d or rest}' is not an op of the registry")
        bound = self._bind(node, rest, spec.call, receiver)
        return self.make_op(spec.name, rest, bound, meta, values)

    def _cast_to(self, call):
        """The dtype of x.to(<dtype>) / x.type(<dtype>) (torch.float32, a constant holding
        one); None where the argument names no dtype."""
        arg = call.args[0] if len(call.args) == 1 and not call.keywords else None
        if arg is None:
            kw = {k.arg: k.value for k in call.keywords}
            arg = kw.get("dtype") if len(kw) == 1 and not call.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value if arg.value in DTYPES else None
        try:
            return self.imp.modules.dtype(arg) if arg is not None else None
        except Unsupported:
            return None

    def _made_and_called(self, node, meta):
        """`nn.<Layer>(...)(x)`: the layer declared under a name no variable has, called."""
        imp, made = self.imp, node.func
        cls = imp.modules.call_kind(made)[1]
        name = f"{cls}@{made.lineno}:{made.col_offset}"
        if cls == "Linear":
            imp.layers.declare(name, made)
            return imp.layers.call(name, node, meta or "linear")
        imp.nn.declare(name, made, cls)
        return imp.nn.call(name, node, meta or cls.lower())

    def _of_two_tensors(self, node, receiver):
        """Whether a max / min call compares two tensors (torch.max(a, b), a.max(b),
        other=b): PyTorch's elementwise maximum / minimum, not a reduction along a dim."""
        args = list(node.args) if receiver is None else [receiver, *node.args]
        other = args[1] if len(args) == 2 else None
        for k in node.keywords:
            if k.arg == "other":
                other = k.value
        return other is not None and self.imp.constants.value(other) is NOT

    def _module_name(self, node):
        """Whether `node` names an imported module the op registry has no functions of
        (math, random, ...), or a Python object a constant holds (python_values.py)."""
        name = dotted(node)
        if name is None or name in self.imp.env:
            return False
        head = name.partition(".")[0]
        return head in self.imp.modules.mods["other"] or self.imp.constants.lookup(head) is not NOT

    def _like(self, node, fn, meta):
        """torch.zeros_like(x) / ones_like(x): the registry's op of that name (x's shape at run
        time); with dtype= or requires_grad=, a zeros / ones source of x's shape worked out
        while reading (shapes.py), a leaf of its own. No path back to x, as in PyTorch."""
        kwargs = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or None in kwargs or set(kwargs) - {"dtype", "requires_grad"}:
            raise Unsupported(f"write torch.{fn}(x), with dtype= or requires_grad= if needed")
        if not kwargs:  # the registry's op: the shape read when it runs, as PyTorch reads it
            return self.make_op(fn, fn, {"input": node.args[0]}, meta, False)
        t = self.imp.shapes.stand_in(self.imp.exprs.operand_node(node.args[0]))
        if t is None:
            raise Unsupported(
                f"{fn} of a tensor whose shape is not known here (an output of a module): "
                f"write torch.{fn.removesuffix('_like')}(<sizes>)"
            )
        dtype = self.imp.modules.dtype_in(kwargs) or str(t.dtype).removeprefix("engine.")
        params = {"init": fn.removesuffix("_like"), "shape": list(t.shape), "dtype": dtype}
        rg = kwargs.get("requires_grad")
        if rg is not None:
            params["requires_grad"] = literal(rg)
        return self.imp.add_node("tensor", params, [], meta)

    def _linspace(self, node, meta):
        """torch.linspace(start, end, steps): a tensor source of its values, worked out with
        the engine's linspace (today within an ulp of PyTorch's, not always equal to it)."""
        names = ("start", "end", "steps")
        given = dict(zip(names, node.args))
        known = (*names, "dtype", "requires_grad", "device")  # (device=: the document's own)
        extra = [k.arg for k in node.keywords if k.arg not in known]
        if len(node.args) > 3 or extra or any(k.arg is None for k in node.keywords):
            raise Unsupported("write torch.linspace(start, end, steps), dtype= if needed")
        kwargs = {k.arg: k.value for k in node.keywords if k.arg != "device"}
        given.update({k: v for k, v in kwargs.items() if k in names})
        values = {k: self.imp.constants.value(v) for k, v in given.items()}
        ok = set(values) == set(names) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()
        )
        if not ok or type(values["steps"]) is not int or not 0 <= values["steps"] <= MAX_VALUES:
            raise Unsupported(
                f"torch.linspace takes constant numbers start, end and at most {MAX_VALUES:,} steps"
            )
        dtype = self.imp.modules.dtype_in(kwargs) or "float32"
        if dtype not in ("float32", "float64"):
            raise Unsupported("torch.linspace is read for float32 and float64")
        lib = getattr(engine, dtype)
        with engine.no_grad():
            t = engine.linspace(values["start"], values["end"], values["steps"], dtype=lib)
        params = {"value": t.tolist(), "dtype": dtype}
        rg = kwargs.get("requires_grad")
        if rg is not None:
            params["requires_grad"] = literal(rg)
        return self.imp.add_node("tensor", params, [], meta)

    def _not_a_tensor_function(self, d, func):
        if isinstance(self.imp.constants.lookup(dotted(func.value)), MathModule):
            return (
                f"'{d}' is read on constant numbers only (math.sqrt(64)); of a tensor, write "
                f"torch.{func.attr}(...)"
            )
        return f"'{d}' is not read: the importer reads functions of torch, nn, F and math"

    def _special_method(self, node, meta):
        """x.requires_grad_() (a leaf: importer.mark_requires_grad), x.item() (a detached x:
        a number has no gradient) and eg.arange(n).reshape(shape): their node; None for any
        other method."""
        func = node.func
        flag = requires_grad_flag(node) if func.attr == "requires_grad_" else None
        if flag is not None:  # (False: a leaf that stops requiring grad)
            inner = self.imp.exprs.expr(func.value, meta)
            self.imp.mark_requires_grad(inner, self.imp.current_var, flag=flag)
            return inner
        dtype = self._cast_to(node) if func.attr in ("to", "type") else None
        if dtype is not None:  # x.to(torch.float64), x.type(torch.float32)
            bound = {"input": func.value, "dtype": ast.Constant(dtype)}
            return self.make_op("to_dtype", func.attr, bound, meta, False)
        if func.attr in ("to", "cpu") and on_device(node):
            return self.imp.exprs.expr(func.value, meta)  # the document runs on its own device
        if func.attr == "contiguous" and not node.args and not node.keywords:
            # the same values in another memory layout: the same node for the graph
            return self.imp.exprs.expr(func.value, meta)
        if func.attr == "item" and not node.args and not node.keywords:
            # a Python number: the value, with no path back for gradients
            return self.make_op("detach", "item", {"input": func.value}, meta, False)
        if func.attr == "reshape" and self.imp.modules.is_call(func.value, "lib", "arange"):
            return self.imp.sources.source(node, "arange", meta)
        return None

    def _bind(self, node, name, form, receiver):
        """{argument name: value node} of a call of `name` by its signature (`form`, the op's
        CallForm); a method's receiver is its first argument."""
        positional, kwonly = form.args, form.kwonly
        args = list(node.args)
        if receiver is not None:
            if (
                form.varargs
                and args
                and not isinstance(args[0], (ast.Tuple, ast.List))
                and (len(args) > 1 or _number_literal(args[0]))
            ):  # x.view(2, 3), x.reshape(-1): the sizes as one tuple
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
            if k.arg == "keepdims" and "keepdim" in (*positional, *kwonly):
                k = ast.keyword(arg="keepdim", value=k.value)  # PyTorch's numpy-style alias
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
        vals = self._param_values(spec, name, bound, values)
        params = dict(spec.call.defaults)
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

    def _param_values(self, spec, name, bound, values):
        """The literal arguments that are not ports, taken out of bound, as param values."""
        form = spec.call
        ports = {p.name for p in spec.inputs}
        vals = {}
        for k in list(bound):
            if k not in ports:
                v = literal(bound.pop(k))
                vals[k] = _square(spec.param(k), list(v) if isinstance(v, tuple) else v)
        if values and not form.values:
            raise Unsupported(".values is supported after max/min along a dim")
        if form.read is not None:
            vals = form.read(name, vals, values)  # the op's own reading (var's unbiased=)
        for req in form.required:
            if req not in vals:
                raise Unsupported(f"{name} needs {req}=")
        return vals

    def _inputs(self, spec, name, bound, scalar):
        """[(port, node id)] of the op's ports, in the spec's order."""
        inputs = []
        for port in spec.inputs:
            a = bound.pop(port.name, None)
            if isinstance(a, ast.Constant) and a.value is None and port.optional:
                a = None  # bias=None: the port left unconnected
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


def _square(param, v):
    """(2, 2) for a whole-number param (a pool's kernel_size): the one number PyTorch repeats
    for each dim, as the op takes it; other values as written."""
    whole = isinstance(v, list) and v and all(type(x) is int for x in v)
    if param is not None and param.type == "int" and whole and len(set(v)) == 1:
        return v[0]
    return v


def _number_literal(node):
    """A number written as a literal, a negative one too (-1 is a minus on the number)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant)
