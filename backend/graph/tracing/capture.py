"""A live PyTorch callable captured as a torch.fx graph with a real value at every node.

torch.fx's symbolic tracer records the calls `fn` makes, but refuses Python control flow that
depends on a tensor (`if x.sum() > 0:`) and leaves every shape symbolic. Here the tracer runs
each recorded call on the example inputs as it records it, so every fx node carries the value
it had in that run: a branch or loop that reads a tensor goes the way the run went (and is
listed in `Capture.decisions` with its source line, as the document says), `len(x)` and
`x.size(0)` are the run's numbers, and every tensor node knows its shape and dtype.

The layers the registry has as one node (`nn.Linear`, `nn.Conv2d`, ...: `leaf_classes`) are
fx leaf modules; every other module is traced through, and fx's `nn_module_stack` says which
module each call was made in."""

import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.fx as fx
from torch.fx._symbolic_trace import _maybe_revert_all_patches
from torch.fx.node import map_aggregate

_TORCH_DIR = str(Path(torch.__file__).resolve().parent)
_HERE = str(Path(__file__).resolve().parent)


class CaptureError(Exception):
    """`fn` could not be captured; the message names the module path where that is known."""


@dataclass
class Capture:
    graph: fx.Graph
    root: torch.nn.Module  # fn itself, or a module holding it (its parameters by name)
    values: dict  # fx node -> the value it had in the run
    decisions: list = field(default_factory=list)  # (where, what) for control flow taken
    output: object = None  # fn's output in the run


class _Holder(torch.nn.Module):
    """A plain callable as a module, so that fx can trace it and the modules it closes over
    (`lambda x, y: F.cross_entropy(model(x), y)`) keep their names: each module found in its
    closure or defaults is registered under the name it has there."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn
        for name, obj in _closure_modules(fn):
            self.add_module(name, obj)

    def forward(self, *args):
        return self._fn(*args)


def _closure_modules(fn):
    code = getattr(fn, "__code__", None)
    found = []
    cells = getattr(fn, "__closure__", None) or ()
    if code is not None:
        for name, cell in zip(code.co_freevars, cells):
            try:
                obj = cell.cell_contents
            except ValueError:
                continue
            if isinstance(obj, torch.nn.Module):
                found.append((name, obj))
        globs = getattr(fn, "__globals__", {})
        for name in code.co_names:
            obj = globs.get(name)
            if isinstance(obj, torch.nn.Module) and name not in dict(found):
                found.append((name, obj))
    return found


def _argument_names(fn, count):
    """The names of `fn`'s first `count` positional arguments (`input_<i>` past a `*args`)."""
    import inspect

    names = []
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    names = names[:count]
    while len(names) < count:
        names.append(f"input_{len(names)}")
    return names


def _user_frame():
    """`file:line` of the innermost frame of the user's code (outside torch and this package)."""
    for frame in reversed(traceback.extract_stack()):
        f = str(Path(frame.filename).resolve()) if frame.filename[:1] != "<" else frame.filename
        if not f.startswith(_TORCH_DIR) and not f.startswith(_HERE):
            line = (frame.line or "").strip()
            return f"{Path(frame.filename).name}:{frame.lineno}", line
    return "?", ""


class _ValueProxy(fx.Proxy):
    """A proxy that can answer what Python asks of its value: len(), int(), an index."""

    def __len__(self):
        return len(self.tracer.value_of(self))

    def __index__(self):
        return int(self.tracer.value_of(self))

    def __int__(self):
        return int(self.tracer.value_of(self))

    def __float__(self):
        return float(self.tracer.value_of(self))


