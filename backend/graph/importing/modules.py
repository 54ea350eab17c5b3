"""The modules a script imports (engine or torch, their nn / nn.functional, numpy), and what a
dotted call name means under the names they were imported as. Any other import (`dataclasses`,
`typing`, `random`, `import torch.optim as optim`, `from torch import Tensor`, a relative one)
binds names the importer gives no meaning: fine while no tensor line uses them (a line that does
is a problem there), and said in a note."""

import ast

from .problems import Unsupported
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
}
DTYPES = ("float32", "float64", "int64", "bool")
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "long": "int64"}


class ModuleNames:
    """The names bound by the script's imports, by kind ('lib', 'F', 'nn', 'np', 'other')."""

    def __init__(self):
        self.mods = {"lib": set(), "F": set(), "nn": set(), "np": set(), "other": set()}

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
                    raise Unsupported(f"write `import {a.name} as ...`")
                else:
                    self.mods[kind].add(a.asname or a.name)
            return others
        mod = stmt.module or ""
        for a in stmt.names:
            kind = None if stmt.level else _ALLOWED.get(f"{mod}.{a.name}")
            if a.name == "*" and kind is None:
                raise Unsupported(f"from {mod} import * is not read: import the names used")
            if kind is None:
                others.append(f"{'.' * stmt.level}{mod}.{a.name}")
                self._other(a.asname or a.name)
            else:
                self.mods[kind].add(a.asname or a.name)
        return others

    def _other(self, name):
        """A name bound to a module the importer has no meaning for (`import torch.utils.data`
        binds `torch`, which keeps its meaning)."""
        if not any(name in names for kind, names in self.mods.items() if kind != "other"):
            self.mods["other"].add(name)

    def func_kind(self, name):
        """('lib'|'F'|'nn'|'np', rest) for a dotted call name rooted at a known module."""
        if name is None:
            return None, None
        head, _, rest = name.partition(".")
        for kind in ("lib", "F", "nn", "np"):
            if head in self.mods[kind]:
                if kind == "lib" and rest.startswith("nn.functional."):
                    return "F", rest[len("nn.functional.") :]
                if kind == "lib" and rest.startswith("nn."):
                    return "nn", rest[3:]
                if kind == "nn" and rest.startswith("functional."):
                    return "F", rest[len("functional.") :]
                return kind, rest
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
