"""The modules a script imports (engine or torch, their nn / nn.functional, numpy), and what a
dotted call name means under the names they were imported as. Any other import (`dataclasses`,
`typing`, `random`, `import torch.optim as optim`, `from torch import Tensor`, a relative one)
binds names the importer gives no meaning: fine while no tensor line uses them (a line that does
is a problem there), and said in a note."""

import ast

from .problems import Unsupported
from .python_values import stdlib_value
from .syntax import dotted

# module path -> the kind of name it binds
_ALLOWED = {
    "engine": "lib",
    "torch": "lib",
    "engine.nn.functional": "F",
    "torch.nn.functional": "F",
    "engine.nn": "nn",
    "torch.nn": "nn",
    "numpy": "np",
    "json": "other",
    "math": "other",
    "dataclasses": "other",  # @dataclass configs: python_values.py
    "dataclasses.dataclass": "other",
    "dataclasses.field": "other",
    "collections": "other",  # isinstance(x, collections.abc.Iterable): python_values.py
    "collections.abc": "other",
    "itertools": "other",  # itertools.repeat(x, n)
}
# modules whose names are constants' (python_values.py): imported one by one, no note
_CONSTANTS_OF = ("math", "collections", "collections.abc", "itertools")
# a module whose names, imported one by one, keep their meaning: `from torch.nn import Linear`
_NAMES_OF = {
    "engine": "lib",
    "torch": "lib",
    "engine.nn": "nn",
    "torch.nn": "nn",
    "engine.nn.functional": "F",
    "torch.nn.functional": "F",
}
DTYPES = ("float32", "float64", "int64", "bool")
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "long": "int64"}


def _normal(kind, rest):
    """torch.nn.functional.relu is F's relu, torch.nn.Linear nn's Linear."""
    if kind == "lib" and rest.startswith("nn.functional."):
        return "F", rest[len("nn.functional.") :]
    if kind == "lib" and rest.startswith("nn."):
        return "nn", rest[3:]
    if kind == "nn" and rest.startswith("functional."):
        return "F", rest[len("functional.") :]
    return kind, rest


class ModuleNames:
    """The names bound by the script's imports, by kind ('lib', 'F', 'nn', 'np', 'other')."""

    def __init__(self):
        self.mods = {"lib": set(), "F": set(), "nn": set(), "np": set(), "other": set()}
        self.aliases = {}  # name -> (kind, its name there): `from torch.nn import Linear`

    def imports(self, stmt):
        """An `import` / `from ... import` line: the names of the modules above by their kind;
        the list of the other modules imported (their names read nothing)."""
        others = []
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                kind = _ALLOWED.get(a.name)
                if kind is None:
                    others.append(a.name)
                    self._other(a.asname or a.name.partition(".")[0])
                elif a.asname is None and "." in a.name:
                    # `import torch.nn` binds torch, which names torch.nn.Linear too
                    head = a.name.partition(".")[0]
                    if _ALLOWED.get(head) is None:
                        raise Unsupported(f"write `import {a.name} as ...`")
                    self.mods[_ALLOWED[head]].add(head)
                else:
                    self.mods[kind].add(a.asname or a.name)
            return others
        mod = stmt.module or ""
        for a in stmt.names:
            kind = None if stmt.level else _ALLOWED.get(f"{mod}.{a.name}")
            if a.name == "*" and kind is None:
                raise Unsupported(f"from {mod} import * is not read: import the names used")
            if kind is None and not stmt.level and mod in _NAMES_OF:
                self.aliases[a.asname or a.name] = (_NAMES_OF[mod], a.name)
            elif kind is None and not stmt.level and mod in _CONSTANTS_OF:
                pass  # its names are constants' (python_values.py)
            elif kind is None:
                others.append(f"{'.' * stmt.level}{mod}.{a.name}")
                self._other(a.asname or a.name)
            else:
                self.mods[kind].add(a.asname or a.name)
        return others

    def python_values(self, stmt):
        """[(name, value)] of the constants an import binds: `import math` (as m), `from
        math import sqrt, pi`, `import string`, `import collections.abc`, `from itertools
        import repeat` (python_values.py)."""
        if isinstance(stmt, ast.Import):
            # (`import collections.abc` binds collections; `... as abc` the module itself)
            paths = [(a.asname, a.name) if a.asname else (a.name.partition(".")[0],) * 2
                     for a in stmt.names]  # fmt: skip
            out = [(name, stdlib_value(path)) for name, path in paths]
            return [(name, v) for name, v in out if v is not None]
        if stmt.level or stmt.module is None:
            return []
        out = [(a.asname or a.name, stdlib_value(stmt.module, a.name)) for a in stmt.names]
        return [(name, v) for name, v in out if v is not None]

    def _other(self, name):
        """A name bound to a module the importer has no meaning for (`import torch.utils.data`
        binds `torch`, which keeps its meaning)."""
        if not any(name in names for kind, names in self.mods.items() if kind != "other"):
            self.mods["other"].add(name)

    def func_kind(self, name):
        """('lib'|'F'|'nn'|'np', rest) for a dotted call name rooted at a known module (or at
        a name imported from one: `Linear` of `from torch.nn import Linear` is nn's Linear)."""
        if name is None:
            return None, None
        head, _, rest = name.partition(".")
        if head in self.aliases:
            kind, base = self.aliases[head]
            return _normal(kind, f"{base}.{rest}" if rest else base)
        for kind in ("lib", "F", "nn", "np"):
            if head in self.mods[kind]:
                return _normal(kind, rest)
        return None, None

    def call_kind(self, node):
        """func_kind of the function a call node calls; (None, None) for a node that is no call."""
        return self.func_kind(dotted(getattr(node, "func", None)))

    def is_call(self, node, kind, name):
        """Whether `node` is a call of `<module of kind>.<name>`, e.g. eg.no_grad()."""
        return isinstance(node, ast.Call) and self.call_kind(node) == (kind, name)

    def dtype(self, node):
        """The dtype a `dtype=` argument names (eg.float32, torch.long, 'int64')."""
        kind, rest = self.func_kind(dotted(node))
        if kind == "lib" and rest in DTYPES + tuple(_DTYPE_ALIASES):
            return _DTYPE_ALIASES.get(rest, rest)
        if isinstance(node, ast.Constant) and node.value in DTYPES:
            return node.value
        raise Unsupported("dtype must be one of " + ", ".join(f"eg.{d}" for d in DTYPES))

    def dtype_in(self, kwargs):
        """The dtype of a call's `dtype=` keyword, popped from kwargs; None where not given."""
        return self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else None
