"""The op registry: the one list of ops, read by the palette, validation, execution and export.

An OpSpec says everything about an op: its ports and params (with types, defaults and bounds),
a one-line doc, how it runs on the engine, and how it is written as Python. Engine code and
PyTorch code differ only in the module name (`eg` or `torch`), because the engine mirrors
PyTorch's API; `code` receives that name.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Port:
    name: str
    optional: bool = False
    variadic: bool = False  # takes any number of edges (cat's and stack's tensors), in edge order
    doc: str = ""


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # float | int | bool | choice | dims | shape | tensor | str
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple = ()
    nullable: bool = False  # None is allowed (e.g. dim=None: all dims)
    doc: str = ""
    max_length: int = 200  # str params: the longest text taken (a dataset's CSV is longer)

    def describe(self):
        d = {"name": self.name, "type": self.type, "default": self.default, "doc": self.doc}
        if self.min is not None:
            d["min"] = self.min
        if self.max is not None:
            d["max"] = self.max
        if self.choices:
            d["choices"] = list(self.choices)
        if self.nullable:
            d["nullable"] = True
        if self.type == "str":
            d["max_length"] = self.max_length
        return d


@dataclass(frozen=True)
class OpSpec:
    name: str
    category: str
    doc: str
    inputs: tuple[Port, ...]
    run: Callable  # run(ctx, inputs, params) -> Tensor; variadic inputs arrive as lists
    code: Callable  # code(lib, args, params) -> a Python expression (args are variable names)
    params: tuple[Param, ...] = ()
    outputs: tuple[str, ...] = ("out",)
    source: bool = False  # a leaf-making op: tensor, parameter, scalar
    # Control flow: the op's first input is a condition that picks which one of its other
    # inputs is computed at all (`if`); the executor demands only that branch, export writes a
    # conditional expression, and validation dry-runs both branches.
    branches: bool = False
    # extra["composite"]: the op is several engine ops, or none (`if`), so the executor cannot
    # read its edges' gradients off one node and gives each input an alias node instead.
    # extra["scalar_for"]: the port that param `scalar` stands in for while unconnected.
    # extra["writes"]: the input port an in-place op writes into (its output is that tensor,
    # one version later; catalog_inplace.py).
    extra: dict = field(default_factory=dict)

    def port(self, name):
        for p in self.inputs:
            if p.name == name:
                return p
        return None

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def describe(self):
        """What the palette and the inspector need, as JSON."""
        return {
            "name": self.name,
            "category": self.category,
            "doc": self.doc,
            "inputs": [
                {"name": p.name, "optional": p.optional, "variadic": p.variadic, "doc": p.doc}
                for p in self.inputs
            ],
            "outputs": list(self.outputs),
            "params": [p.describe() for p in self.params],
            "source": self.source,
            **({"writes": self.extra["writes"]} if self.extra.get("writes") else {}),
        }


REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    if spec.name in REGISTRY:
        raise ValueError(f"op {spec.name!r} is registered twice")
    REGISTRY[spec.name] = spec
    return spec


def get(name) -> OpSpec | None:
    return REGISTRY.get(name)


def all_ops():
    return list(REGISTRY.values())


from . import catalog  # noqa: E402, F401 - importing the catalog is what fills the registry
