"""Plain Python values inside an nn.Module class, worked out while reading (never run):

    def __init__(self, d_in, d_out, act=True):      constructor arguments, from the call
        hidden = d_out * 2                            locals of numbers, strings, tuples
        self.scale = 0.5                              self.<name> of one (seen by forward too)
        self.fc = nn.Linear(d_in, hidden)             substituted where they are read
        if act: ...                                   an `if` on them picks its branch here

Python does this arithmetic when the script runs; define-by-run records only the branch taken
and the numbers the layers were built with, so the importer does the same. Only constants of
numbers, bools, strings, None and lists/tuples of them are worked out, with a few pure
builtins (len, int, float, bool, abs, min, max, round, range); large powers and products are
not (a script cannot make the importer compute 10**10**10), and every step's cost is bounded
before it is paid: whole numbers stay below 2**63, lists and tuples at 10,000 items at every
step (not only at the end), and `round(7, -10**9)`, which Python works out as a number of a
billion digits, is refused by its digits first."""

import ast
import copy
import math
import operator

from .problems import Unsupported
from .pure_functions import MAX_STEPS, MAX_TOTAL_STEPS, UserFunction
from .python_values import (
    NOT,
    STR_METHODS,
    AbcType,
    ConfigClass,
    ConfigInstance,
    Iterated,
    LayerClass,
    ModuleArg,
    PyObject,
)
from .syntax import dotted

_MAX_INT = 2**63
_MAX_ITEMS = 10_000  # the longest list or range a constant may be
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BUILTINS = {
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
}
# the builtin types isinstance() is worked out against (on a number, string, list or tuple)
_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "tuple": tuple, "list": list}
_SEQUENCES = {"tuple": tuple, "list": list}  # tuple(x) / list(x) of a constant x


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, complex)


def _plain(v):
    """Whether v is a value a constant may hold."""
    if isinstance(v, PyObject):
        return True  # math, a config class or instance (python_values.py)
    if v is None or isinstance(v, (bool, int, float, str)):
        return not isinstance(v, int) or abs(v) < _MAX_INT
    if isinstance(v, (list, tuple, range)):
        return len(v) <= _MAX_ITEMS and all(_plain(x) for x in v)
    return False


