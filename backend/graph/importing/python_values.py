"""The Python objects a constant may be besides numbers, strings and tuples (constants.py): a
small model of each, worked out while reading, never run.

    import math; from math import sqrt, pi     the math module and its functions on numbers:
    scale = 1 / math.sqrt(d)                   math.sqrt(784), math.pi, math.log(2.0) ...
    @dataclass                                 a config class: its fields and their defaults
    class GPTConfig:                           (a plain class of class attributes too)
        n_embd: int = 64
    cfg = GPTConfig(n_embd=8)                  an instance: its fields' values
    nn.Linear(cfg.n_embd, 4 * cfg.n_embd)      cfg.n_embd read as its number
    cfg.dropout = 0.0                          a field set (the instance is shared, as in
                                               Python, by every name that holds it)

A config class holds fields and class attributes only: a method, a property or
`field(default_factory=...)` is refused at its line, so that no value is read that Python would
compute otherwise. math's functions are those that cost little whatever their arguments
(no factorial or comb of a huge number); an error Python would raise (math.sqrt(-1)) leaves the
expression unread, as for the builtins."""

import ast
import collections.abc
import math

from .problems import Unsupported
from .syntax import dotted

NOT = object()  # what a constant's value is where the expression is no constant

# math's functions of one or two numbers, cheap for any argument; and its constants
_MATH_FUNCTIONS = {
    name: getattr(math, name)
    for name in (
        "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin",
        "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "ceil",
        "floor", "trunc", "fabs", "pow", "hypot", "isqrt", "gcd", "erf", "erfc", "degrees",
        "radians", "copysign", "fmod", "isfinite", "isinf", "isnan", "isclose",
    )
}  # fmt: skip
_MATH_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}


class PyObject:
    """A Python object a constant stands for (not a number, string or tuple): never written
    into the code as a literal, read by its attributes and calls."""

    def attribute(self, name):
        raise Unsupported(f"{self!r} has no attribute '{name}' the importer reads")


class MathModule(PyObject):
    def __repr__(self):
        return "math"

    def attribute(self, name):
        if name in _MATH_CONSTANTS:
            return _MATH_CONSTANTS[name]
        if name in _MATH_FUNCTIONS:
            return MathFunction(name)
        raise Unsupported(
            f"math.{name} is not read: the importer works out "
            + ", ".join(f"math.{n}" for n in [*_MATH_CONSTANTS, *list(_MATH_FUNCTIONS)[:8]])
            + " ... of numbers"
        )


class MathFunction(PyObject):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"math.{self.name}"

    def __eq__(self, other):
        return isinstance(other, MathFunction) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def call(self, args, kwargs):
        if kwargs or not all(_number(a) for a in args):
            return None  # (a tensor or a keyword: not a constant)
        if self.name in ("isqrt", "gcd") and not all(type(a) is int for a in args):
            return None
        return _MATH_FUNCTIONS[self.name](*args)


class ClassAttributes(PyObject):
    """An nn.Module class read outside it: its class attributes (`Bottleneck.expansion`)."""

    def __init__(self, name, attrs):
        self.name, self.attrs = name, attrs

    def __repr__(self):
        return self.name

    def attribute(self, name):
        if name not in self.attrs:
            raise Unsupported(f"{self.name}.{name} is not read: {self.read_names()}")
        return self.attrs[name]

    def read_names(self):
        return "its class attributes are"


class ModuleArg(PyObject):
    """A module made at the top (`downsample = nn.Sequential(...)`) passed to a class's
    constructor: the expression that made it, made again where __init__ keeps it on self."""

    def __init__(self, expr):
        self.expr = expr

    def __repr__(self):
        return ast.unparse(self.expr)


class ModuleExprs(PyObject):
    """A Python list of modules (`layers = [nn.Linear(a, b)]; layers.append(nn.ReLU())`): the
    expressions that make them, made where nn.Sequential(*layers) or nn.ModuleList(layers)
    takes the list, once (a second use would share the same modules, which it cannot)."""

    def __init__(self, exprs, line):
        self.exprs = exprs
        self.line = line  # where the list was made
        self.used = False

    def __repr__(self):
        return "[" + ", ".join(ast.unparse(e) for e in self.exprs) + "]"


class StringModule(PyObject):
    """Python's `string` module: its constant strings (string.ascii_letters ...)."""

    def __repr__(self):
        return "string"

    def attribute(self, name):
        import string

        value = getattr(string, name, None)
        if name.startswith("_") or not isinstance(value, str):
            raise Unsupported(f"string.{name} is not read: its constant strings are")
        return value


