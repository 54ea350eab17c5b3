"""A captured fx graph (capture.py) as the nodes and edges of a graph document.

Each fx node becomes what the registry says it is: an input a `tensor` leaf holding the example
value, a parameter a `parameter` leaf holding its live value, a layer the registry has as one
node (`nn.Linear`, `nn.Conv2d`, ...) that layer op with the module's configuration and state,
and every call of a torch function, Tensor method or Python operator the op the registry reads
that call as (`registry.called`, `by_operator`), its arguments bound to the op's ports and
params by the op's CallForm, as the importer binds the calls of a script. Values that are not
tensors (`x.size(0)`, a shape tuple) are the run's numbers, written into the params that read
them. Anything the registry cannot say exactly is a CaptureError naming the module path."""

import inspect
import operator
import sys

import torch

from .. import registry
from ..ops.inplace import index_code
from .capture import CaptureError
from .layers import layer_node
from .leaves import tensor_params

# Python operators as fx records them -> the symbol the registry knows them by
_OPERATORS = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.matmul: "@",
    operator.pow: "**",
    operator.gt: ">",
    operator.lt: "<",
    operator.ge: ">=",
    operator.le: "<=",
    operator.eq: "==",
    operator.ne: "!=",
}
_UNARY = {operator.neg: "neg", operator.abs: "abs"}

# calls that hand back their input unchanged when they change neither dtype nor device
_SAME = {"contiguous", "clone", "float", "double", "long", "int", "bool", "to", "type_as", "cpu"}

# keyword arguments that change nothing while they hold these values
_NEUTRAL = {
    "inplace": False,
    "dtype": None,
    "out": None,
    "size_average": None,
    "reduce": None,
    "weight": None,
    "pos_weight": None,
    "ignore_index": -100,
    "label_smoothing": 0.0,
    "memory_format": None,
}


class Built:
    """A document's nodes and edges, and what each fx node stands for: ("node", id) for a
    tensor, ("tuple", [parts]) for a tuple of them, ("const", value) for anything else."""

    def __init__(self):
        self.nodes = []
        self.edges = []
        self.ids = set()
        self.meaning = {}
        self.stack = {}  # document node id -> the fx node's nn_module_stack (module grouping)
        self.values = {}  # document node id -> its value in the traced run

    def fresh(self, base):
        base = "".join(c if c.isalnum() or c in "_.-" else "_" for c in base)[:56] or "n"
        nid, i = base, 1
        while nid in self.ids:
            i += 1
            nid = f"{base}_{i}"
        self.ids.add(nid)
        return nid

    def add(self, base, op, params, inputs, stack, value, label=None):
        nid = self.fresh(base)
        node = {"id": nid, "op": op, "params": params}
        if label:
            node["label"] = label
        self.nodes.append(node)
        for port, src in inputs:
            self.edges.append(
                {
                    "id": f"e{len(self.edges) + 1}",
                    "source": src,
                    "sourcePort": "out",
                    "target": nid,
                    "targetPort": port,
                }
            )
        self.stack[nid] = stack
        self.values[nid] = value
        return nid