class Constants:
    """The constants known at a point of a class's method: name -> value (`self.scale` is the
    name `self.scale`, as classes.py reads it), and the lengths of module lists (`len`).

    A class's method also reads the script's top-level constants (`globals`, the top walker's
    values, read when the method is), except the names the method binds itself (`hidden`: its
    arguments and every name it assigns, local throughout it as in Python)."""

    def __init__(self, values=None, lengths=None, globals=None, hidden=()):
        self.values = dict(values or {})
        self.lengths = lengths if lengths is not None else {}  # name -> number of modules
        self.globals = globals  # the top walker's values (None: this is the top walker)
        self.hidden = set(hidden)
        # [steps left in all, calls deep, steps left for this value] of the script's functions
        # worked out (pure_functions.py): shared by the frames and copies of these constants,
        # so that a walker's whole reading works out at most MAX_TOTAL_STEPS lines and calls
        self.budget = [MAX_TOTAL_STEPS, 0, MAX_STEPS]

    def frame(self, values, globals, hidden):
        """The constants of a call of a script's function worked out (pure_functions.py):
        its names, read within this value's budget."""
        frame = Constants(values, globals=globals, hidden=hidden)
        frame.budget = self.budget
        return frame

    def with_values(self, values):
        """These constants with `values` bound too (a comprehension's variable)."""
        c = Constants({**self.values, **values}, self.lengths, self.globals, self.hidden)
        c.budget = self.budget
        return c

    def lookup(self, name):
        """The constant a name reads, else NOT."""
        if name in self.values:
            return self.values[name]
        g = self.globals
        if g is not None and name not in self.hidden and "." not in name:
            return g.get(name, NOT)
        return NOT

    def top(self):
        """The top walker's values: what a class's methods read as globals."""
        return self.values if self.globals is None else self.globals

    def value(self, node):
        """The value of `node` when it is a constant, else NOT."""
        if self.budget[1] == 0:  # (a value of its own, not one inside a function's call)
            self.budget[2] = MAX_STEPS
        try:
            v = self._value(node)
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, RecursionError):
            return NOT  # Python would raise here at run time: the line is read as it stands
        return v if v is NOT or _plain(v) else NOT

    def _value(self, node):
        if isinstance(node, ast.Constant):
            v = node.value
            return v if v is None or isinstance(v, (bool, int, float, str)) else NOT
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self._value(node.value)
            return base.attribute(node.attr) if isinstance(base, PyObject) else NOT
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self._value(e) for e in node.elts]
            if any(v is NOT for v in items):
                return NOT
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            return self._bool_op(node)
        if isinstance(node, ast.IfExp):
            test = self._value(node.test)
            if test is NOT:
                return NOT
            return self._value(node.body if test else node.orelse)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            seq = self._value(node.value)  # letters[:5], sizes[1:]
            sl = node.slice
            bounds = [None if b is None else self._value(b) for b in (sl.lower, sl.upper, sl.step)]
            if not isinstance(seq, (list, tuple, str)) or NOT in bounds or bounds[2] == 0:
                return NOT
            if not all(b is None or type(b) is int for b in bounds):
                return NOT
            return seq[slice(*bounds)]
        if isinstance(node, ast.Subscript):
            seq, index = self._value(node.value), self._value(node.slice)
            if seq is NOT or index is NOT or not isinstance(index, int):
                return NOT
            return seq[index] if isinstance(seq, (list, tuple, range, str)) else NOT
        if isinstance(node, ast.Call):
            return self._call(node)
        return NOT

    def _unary(self, node):
        v = self._value(node.operand)
        if v is NOT:
            return NOT
        if isinstance(node.op, ast.Not):
            return not v
        if not _number(v):
            return NOT
        return {ast.USub: operator.neg, ast.UAdd: operator.pos}.get(type(node.op), lambda _: NOT)(v)

    def _binary(self, node):
        f = _BINARY.get(type(node.op))
        a, b = self._value(node.left), self._value(node.right)
        if f is None or a is NOT or b is NOT:
            return NOT
        if isinstance(a, (list, tuple, str)) and isinstance(b, type(a)) and f is operator.add:
            return a + b if len(a) + len(b) <= _MAX_ITEMS else NOT
        if not (_number(a) and _number(b)):
            return NOT
        if f is operator.pow and not _small_power(a, b):
            return NOT
        v = f(a, b)
        if isinstance(v, float) and not math.isfinite(v):
            return NOT
        if isinstance(v, int) and abs(v) >= _MAX_INT:
            return NOT  # (nor are products of products left to grow without end)
        return v

    def _compare(self, node):
        left = self._value(node.left)
        if left is NOT:
            return NOT
        for op, right_node in zip(node.ops, node.comparators):
            right = self._value(right_node)
            if right is NOT:
                return NOT
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _bool_op(self, node):
        v = NOT
        for e in node.values:
            v = self._value(e)
            if v is NOT:
                return NOT
            if isinstance(node.op, ast.And) != bool(v):
                return v  # `and` stops at a falsy value, `or` at a truthy one
        return v

    def _call(self, node):
        func = self._value(node.func) if not _builtin_name(node.func, self) else NOT
        if isinstance(func, PyObject):
            return self._object_call(func, node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in STR_METHODS:
            text = self._value(node.func.value)  # all_letters.find(letter)
            args = [self._value(a) for a in node.args]
            if isinstance(text, str) and not node.keywords and all(type(a) is str for a in args):
                return getattr(text, node.func.attr)(*args)
            return NOT
        if not isinstance(node.func, ast.Name) or node.keywords:
            return NOT
        name = node.func.id
        if name == "isinstance" and len(node.args) == 2:
            v, types = self._value(node.args[0]), self._types(node.args[1])
            if v is NOT or types is None or isinstance(v, PyObject):
                return NOT  # (what a stand-in is an instance of is not modelled)
            return isinstance(v, types)
        if name == "len" and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id in self.lengths:
                return self.lengths[arg.id]
            v = self._value(arg)
            return len(v) if isinstance(v, (list, tuple, range, str)) else NOT
        args = [self._value(a) for a in node.args]
        if any(a is NOT for a in args):
            return NOT
        if name in _SEQUENCES and len(args) <= 1:
            seq = args[0] if args else ()
            seq = seq.items if isinstance(seq, Iterated) else seq
            if not isinstance(seq, (list, tuple, range, str)) or len(seq) > _MAX_ITEMS:
                return NOT
            return _SEQUENCES[name](seq)
        if name == "range" and 1 <= len(args) <= 3 and all(type(a) is int for a in args):
            r = range(*args)
            return r if len(r) <= _MAX_ITEMS else NOT
        f = _BUILTINS.get(name)
        if f is None or not args or not _cheap_call(name, args):
            return NOT
        return f(*args)

    def _types(self, node):
        """The type (or tuple of types) isinstance's second argument names; None where it
        names none modelled here."""
        if isinstance(node, ast.Tuple):
            types = [self._types(e) for e in node.elts]
            return None if None in types else tuple(types)
        if isinstance(node, ast.Name) and node.id in _TYPES and _builtin_name(node, self):
            return _TYPES[node.id]
        v = self._value(node)
        return v.abc if isinstance(v, AbcType) else None

    def _object_call(self, func, node):
        """A call of math.sqrt, of a config class, of the script's own function ...: its value
        (NOT where an argument is no constant: math.sqrt of a tensor is the op registry's to
        read, as torch.sqrt)."""
        callable_ = hasattr(func, "call") or isinstance(func, UserFunction)
        if not callable_ or any(isinstance(a, ast.Starred) for a in node.args):
            return NOT
        if any(k.arg is None for k in node.keywords):
            return NOT
        args = [self._value(a) for a in node.args]
        kwargs = {k.arg: self._value(k.value) for k in node.keywords}
        if any(v is NOT for v in [*args, *kwargs.values()]):
            if isinstance(func, ConfigClass):
                raise Unsupported(
                    f"{func.name}()'s arguments must be constants (numbers, strings, bools)"
                )
            return NOT
        if isinstance(func, UserFunction):
            v = func.evaluate(args, kwargs, self)
        else:
            v = func.call(args, kwargs)
        return NOT if v is None else v

    # -- statements -----------------------------------------------------------------------------
    def substituted(self, node):
        """A copy of `node` with each constant expression in it written as its literal."""
        if not self.values and not self.lengths and not self.globals:
            return node
        return _Fold(self).visit(node)

    def forget(self, names):
        for n in names:
            self.values.pop(n, None)
            self.hidden.add(n)  # (a name bound to a tensor no longer reads a global)


def _cheap_call(name, args):
    """Whether a builtin's call is worked out here. Python's round(x, n) makes 10**abs(n) for
    an int x and a negative n (a billion digits for n = -10**9, seconds with the GIL held); no
    value a constant may hold needs more than 400 digits either way (floats end near 1e308)."""
    if name == "round" and len(args) == 2:
        n = args[1]
        return isinstance(n, int) and abs(n) <= 400
    if name in ("int", "float") and args and isinstance(args[0], str):
        return len(args[0]) <= 400  # (Python refuses over 4,300 digits; far less is needed)
    return True


def _builtin_name(func, constants):
    """Whether a call's function is a builtin's name that no constant shadows."""
    return isinstance(func, ast.Name) and constants.lookup(func.id) is NOT


def _holds_object(v):
    """Whether a constant is or holds a PyObject (never written as a literal)."""
    if isinstance(v, (list, tuple)):
        return any(_holds_object(x) for x in v)
    return isinstance(v, PyObject)


def _small_power(a, b):
    """Whether a ** b is worked out here: not when it would be huge (10 ** 10 ** 10)."""
    if isinstance(a, int) and isinstance(b, int):
        return b < 0 or abs(a) <= 1 or b * max(abs(a), 2).bit_length() <= 64
    return abs(b) <= 1024


def literal_node(v, where):
    """An ast literal of the value v, at the place of node `where`."""
    if isinstance(v, (list, tuple, range)):
        elts = [literal_node(x, where) for x in v]
        node = (
            ast.List(elts=elts, ctx=ast.Load())
            if isinstance(v, list)
            else ast.Tuple(elts=elts, ctx=ast.Load())
        )
    elif isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
        node = ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-v))  # as literal() reads it
    else:
        node = ast.Constant(v)
    return ast.copy_location(node, where)


