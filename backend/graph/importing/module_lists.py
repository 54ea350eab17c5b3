"""Module lists read from code:

    self.layers = nn.ModuleList([Block(4, 4), Block(4, 2)])
    self.layers = nn.ModuleList([Block(d) for _ in range(n)])     (or a generator: (... for ...))
    self.layers = nn.ModuleList(); self.layers.append(Block(d))   (in an unrolled loop too)
    x = self.layers[0](x)                                          constants.py rewrites the index
    for layer in self.layers: x = layer(x)                         loops.py unrolls it

Each element is declared under the variable `self.layers.<i>` as any module is (`Block(...)`
an instance of a class, `nn.Linear(...)` a layer ...), so each call of it is the node it would
be; the list itself makes no node. Its length is known (len(self.layers) is a constant).
nn.Sequential's arguments are read by the same `elements` (`nn.Sequential(*[...])`)."""

import ast
import copy

from .constants import NOT, element
from .problems import Unsupported

_HOW = (
    "write nn.ModuleList([<module>, ...]) or nn.ModuleList([<Module>(...) for _ in range(n)]), "
    "each element a module made there"
)


class ModuleLists:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def declare(self, name, call):
        """`name = nn.ModuleList(...)`."""
        if call.keywords or len(call.args) > 1:
            raise Unsupported(f"nn.ModuleList takes one list of modules: {_HOW}")
        self.imp.constants.lengths[name] = 0
        for node in elements(self.imp.constants, call.args[0]) if call.args else []:
            self.append(name, node)

    def append(self, name, node):
        """`name.append(<module>)`: the list's next element."""
        lengths = self.imp.constants.lengths
        key = element(name, lengths[name])
        if not self.imp.declare(key, node):
            raise Unsupported(f"a module list holds modules: {_HOW}")
        lengths[name] += 1

    def is_list(self, name):
        return name in self.imp.constants.lengths

    def steps(self, it):
        """The element variables a `for` over a module list walks (`self.layers`, a constant
        slice of it `self.layers[1:]`); None when `it` is no module list."""
        lengths = self.imp.constants.lengths
        sl = slice(None)
        if isinstance(it, ast.Subscript) and isinstance(it.slice, ast.Slice):
            bounds = [
                NOT if b is None else self.imp.constants.value(b)
                for b in (it.slice.lower, it.slice.upper, it.slice.step)
            ]
            if any(b is not NOT and type(b) is not int for b in bounds):
                raise Unsupported("slice a module list with constant whole numbers")
            sl = slice(*(None if b is NOT else b for b in bounds))
            it = it.value
        if not (isinstance(it, ast.Name) and it.id in lengths):
            return None
        return [element(it.id, i) for i in range(lengths[it.id])[sl]]


def elements(constants, node):
    """The module expressions that a list / tuple (with *starred lists), a comprehension or
    a generator over a constant range stands for, in order."""
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for e in node.elts:
            out += elements(constants, e.value) if isinstance(e, ast.Starred) else [e]
        return out
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _comprehension(constants, node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        raise Unsupported(
            "[<module>] * n is one module n times, sharing its parameters: write "
            "[<Module>(...) for _ in range(n)] for n modules"
        )
    raise Unsupported(_HOW)


def _comprehension(constants, node):
    if len(node.generators) != 1:
        raise Unsupported(f"one `for` in the list of modules: {_HOW}")
    gen = node.generators[0]
    if gen.is_async or not isinstance(gen.target, ast.Name):
        raise Unsupported(f"loop over one variable: {_HOW}")
    values = constants.value(gen.iter)
    if values is NOT or not isinstance(values, (list, tuple, range)):
        raise Unsupported(f"loop over a constant range or list: {_HOW}")
    out = []
    for v in values:
        step = constants.with_values({gen.target.id: v})
        keep = [step.value(_copy(c)) for c in gen.ifs]
        if any(k is NOT for k in keep):
            raise Unsupported("the `if` of a list of modules must be a constant condition")
        if all(keep):
            out.append(step.substituted(_copy(node.elt)))
    return out


def _copy(node):
    return copy.deepcopy(node)