class NodeBuilder:
    def __init__(self, capture, layer_ops):
        self.cap = capture
        self.layer_ops = layer_ops  # nn class -> its layer OpSpec
        self.built = Built()
        self.notes = []  # what the document says of the run it cannot give back

    # -- the walk ------------------------------------------------------------------------------
    def build(self):
        live = _live_nodes(self.cap.graph)
        for n in self.cap.graph.nodes:
            if n.op == "output" or n not in live:
                continue
            self.where = _module_path(n)
            self.stack = n.meta.get("nn_module_stack") or {}
            self.value = self.cap.values.get(n)
            self.built.meaning[n] = self._node(n)
        out = next(n for n in self.cap.graph.nodes if n.op == "output")
        return self.built, self._mean(out.args[0])

    def _node(self, n):
        v = self.value
        if n.op == "placeholder":
            if not isinstance(v, torch.Tensor):
                return ("const", v)
            params = tensor_params(v, f"input {n.target!r}")
            params.update({"requires_grad": bool(v.requires_grad), "name": str(n.target)})
            return ("node", self._add(str(n.target), "tensor", params, []))
        if n.op == "get_attr":
            if not isinstance(v, torch.Tensor):
                return ("const", v)
            params = tensor_params(v, f"{self._at(n.target)}")
            if isinstance(v, torch.nn.Parameter) and v.requires_grad:
                params["name"] = n.target.replace(".", "_")
                return ("node", self._add(n.target, "parameter", params, []))
            params["name"] = n.target.replace(".", "_")
            return ("node", self._add(n.target, "tensor", params, []))
        if n.op == "call_module":
            return self._layer(n)
        if not isinstance(v, (torch.Tensor, tuple, list)) or (
            isinstance(v, (tuple, list)) and not any(isinstance(e, torch.Tensor) for e in v)
        ):
            return ("const", v)  # a size, a shape, a number: the run's value
        if n.op == "call_function":
            return self._function(n)
        if n.op == "call_method":
            return self._method(n)
        raise CaptureError(f"{self._where()}unexpected fx node {n.op}")

    # -- meanings of arguments -----------------------------------------------------------------
    def _mean(self, a):
        """An fx argument as ("node", id) / ("tuple", [...]) / ("const", value)."""
        import torch.fx as fx

        if isinstance(a, fx.Node):
            return self.built.meaning[a]
        if isinstance(a, (tuple, list)):
            parts = [self._mean(e) for e in a]
            if all(p[0] == "const" for p in parts):
                return ("const", type(a)(p[1] for p in parts))
            return ("tuple", parts)
        if isinstance(a, slice):  # x[..., :C] with C = x.size(-1): the run's number
            parts = [self._mean(v) for v in (a.start, a.stop, a.step)]
            if all(p[0] == "const" for p in parts):
                return ("const", slice(*(p[1] for p in parts)))
            return ("tensor-slice", a)
        if isinstance(a, torch.Tensor):
            raise CaptureError(f"{self._where()}a tensor made outside the traced code")
        return ("const", a)

    def _tensor_id(self, meaning, what):
        if meaning[0] == "node":
            return meaning[1]
        if meaning[0] == "const" and isinstance(meaning[1], (int, float, bool)):
            v = meaning[1]
            dtype = "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "float32"
            params = {"value": v, "dtype": dtype}
            return self._add("number", "tensor", params, [])
        raise CaptureError(f"{self._where()}{what} must be a tensor here")

    # -- calls ---------------------------------------------------------------------------------
    def _function(self, n):
        t = n.target
        if t is operator.getitem:
            return self._getitem(n)
        if t in _OPERATORS:
            spec = registry.by_operator(_OPERATORS[t])
            a, b = n.args
            return self._bind(spec, _OPERATORS[t], [a, b], {}, n)
        if t in _UNARY:
            return self._bind(registry.get(_UNARY[t]), _UNARY[t], list(n.args), {}, n)
        if t is getattr:  # x.T, x.mT: an attribute the registry reads as an op
            return self._attribute(n)
        name = getattr(t, "__name__", str(t))
        if name == "linear" and getattr(t, "__module__", "").endswith("functional"):
            return self._linear(n)
        if name in ("dropout",) and not _arg(n, 2, "training", True):
            return self._mean(n.args[0])
        spec = registry.called(name)
        if spec is None or spec.call is None:
            raise CaptureError(f"{self._where()}{_call_name(t)} is not an op of the graph registry")
        return self._bind(spec, name, list(n.args), dict(n.kwargs), n, func=t)

    def _method(self, n):
        name = n.target
        receiver = n.args[0]
        if name in _SAME:
            before, after = self.cap.values[receiver], self.value
            if (
                isinstance(before, torch.Tensor)
                and before.dtype == after.dtype
                and before.device == after.device
            ):
                return self._mean(receiver)
            raise CaptureError(
                f"{self._where()}.{name}() changes the dtype from "
                f"{str(before.dtype).removeprefix('torch.')} to "
                f"{str(after.dtype).removeprefix('torch.')}, which the graph has no op for"
            )
        spec = registry.called(name)
        if spec is None or spec.call is None or not spec.call.method:
            raise CaptureError(f"{self._where()}Tensor.{name} is not an op of the graph registry")
        args = list(n.args)
        form = spec.call
        rest = args[1:]
        if form.varargs and rest and not isinstance(self._value(rest[0]), (tuple, list)):
            args = [receiver, tuple(rest)]  # x.view(2, -1): the loose numbers are the shape
        return self._bind(spec, name, args, dict(n.kwargs), n)

    def _attribute(self, n):
        base, attr = n.args[0], n.args[1]
        spec = registry.by_attribute(attr)
        if spec is None:
            raise CaptureError(f"{self._where()}Tensor.{attr} is not an op of the graph registry")
        params = dict(spec.call.defaults)
        if spec.call.read is not None:
            params.update(spec.call.read(attr, {}, False))
        src = self._tensor_id(self._mean(base), "input")
        return ("node", self._add(spec.name, spec.name, params, [("input", src)]))

    def _value(self, a):
        import torch.fx as fx

        return self.cap.values.get(a) if isinstance(a, fx.Node) else a

    def _getitem(self, n):
        base, index = n.args
        meaning = self._mean(base)
        key = self._mean(index)
        if meaning[0] == "tuple":
            if key[0] != "const" or not isinstance(key[1], int):
                raise CaptureError(f"{self._where()}a tuple indexed by something not a number")
            part = meaning[1][key[1]]
            if part[0] == "unused":
                raise CaptureError(f"{self._where()}{part[1]}")
            return part
        if key[0] != "const" or not _basic_index(key[1]):
            raise CaptureError(
                f"{self._where()}indexing with a tensor is not an op of the graph registry "
                "(basic indexing is: ints, slices, ..., None)"
            )
        src = self._tensor_id(meaning, "the indexed value")
        params = {"index": index_code(key[1])}
        return ("node", self._add("getitem", "getitem", params, [("input", src)]))

    def _linear(self, n):
        """F.linear(x, w, b), as PyTorch defines it: x @ w.T + b."""
        x, w = n.args[0], _arg(n, 1, "weight", None)
        b = _arg(n, 2, "bias", None)
        wt = self._add(
            f"{n.name}_wT",
            "transpose",
            {"dim0": 0, "dim1": 1},
            [("input", self._tensor_id(self._mean(w), "weight"))],
        )
        xs = self._tensor_id(self._mean(x), "input")
        mm = self._add(f"{n.name}_mm", "matmul", {}, [("input", xs), ("other", wt)])
        if b is None:
            return ("node", mm)
        bid = self._tensor_id(self._mean(b), "bias")
        return ("node", self._add(n.name, "add", {}, [("input", mm), ("other", bid)]))

    def _bind(self, spec, name, args, kwargs, n, func=None):
        """The node of `spec` called as `name` with fx arguments `args`, `kwargs`."""
        form = spec.call
        positional = form.args
        if len(args) > len(positional):
            raise CaptureError(
                f"{self._where()}{name} was called with {len(args)} positional arguments; "
                f"the graph's {spec.name} takes {len(positional)}"
            )
        bound = dict(zip(positional, args))
        ports = {p.name for p in spec.inputs}
        defaults = _defaults(func)
        for k, v in kwargs.items():
            if k in positional or k in form.kwonly:
                bound[k] = v
                continue
            if k == "inplace" and v and len(n.args[0].users) > 1:
                raise CaptureError(
                    f"{self._where()}{name}(inplace=True) writes into a tensor that is used "
                    "again; the graph has no in-place form of it"
                )
            neutral = _NEUTRAL.get(k, defaults.get(k, inspect.Parameter.empty))
            # (`_stacklevel` and other private arguments say where a warning points, no more)
            if k == "inplace" or k.startswith("_") or _same(self._value(v), neutral):
                continue
            raise CaptureError(
                f"{self._where()}{name}({k}={self._value(v)!r}) is not supported by the "
                f"graph's {spec.name}"
            )
        params = dict(form.defaults)
        inputs = []
        scalar_for = spec.extra.get("scalar_for")
        for port in spec.inputs:
            a = bound.pop(port.name, None)
            if a is None:
                if port.optional:
                    continue
                raise CaptureError(f"{self._where()}{name} was called without '{port.name}'")
            meaning = self._mean(a)
            if port.variadic:
                parts = meaning[1] if meaning[0] == "tuple" else [meaning]
                inputs += [(port.name, self._tensor_id(p, port.name)) for p in parts]
                continue
            if (
                port.name == scalar_for
                and meaning[0] == "const"
                and isinstance(meaning[1], (int, float))
                and not isinstance(meaning[1], bool)
            ):
                params["scalar"] = float(meaning[1])
                continue
            # a number anywhere else (2 - x: the first operand) is a 0-d leaf of its own
            inputs.append((port.name, self._tensor_id(meaning, port.name)))
        vals = {}
        for k, a in bound.items():
            if k in ports:
                continue
            meaning = self._mean(a)
            if meaning[0] != "const":
                raise CaptureError(
                    f"{self._where()}{name}'s {k} is a tensor; the graph's {spec.name} takes a "
                    "number there"
                )
            v = meaning[1]
            if isinstance(v, torch.Size):
                v = tuple(v)
            if k == "unbiased" or spec.param(k) is not None:
                vals[k] = _square(spec.param(k), list(v) if isinstance(v, tuple) else v)
            elif v is not None and not _same(v, defaults.get(k, inspect.Parameter.empty)):
                raise CaptureError(
                    f"{self._where()}{name}({k}={v!r}) is not supported by the graph's {spec.name}"
                )
        if form.read is not None:
            try:
                vals = form.read(name, vals, False)
            except Exception as exc:
                raise CaptureError(f"{self._where()}{name}: {exc}") from None
        for k, v in vals.items():
            if spec.param(k) is None:
                raise CaptureError(f"{self._where()}{name} has no argument '{k}' in the graph")
            params[k] = v
        return ("node", self._add(spec.name, spec.name, params, inputs))

    # -- layers --------------------------------------------------------------------------------
    def _layer(self, n):
        module = self.cap.root.get_submodule(n.target)
        spec = self.layer_ops.get(type(module))
        if spec is None:
            raise CaptureError(f"{self._at(n.target)}: {type(module).__name__} has no layer op")
        inputs, parts = layer_node.inputs(self, n, module, spec)
        params = layer_node.params(self, n, module, spec)
        nid = self._add(n.target, spec.name, params, inputs)
        if parts is None:
            return ("node", nid)
        return ("tuple", [("node", nid), *parts])

    # -- helpers -------------------------------------------------------------------------------
    def _add(self, base, op, params, inputs):
        return self.built.add(base, op, params, inputs, self.stack, self.value)

    def _where(self):
        return f"{self.where}: " if self.where else "model: "

    def _at(self, target):
        return f"model.{target}"