class _ConcreteTracer(fx.Tracer):
    def __init__(self, examples, leaf_classes):
        super().__init__(param_shapes_constant=True)
        self.examples = list(examples)
        self.leaf_classes = leaf_classes
        self.values = {}
        self.decisions = []

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """A plain callable traced through its holder has placeholders named after its own
        arguments (fx would see the holder's `*args`)."""
        if not isinstance(self.root, _Holder):
            return super().create_args_for_root(root_fn, is_module, concrete_args)
        names = _argument_names(self.root._fn, len(self.examples))
        return root_fn, [self.root, *(self.create_proxy("placeholder", n, (), {}) for n in names)]

    # -- which modules stay whole -----------------------------------------------------------------
    def is_leaf_module(self, m, qualname):
        return type(m) in self.leaf_classes

    # -- every node gets its value ---------------------------------------------------------------
    def proxy(self, node):
        return _ValueProxy(node, self)

    def value_of(self, proxy):
        return self.values[proxy.node]

    def _real(self, a):
        def real(v):
            if isinstance(v, fx.Proxy):
                return self.values[v.node]
            return self.values[v] if isinstance(v, fx.Node) else v

        return map_aggregate(a, real)

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Every node, as fx makes it (through a proxy, or directly: a tensor constant's
        get_attr), is run on the values of its arguments as it is made."""
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if kind == "output" or node in self.values:
            return node
        try:
            value = self._evaluate(kind, target, self._real(args), self._real(kwargs))
        except CaptureError:
            raise
        except Exception as exc:
            raise CaptureError(f"{_where(self.module_stack)}{type(exc).__name__}: {exc}") from exc
        self.values[node] = value
        return node

    def _evaluate(self, kind, target, args, kwargs):
        if kind == "placeholder":
            if not self.examples:
                raise CaptureError(f"no example input for argument {target!r}")
            return self.examples.pop(0)
        with torch.no_grad():
            if kind == "call_function":
                return target(*args, **kwargs)
            if kind == "call_method":
                return getattr(args[0], target)(*args[1:], **kwargs)
        # fx's patches of nn.Module (calls and attribute reads made into proxies) are lifted
        # while a module or an attribute of one is read for real; each lift costs a
        # class-attribute write and a type-cache flush, so only these two kinds pay it
        with _maybe_revert_all_patches(), torch.no_grad():
            if kind == "get_attr":
                obj = self.root
                for part in target.split("."):
                    obj = getattr(obj, part)
                return obj
            if kind == "call_module":
                return self.root.get_submodule(target)(*args, **kwargs)
        raise CaptureError(f"unexpected fx node kind {kind!r}")

    # -- control flow goes the way the run went ----------------------------------------------------
    def to_bool(self, obj):
        value = bool(self.value_of(obj))
        where, line = _user_frame()
        self.decisions.append((where, f"{line} was {value} in the traced run"))
        return value

    def iter(self, obj):
        value = self.value_of(obj)
        where, line = _user_frame()
        self.decisions.append((where, f"{line} iterated {len(value)} times in the traced run"))
        return iter([obj[i] for i in range(len(value))])

    def keys(self, obj):
        return self.value_of(obj).keys()


def _where(stack):
    """`model.blocks.3.attn: ` for the innermost module being traced, or ``."""
    if not stack:
        return ""
    path = next(reversed(stack.values()))[0]
    return f"model.{path}: " if path else "model: "


def capture(fn, examples, leaf_classes):
    """Capture `fn` (an nn.Module or a callable taking tensors) run on `examples`."""
    root = fn if isinstance(fn, torch.nn.Module) else _Holder(fn)
    tracer = _ConcreteTracer(examples, leaf_classes)
    # the run must leave the model as it found it: batch norm in train() moves its running
    # statistics, which the document must hold as they were before the run
    buffers = [(b, b.detach().clone()) for b in root.buffers()]
    try:
        graph = tracer.trace(root)
    except CaptureError:
        raise
    except Exception as exc:
        raise CaptureError(f"{_where(tracer.module_stack)}{type(exc).__name__}: {exc}") from exc
    finally:
        with torch.no_grad():
            for b, before in buffers:
                b.copy_(before)
    out = [n for n in graph.nodes if n.op == "output"][0]
    output = map_aggregate(out.args[0], lambda n: tracer.values[n] if isinstance(n, fx.Node) else n)
    return Capture(graph, root, tracer.values, tracer.decisions, output)
