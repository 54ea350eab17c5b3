"""Module lists read from code:

    self.layers = nn.ModuleList([Block(4, 4), Block(4, 2)])
    self.layers = nn.ModuleList([Block(d) for _ in range(n)])     (or a generator: (... for ...))
    self.layers = nn.ModuleList(); self.layers.append(Block(d))   (in an unrolled loop too)
    x = self.layers[0](x)                                          constants.py rewrites the index
    for layer in self.layers: x = layer(x)                         loops.py unrolls it

Each element is declared under the variable `self.layers.<i>` as any module is (`Block(...)`
an instance of a class, `nn.Linear(...)` a layer ...), so each call of it is the node it would
be; the list itself makes no node. Its length is known (len(self.layers) is a constant).
nn.Sequential's arguments are read by the same `elements` (`nn.Sequential(*[...])`).

    layers = [nn.Linear(a, b)]                                     a Python list of modules
    layers.append(nn.ReLU()); layers += [nn.Tanh()]                (python_values.ModuleExprs):
    self.model = nn.Sequential(*layers, nn.Linear(b, 1))           made where a Sequential or
                                                                   a ModuleList takes it

Python makes the list's modules when the list is built and the Sequential holds those same
objects; made where the Sequential takes them instead, they are the same layers, so a list
is taken once (a second use, which would share its modules, is refused there), and the
constants an element reads are written in when it is put in the list."""

import ast
import copy

from .constants import NOT, element
from .problems import Unsupported
from .python_values import ModuleExprs

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

    def read_value(self, stmt):
        """Whether `stmt` builds or grows a Python list of modules (then read): `name = [<module
        constructors>]`, `name.append(<module>)`, `name.extend([...])`, `name += [...]`."""
        imp, c = self.imp, self.imp.constants
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            exprs = self._module_exprs(stmt.value)
            if isinstance(t, ast.Name) and exprs:
                c.values[t.id] = ModuleExprs(exprs, stmt.lineno)
                imp.env.pop(t.id, None)
                return True
            return False
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            held, more = c.lookup(name), self._module_exprs(stmt.value)
            if held == [] and more and isinstance(stmt.op, ast.Add):  # layers = [] first
                held = c.values[name] = ModuleExprs([], stmt.lineno)
            if isinstance(held, ModuleExprs) and isinstance(stmt.op, ast.Add):
                return self._grow(name, held, more)
            return False
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        func = getattr(call, "func", None)
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr in ("append", "extend")
            and len(call.args) == 1
            and not call.keywords
        ):
            return False
        name, arg = func.value.id, call.args[0]
        held = c.lookup(name)
        if func.attr == "append":
            arg = ast.List(elts=[arg], ctx=ast.Load())
        more = self._module_exprs(arg)
        if held == [] and more:  # layers = [] first: a list of modules from its first append
            held = c.values[name] = ModuleExprs([], stmt.lineno)
        if not isinstance(held, ModuleExprs):
            return False
        return self._grow(name, held, more)

    def _grow(self, name, held, more):
        if held.used:
            raise Unsupported(f"{name} is changed after a Sequential took its modules")
        if not more:
            raise Unsupported(f"{name} is a list of modules: add modules made there to it")
        held.exprs += more
        return True

    def _module_exprs(self, node):
        """The module constructors a list (or tuple) written out makes, with the constants they
        read written in (`[*layers, nn.ReLU()]`, `layers + [...]` take layers' own); None
        where it is not one of modules only."""
        taken = []
        out = self._exprs_of(node, taken)
        if out is not None:
            for held, where in taken:
                _taken(held, where)
        return out

    def _exprs_of(self, node, taken):
        """_module_exprs' list, the lists of modules it takes put in `taken`."""
        held = self.imp.constants.value(node) if isinstance(node, ast.Name) else NOT
        if isinstance(held, ModuleExprs):
            taken.append((held, node))
            return list(held.exprs)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._exprs_of(node.left, taken), self._exprs_of(node.right, taken)
            return left + right if left and right else None
        if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
            return None
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                more = self._exprs_of(e.value, taken)
                if not more:
                    return None
                out += more
            elif self._makes_module(e):
                out.append(self.imp.constants.substituted(copy.deepcopy(e)))
            else:
                return None
        return out

    def _makes_module(self, node):
        kind, rest = self.imp.modules.call_kind(node)
        if kind == "nn":
            return rest[:1].isupper() and rest not in ("Parameter", "ParameterList")
        return self.imp.classes.is_class_call(node)

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
    held = constants.value(node) if isinstance(node, ast.Name) else NOT
    if isinstance(held, ModuleExprs):  # a Python list of modules, made here
        return _taken(held, node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # layers + [nn.ReLU()]
        return elements(constants, node.left) + elements(constants, node.right)
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


def _taken(held, node):
    """The expressions of a list of modules, taken by a Sequential or another list (once)."""
    if held.used:
        raise Unsupported(
            f"the modules of {ast.unparse(node)} (line {held.line}) are taken a second time: "
            "PyTorch would share them between the two, which the importer does not read; "
            "make a list for each"
        )
    held.used = True
    return [copy.deepcopy(e) for e in held.exprs]