def _call_name(t):
    mod = getattr(t, "__module__", "") or ""
    name = getattr(t, "__name__", repr(t))
    if mod.startswith("torch.nn.functional") or mod == "torch.nn.functional":
        return f"F.{name}"
    if mod.startswith("torch"):
        return f"torch.{name}"
    return f"{mod}.{name}" if mod else name


def _module_path(n):
    """`model.blocks.3.attn` of the module a call was made in; a PyTorch module that the graph
    has no node for is named with its class (`model.rnn (nn.LSTM)`), the part that is missing."""
    stack = n.meta.get("nn_module_stack")
    if not stack:
        return "model"
    path, cls = next(reversed(stack.values()))
    where = f"model.{path}" if path else "model"
    family = cls.__module__ or ""
    if family.startswith("torch.nn.modules.") and family.rsplit(".", 1)[1] not in _WALKED:
        where += f" (nn.{cls.__name__}, which has no node in the graph)"
    return where


# PyTorch's module families whose forward is calls the graph has (containers, activations,
# losses, ...): walked through, so an unknown call inside them is that call's problem
_WALKED = {"container", "activation", "loss", "flatten", "linear", "pooling", "dropout"}


def _live_nodes(graph):
    """The fx nodes the output depends on (a condition read only by Python's `if` is not)."""
    out = next(n for n in graph.nodes if n.op == "output")
    live, todo = set(), [out]
    while todo:
        n = todo.pop()
        if n in live:
            continue
        live.add(n)
        todo.extend(n.all_input_nodes)
    return live