class _Fold(ast.NodeTransformer):
    """Replaces the largest constant expressions that read a constant name (or len of a
    module list) by their values; other expressions are left as written."""

    def __init__(self, constants):
        self.c = constants

    def generic_visit(self, node):
        folded = self._folded(node)
        return folded if folded is not None else super().generic_visit(node)

    def _folded(self, node):
        """The literal of a constant expression that reads a name, else None."""
        loaded = getattr(node, "ctx", None) is None or isinstance(node.ctx, ast.Load)
        if isinstance(node, ast.expr) and not isinstance(node, ast.Constant) and loaded:
            v = self.c.value(node) if _reads_name(node) else NOT
            if v is not NOT and not isinstance(v, range) and not _holds_object(v):
                # (range(n) stays a loop's; math or a config instance stays its name)
                return literal_node(v, node)
        return None

    def visit_Subscript(self, node):
        folded = self._folded(node)  # to_2tuple(bias)[0], as a whole
        if folded is not None:
            return folded
        # self.layers[i] of a module list: the name of its i-th module (modules.py's lists)
        node.value = base = self.visit(node.value)  # (self.blocks[0][1]: the inner first)
        if isinstance(base, ast.Name) and base.id in self.c.lengths:
            if isinstance(node.slice, ast.Slice):
                return self.generic_visit(node)  # for layer in self.layers[1:]: loops.py
            i, n = self.c.value(node.slice), self.c.lengths[base.id]
            if type(i) is not int:
                shown = base.id.removeprefix("self.")
                raise Unsupported(f"index {shown} with a constant whole number")
            if not -n <= i < n:
                raise Unsupported(
                    f"index {i} is out of range: {base.id.removeprefix('self.')} holds {n} modules"
                )
            return ast.copy_location(ast.Name(id=element(base.id, i % n), ctx=ast.Load()), node)
        return self.generic_visit(node)

    def visit_IfExp(self, node):
        # `nn.Parameter(torch.zeros(n)) if bias else None`: the branch a constant test picks
        test = self.c.value(node.test)
        if test is not NOT:
            return self.visit(node.body if test else node.orelse)
        return self.generic_visit(node)

    def visit_Call(self, node):
        held = self.c.lookup(node.func.id) if isinstance(node.func, ast.Name) else NOT
        if isinstance(held, LayerClass):  # norm_layer(planes): nn.BatchNorm2d(planes)
            node.func = held.func(node.func)
        if isinstance(held, UserFunction):  # to_2tuple(4): (4, 4), where worked out
            v = self.c.value(node)
            if v is not NOT and not isinstance(v, range) and not _holds_object(v):
                return literal_node(v, node)
        # a call's function is a name to call (self.fc), never a value to substitute
        folded = ("len", "range", "isinstance", *_BUILTINS, *_SEQUENCES)
        if isinstance(node.func, ast.Name) and node.func.id not in folded:
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return _spliced(node)
        node = self.generic_visit(node)
        return _spliced(node) if isinstance(node, ast.Call) else node