STRING = StringModule()
# methods of a constant string worked out while reading (each cheap for any argument)
STR_METHODS = ("find", "index", "count", "lower", "upper", "strip", "startswith", "endswith")


class AbcType(PyObject):
    """One of collections.abc's classes (`Iterable`), for isinstance() on constants."""

    def __init__(self, name):
        self.name = name
        self.abc = getattr(collections.abc, name)

    def __repr__(self):
        return f"collections.abc.{self.name}"


class Iterated(PyObject):
    """An iterator's values (itertools.repeat(x, n)), read by tuple() and list()."""

    def __init__(self, items):
        self.items = items

    def __repr__(self):
        return f"<iterator of {len(self.items)} values>"


class Repeat(PyObject):
    """itertools.repeat(x, n): n times x (an endless repeat is no constant)."""

    def __repr__(self):
        return "itertools.repeat"

    def call(self, args, kwargs):
        if "times" in kwargs:
            args = [*args, kwargs.pop("times")]
        if kwargs or len(args) != 2 or type(args[1]) is not int or not 0 <= args[1] <= 10_000:
            return None
        return Iterated((args[0],) * args[1])


class PyModule(ClassAttributes):
    """A module of Python's standard library of which constants read a few names."""

    def read_names(self):
        return ", ".join(self.attrs) + " are"


class NumpyProd(PyObject):
    """np.prod of a constant list or tuple of numbers (`int(np.prod(img_shape))`)."""

    def __repr__(self):
        return "numpy.prod"

    def call(self, args, kwargs):
        seq = args[0] if len(args) == 1 and not kwargs else None
        if not isinstance(seq, (list, tuple)) or not all(_number(v) for v in seq):
            return None
        if not seq:
            return 1.0  # (numpy's product of nothing is a float)
        out = 1
        for v in seq:
            out *= v
            if isinstance(out, int) and abs(out) >= 2**63:
                return None  # (numpy's int64 would wrap round)
        return out


class NumpyModule(PyModule):
    """numpy as a constant reads it: its few functions of constants; any other name is no
    constant (numpy's arrays and random numbers are the tensor lines' to read)."""

    def attribute(self, name):
        return self.attrs.get(name, NOT)


# collections.abc's classes isinstance() is worked out against, on constants
_ABC = ("Iterable", "Sequence", "Sized", "Container", "Collection", "Hashable", "Mapping")
ABC_MODULE = PyModule("collections.abc", {name: AbcType(name) for name in _ABC})
_STDLIB = {
    "string": STRING,
    "collections": PyModule("collections", {"abc": ABC_MODULE}),
    "collections.abc": ABC_MODULE,
    "itertools": PyModule("itertools", {"repeat": Repeat()}),
    "numpy": NumpyModule("numpy", {"prod": NumpyProd()}),
}


def stdlib_value(module, name=None):
    """The module at dotted path `module` (math, string, collections, collections.abc,
    itertools, numpy), or the constant `from <module> import <name>` binds; None where it binds no
    constant."""
    if module == "math":
        return math_value("math" if name is None else name)
    m = _STDLIB.get(module)
    if name is None or m is None:
        return m
    return m.attrs.get(name) if isinstance(m, PyModule) else None


def _number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return isinstance(v, float) or abs(v) < 2**63


MATH = MathModule()


def math_value(imported):
    """The value a name bound by `import math` / `from math import x` stands for."""
    if imported == "math":
        return MATH
    return MATH.attribute(imported.removeprefix("math."))


class ConfigClass(PyObject):
    """A dataclass (or a plain class of class attributes) read from its definition."""

    def __init__(self, name, fields, attrs, line):
        self.name = name
        self.fields = fields  # [(field, default or NO_DEFAULT)], a dataclass's __init__ order
        self.attrs = attrs  # class attributes (the fields' defaults among them)
        self.line = line

    def __repr__(self):
        return self.name

    def attribute(self, name):
        if name in self.attrs:
            return self.attrs[name]
        raise Unsupported(f"{self.name} has no class attribute '{name}'")

    def call(self, args, kwargs):
        """An instance made by `Name(*args, **kwargs)`, bound as the dataclass's __init__."""
        if len(args) > len(self.fields):
            raise Unsupported(
                f"{self.name}() takes {len(self.fields)} positional arguments, not {len(args)}"
            )
        values = {}
        names = [f for f, _ in self.fields]
        for f, v in zip(names, args):
            values[f] = v
        for k, v in kwargs.items():
            if k not in names:
                raise Unsupported(f"{self.name}() has no field '{k}'")
            if k in values:
                raise Unsupported(f"{self.name}() got '{k}' twice")
            values[k] = v
        for f, default in self.fields:
            if f not in values:
                if default is NO_DEFAULT:
                    raise Unsupported(f"{self.name}() needs its field '{f}'")
                values[f] = default
        return ConfigInstance(self, values)