def _arg(n, i, name, default):
    if len(n.args) > i:
        return n.args[i]
    return n.kwargs.get(name, default)


def _basic_index(key):
    parts = key if isinstance(key, tuple) else (key,)
    for k in parts:
        if k is None or k is Ellipsis or (isinstance(k, int) and not isinstance(k, bool)):
            continue
        if isinstance(k, slice) and all(
            v is None or (isinstance(v, int) and not isinstance(v, bool))
            for v in (k.start, k.stop, k.step)
        ):
            continue
        return False
    return True


def _defaults(func):
    """The defaults of `func`'s keyword arguments, where Python can tell them."""
    if func is None:
        return {}
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return {}
    if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        # F.max_pool2d and its kind dispatch on a flag to `_max_pool2d`, which has the signature
        inner = getattr(sys.modules.get(func.__module__), "_" + func.__name__, None)
        return _defaults(inner) if inner is not None and inner is not func else {}
    return {k: p.default for k, p in sig.parameters.items() if p.default is not p.empty}


def _same(a, b):
    if b is inspect.Parameter.empty:
        return False
    try:
        return bool(a == b) and type(a) is type(b) or (a is None and b is None)
    except Exception:
        return False


def _square(param, v):
    whole = isinstance(v, list) and v and all(type(x) is int for x in v)
    if param is not None and param.type == "int" and whole and len(set(v)) == 1:
        return v[0]
    return v