def _spliced(call):
    """`x.view(n, *shape)` with shape a constant: its items as arguments of their own."""
    args = []
    for a in call.args:
        if isinstance(a, ast.Starred) and isinstance(a.value, (ast.Tuple, ast.List)):
            args += a.value.elts
        else:
            args.append(a)
    call.args = args
    return call


def element(name, i):
    """The variable of the i-th module of the module list `name` (no script variable has a
    dot, so it cannot be taken): self.layers.0."""
    return f"{name}.{i}"


def _reads_name(node):
    return any(isinstance(n, ast.Name) for n in ast.walk(node))


def constant_or_refused(constants, node, what):
    """The constant value of an argument `node`; Unsupported naming `what` where it is none."""
    v = constants.value(node)
    if v is NOT:
        raise Unsupported(
            f"{what} must be a constant (a number, True/False, a string, None or a tuple of "
            "them): the importer reads the values a module is built with, not tensors"
        )
    return v


class ConstantLines:
    """The lines of a class's methods that work out constants (constants.py's doc): each
    statement passes here before the walker reads it."""

    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer) of the method

    def read(self, stmt):
        """(True, what statements() returns) for a line read here (a constant assignment, an
        `if` on a constant); (False, the statement with its constants substituted) else."""
        c = self.imp.constants
        if isinstance(stmt, ast.ClassDef):
            return False, stmt  # its methods read the constants when they are read
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return True, None  # `x: int`, an annotation alone binds nothing
            target = stmt.target
            stmt = ast.copy_location(ast.Assign(targets=[target], value=stmt.value), stmt)
        if isinstance(stmt, ast.If):
            test = c.value(stmt.test)
            if test is not NOT:
                return True, self.imp.statements(stmt.body if test else stmt.orelse)
            return False, _replaced(stmt, test=c.substituted(stmt.test))
        if isinstance(stmt, ast.For):
            c.forget(_names(stmt.target))
            return False, _replaced(stmt, iter=c.substituted(stmt.iter))
        if isinstance(stmt, ast.Assign):
            return self._assign(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            if name in c.values:
                read = ast.Name(id=name, ctx=ast.Load())
                v = c.value(ast.BinOp(left=read, op=stmt.op, right=stmt.value))
                if v is not NOT:
                    c.values[name] = v
                    return True, None
                c.forget([name])
            return False, _replaced(stmt, value=c.substituted(stmt.value))
        return False, c.substituted(stmt)

    def _assign(self, stmt):
        c = self.imp.constants
        if self._set_field(stmt):
            return True, None
        if self._torch_value(stmt):
            return True, None
        if self._layer_class(stmt):
            return True, None
        names = [n for t in stmt.targets for n in _names(t)]
        plain = all(isinstance(t, (ast.Name, ast.Tuple)) for t in stmt.targets)
        v = c.value(stmt.value) if plain else NOT
        if isinstance(v, ModuleArg) and len(names) == 1:
            # self.downsample = downsample, a module made at the top: made again here (and a
            # constant too, for `if self.downsample is not None`)
            c.values[names[0]] = v
            return False, _replaced(stmt, value=copy.deepcopy(v.expr))
        if v is NOT or (isinstance(stmt.targets[0], ast.Tuple) and not _unpacks(stmt, v)):
            c.forget(names)
            # x[i, n - 1] = v: the index's constants written in too
            targets = [
                c.substituted(t) if isinstance(t, ast.Subscript) else t for t in stmt.targets
            ]
            return False, _replaced(stmt, value=c.substituted(stmt.value), targets=targets)
        for t in stmt.targets:
            for name, value in _bound(t, v):
                c.values[name] = value
                self.imp.env.pop(name, None)
        return True, None

    def _torch_value(self, stmt):
        """`dtype = torch.float`, `device = torch.device("cpu")`: the dtype's name ("float32")
        and the device's, constants that dtype= and .to() read (device= is the document's
        run's, whatever the script names)."""
        t = stmt.targets[0] if len(stmt.targets) == 1 else None
        if not isinstance(t, ast.Name):
            return False
        modules, value = self.imp.modules, stmt.value
        if isinstance(value, ast.Attribute):
            try:
                v = modules.dtype(value)
            except Unsupported:
                return False
        elif modules.is_call(value, "lib", "device"):
            v = self.imp.constants.value(value.args[0]) if len(value.args) == 1 else NOT
            if not isinstance(v, str) or value.keywords:
                return False
        else:
            return False
        self.imp.constants.values[t.id] = v
        self.imp.env.pop(t.id, None)
        return True

    def _layer_class(self, stmt):
        """`norm_layer = nn.BatchNorm2d`, `loss_func = F.cross_entropy`, `act = torch.tanh`:
        the variable holds the class or function, called as written (python_values.py); a
        script's own function under another name (`loss_func = nll`) is that function."""
        t = stmt.targets[0] if len(stmt.targets) == 1 else None
        value = stmt.value
        if not isinstance(t, ast.Name) or not isinstance(value, (ast.Attribute, ast.Name)):
            return False
        functions = self.imp.functions
        if isinstance(value, ast.Name) and value.id in functions.defs:
            held = self.imp.constants.lookup(value.id)
            if value.id in self.imp.env or not (held is NOT or isinstance(held, UserFunction)):
                return False
            functions.defs[t.id] = functions.defs[value.id]  # (inlined under either name)
            self.imp.constants.values.pop(t.id, None)
            if held is not NOT:
                self.imp.constants.values[t.id] = held
            self.imp.env.pop(t.id, None)
            return True
        held = layer_class(self.imp.modules, value)
        if held is None:
            return False
        self.imp.constants.values[t.id] = held
        self.imp.env.pop(t.id, None)
        return True

    def _set_field(self, stmt):
        """`cfg.dropout = 0.1`, cfg a config instance (python_values.py): the field set."""
        t = stmt.targets[0] if len(stmt.targets) == 1 else None
        if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)):
            return False
        c = self.imp.constants
        inst = c.lookup(t.value.id)
        if not isinstance(inst, ConfigInstance):
            return False
        v = constant_or_refused(c, stmt.value, f"{t.value.id}.{t.attr}")
        inst.set(t.attr, v)
        return True