NO_DEFAULT = object()


class LayerClass(PyObject):
    """A layer class or a function of torch / F held in a variable (`norm_layer =
    nn.BatchNorm2d`, `loss_func = F.cross_entropy`): a call of the variable reads as a call
    of what it holds, written as the script wrote it."""

    def __init__(self, written):
        self.written = written  # "nn.BatchNorm2d", as the script names it

    def __repr__(self):
        return self.written

    def func(self, where):
        """The class's dotted name as an expression, at the place of node `where`."""
        node = ast.parse(self.written, mode="eval").body
        for n in ast.walk(node):
            ast.copy_location(n, where)
        return node


class ConfigInstance(PyObject):
    """An instance of a config class: its fields, changed in place by `cfg.x = v` (every name
    that holds it sees the change, as in Python)."""

    def __init__(self, cls, values):
        self.cls = cls
        self.values = values

    def __repr__(self):
        # (the key of a module definition built from it: its values at that point)
        inner = ", ".join(f"{k}={v!r}" for k, v in sorted(self.values.items()))
        return f"{self.cls.name}({inner})"

    def attribute(self, name):
        if name in self.values:
            return self.values[name]
        if name in self.cls.attrs:
            return self.cls.attrs[name]
        raise Unsupported(f"{self.cls.name} has no field '{name}'")

    def set(self, name, value):
        if name not in self.values and name not in self.cls.attrs:
            raise Unsupported(f"{self.cls.name} has no field '{name}' to set")
        self.values[name] = value


def is_config_class(stmt):
    """Whether a class statement is a config class: `@dataclass` (or
    `@dataclasses.dataclass(...)`), or no decorator, and no base but `object`."""
    bases = [dotted(b) for b in stmt.bases]
    if any(b != "object" for b in bases) or stmt.keywords:
        return False
    return all(_is_dataclass(d) for d in stmt.decorator_list)


def _is_dataclass(dec):
    func = dec.func if isinstance(dec, ast.Call) else dec
    return dotted(func) in ("dataclass", "dataclasses.dataclass")


def read_config_class(stmt, value):
    """The ConfigClass of a class statement (is_config_class); `value(node, what)` works out
    a default (Unsupported naming `what` where it is no constant)."""
    dataclass = bool(stmt.decorator_list)
    fields, attrs = [], {}
    for s in stmt.body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue  # its docstring
        if isinstance(s, ast.Pass):
            continue
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            name = s.target.id
            class_var = "ClassVar" in (dotted(_annotation_head(s.annotation)) or "")
            if s.value is None:
                if dataclass and not class_var:
                    fields.append((name, NO_DEFAULT))
                continue
            v = _default(stmt, s, value)
            attrs[name] = v
            if dataclass and not class_var:
                fields.append((name, v))
            continue
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            v = _default(stmt, s, value)
            for t in s.targets:
                attrs[t.id] = v
            continue
        what = f"{stmt.name}.{s.name}" if hasattr(s, "name") else "its statement"
        raise Unsupported(
            f"{stmt.name} is read as a config class: it may hold fields and class attributes "
            f"of constants only (`n_embd: int = 64`); {what} (line {s.lineno}) is not"
        )
    if dataclass:
        seen_default = False
        for f, d in fields:
            if d is NO_DEFAULT and seen_default:
                raise Unsupported(f"{stmt.name}: field '{f}' without a default follows one with")
            seen_default = seen_default or d is not NO_DEFAULT
    return ConfigClass(stmt.name, fields, attrs, stmt.lineno)


def _annotation_head(node):
    return node.value if isinstance(node, ast.Subscript) else node


def _default(cls, s, value):
    if isinstance(s.value, ast.Call) and dotted(s.value.func) in ("field", "dataclasses.field"):
        raise Unsupported(
            f"{cls.name}: dataclasses.field(...) is not read: write the default itself"
        )
    return value(s.value, f"{cls.name}'s attribute '{_target(s)}'")


def _target(s):
    return s.target.id if isinstance(s, ast.AnnAssign) else s.targets[0].id