def layer_class(modules, node):
    """The LayerClass a name written as a value stands for: an nn layer class (nn.GELU), a
    function of torch or F (F.cross_entropy, torch.tanh); None for any other expression."""
    if not isinstance(node, (ast.Attribute, ast.Name)):
        return None
    written = dotted(node)
    kind, rest = modules.func_kind(written)
    layer = kind == "nn" and rest[:1].isupper() and "." not in rest
    function = kind in ("F", "lib") and rest and "." not in rest and rest[:1].islower()
    return LayerClass(written) if layer or function else None


def _unpacks(stmt, v):
    """Whether `a, b = <constant>` unpacks into its names (one tuple target, as many values)."""
    t = stmt.targets
    return (
        len(t) == 1
        and isinstance(v, (list, tuple))
        and len(v) == len(t[0].elts)
        and all(isinstance(e, ast.Name) for e in t[0].elts)
    )


def _bound(target, v):
    if isinstance(target, ast.Name):
        return [(target.id, v)]
    return [(e.id, x) for e, x in zip(target.elts, v)]


def _names(target):
    """The names an assignment to `target` binds (of `x[i] = v`, x: its index binds none)."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _replaced(stmt, **fields):
    """A shallow copy of a statement with some fields replaced (its lines stay shared)."""
    new = type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields})
    for f, v in fields.items():
        setattr(new, f, v)
    return ast.copy_location(new, stmt)
