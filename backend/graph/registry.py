"""The op registry: the one list of ops, read by the palette, validation, execution, export
and import. An op is one `register(OpSpec(...))` in its family's module of `ops/`.

An OpSpec says everything about an op: its ports and params (with types, defaults and bounds),
a one-line doc, how it runs on the engine, how it is written as Python (`code`), how a call of
it is read back from a script (`call`, a CallForm), through which inputs gradients flow
(`Port.no_grad`) and what each such input's local derivative is (`Port.derivative`), and
whether it is control flow (`branches`). Engine code and PyTorch code differ only in the module
name (`eg` or `torch`), because the engine mirrors PyTorch's API; `code` receives that name.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# How the chain-rule panel reads a port's derivative text: "elementwise", a factor the upstream
# gradient is multiplied by elementwise (summed over broadcast dims); "grad", the edge's
# gradient itself, written with `grad` for the upstream gradient (matrix products); "jacobian",
# words for a Jacobian that is no elementwise factor (softmax, a layer, a reshuffle of
# elements), so the panel shows no per-element local numbers for it.
DERIVATIVE_KINDS = ("elementwise", "grad", "jacobian")

# A placeholder in a derivative text, filled in by the page from the node's params (or the
# op's defaults): `{p}` is param p's value; `{p-1}` that value minus 1 (after `^`, an exponent:
# `x^{p-1}` is written x^2, x^(−0.5), x for 1, and the factor `·x^{p-1}` drops for 0);
# `{p|mean:/n|sum:}` the text after the value p has (a value not listed gives nothing).
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_VALUE = re.compile(r"^(\w+)(-\d+)?$")
_CHOICE = re.compile(r"^(\w+)\|(.*)$")


def placeholders(text):
    """[(param, choice values or None)] of the placeholders in a derivative text; a
    placeholder of another form raises ValueError."""
    found = []
    for inner in PLACEHOLDER.findall(text):
        if m := _VALUE.match(inner):
            found.append((m.group(1), None))
        elif m := _CHOICE.match(inner):
            cases = m.group(2).split("|")
            if not all(":" in c for c in cases):
                raise ValueError(f"{{{inner}}}: each case of a choice is value:text")
            found.append((m.group(1), tuple(c.split(":", 1)[0] for c in cases)))
        else:
            raise ValueError(f"{{{inner}}} is not a placeholder ({{p}}, {{p-1}} or {{p|v:text}})")
    return found


class Unsupported(Exception):
    """A call a CallForm cannot bind, or one line code import cannot read; the message says why
    (the importer reports it at its line)."""


@dataclass(frozen=True)
class Port:
    name: str
    optional: bool = False
    variadic: bool = False  # takes any number of edges (cat's and stack's tensors), in edge order
    doc: str = ""
    # Non-empty: no gradient flows back through this input, and this says why in the page's
    # words (the chain-rule panel shows it; `{op}` and `{source}` are filled in there). The
    # exporter takes a node's requires_grad from its other inputs only.
    no_grad: str = ""
    # The local derivative ∂out/∂port, as the chain-rule panel writes it ("other" for mul's
    # input), with placeholders for the params it depends on (PLACEHOLDER); every input
    # without `no_grad` has one. `derivative_kind`: how to read it (DERIVATIVE_KINDS).
    derivative: str = ""
    derivative_kind: str = "elementwise"
    # the text while the op's `scalar` param stands in for its unconnected `scalar_for` port
    # ("{scalar} (the scalar)" for mul's input)
    derivative_scalar: str = ""

    def derivative_params(self):
        """The params the derivative texts depend on, in order of first use."""
        names = [n for t in (self.derivative, self.derivative_scalar) for n, _ in placeholders(t)]
        return list(dict.fromkeys(names))

    def describe(self):
        d = {"name": self.name, "optional": self.optional, "variadic": self.variadic}
        d["doc"] = self.doc
        if self.no_grad:
            d["no_grad"] = self.no_grad
        elif self.derivative:
            d["derivative"] = {
                "text": self.derivative,
                "kind": self.derivative_kind,
                "params": self.derivative_params(),
                **({"scalar": self.derivative_scalar} if self.derivative_scalar else {}),
            }
        return d


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


# The ways a call can be written: `eg.exp(x)` / `torch.exp(x)` ("function"), `x.exp()`
# ("method"), `F.exp(x)` ("functional").
FORMS = ("function", "method", "functional")


@dataclass(frozen=True)
class CallForm:
    """How a call of the op is read back from a script (importing/calls.py), PyTorch's
    signature with its arguments named as the op's ports and params."""

    args: tuple[str, ...] = ("input",)  # the positional arguments, in order
    kwonly: tuple[str, ...] = ()  # keyword-only arguments
    aliases: tuple[str, ...] = ()  # other names of the same call (`clip` for clamp, `mm`, `view`)
    # attributes of a tensor that are the op with no call (`x.T`, `x.mT`); their params come
    # from read(name, {}, False)
    attributes: tuple[str, ...] = ()
    forms: tuple[str, ...] = FORMS  # which of FORMS the op is written in
    required: tuple[str, ...] = ()  # params a call must give (softmax's dim)
    # the param a method's loose positional arguments are packed into: x.reshape(2, 3)
    varargs: str | None = None
    # what PyTorch takes for an argument left out, where it is not the param's default
    defaults: dict = field(default_factory=dict)
    operator: str = ""  # the Python operator that writes the op (`+`, `@`, `>`), if any
    # the form PyTorch code usually writes a call in, as a node's face shows it: "method" for
    # `x.sum(dim=1)`, `x.reshape(2, 3)`; left empty, the first of `forms` (`torch.exp(x)`)
    usual: str = ""
    values: bool = False  # `<call>.values` may follow (max/min along one dim)
    # the `nn` class whose call computes the op, where its name is not the op's in other words
    # (nn.BCELoss: binary_cross_entropy); else nn.<Name> is found from the name (nn_layers.py)
    nn_class: str = ""
    # read(name, vals, values) -> vals: the op's own reading of the literal arguments of a call
    # by `name` (e.g. var's `unbiased=` as correction), raising importing's Unsupported
    read: Callable | None = None

    @property
    def method(self):
        return "method" in self.forms

    def describe(self):
        """What the page writes a call with: its operator, the usual form and its aliases."""
        usual = self.usual or self.forms[0]
        return {"operator": self.operator, "usual": usual, "aliases": list(self.aliases)}


@dataclass(frozen=True)
class LayerForm:
    """A layer op (conv2d, batch_norm, ...): the `nn` module its node makes, as PyTorch writes
    it. One description read by the op's run (ops/layer_kit.py makes the engine's module),
    training (which params its trained state is written back to), validation (stored values of
    an old size: stale.py) and export (`nn.<cls>(<args>)`)."""

    cls: Callable  # cls(x, params) -> the nn class name: "Conv2d", "BatchNorm1d" or "2d" by rank
    args: Callable  # args(x, params) -> the constructor's arguments by PyTorch's names, in order
    classes: tuple[str, ...] = ()  # every name cls() gives: what importing reads as this op
    # (param, state_dict key): the params that hold the layer's trained state (parameters and
    # buffers such as batch_norm's running_mean), e.g. ("bias_value", "bias")
    state: tuple[tuple[str, str], ...] = ()
    shapes: Callable | None = None  # shapes(args) -> {param: shape} of the state it makes
    modes: bool = False  # train() and eval() compute different things (a `mode` param says which)
    # the constructor's inspect.Signature (with self) as PyTorch documents it, where the class
    # itself says only (*args, **kwargs) (RNN, LSTM, GRU): what export writes arguments by and
    # importing binds them by; None: the class's own (layer_kit.constructor_signature)
    signature: Any = None
    # the module returns a tuple and the node is its first element (nn.LSTM's output, without
    # (h_n, c_n)): called `layer(x)[0]`
    first_of_tuple: bool = False


@dataclass(frozen=True)
class OpSpec:
    name: str
    category: str
    doc: str
    inputs: tuple[Port, ...]
    run: Callable  # run(ctx, inputs, params) -> Tensor; ctx: an op_context.OpContext
    code: Callable  # code(lib, args, params) -> a Python expression (args are variable names)
    params: tuple[Param, ...] = ()
    outputs: tuple[str, ...] = ("out",)
    source: bool = False  # a leaf-making op: tensor, parameter, scalar
    # Control flow: the op's first input is a condition that picks which one of its other
    # inputs is computed at all (`if`); the executor demands only that branch, export writes a
    # conditional expression, and validation dry-runs both branches.
    branches: bool = False
    call: CallForm | None = None  # how a call is read back (None: no call form, e.g. sources)
    # A sample run's sources (port -> a tensor node's params; other ports get a [2, 3] tensor
    # of rand values in [0, 1)): what the tests run every op on, through export and import.
    example: dict = field(default_factory=dict)
    # extra["composite"]: the op is several engine ops, or none (`if`), so the executor cannot
    # read its edges' gradients off one node and gives each input an alias node instead.
    # extra["scalar_for"]: the port that param `scalar` stands in for while unconnected.
    # extra["writes"]: the input port an in-place op writes into (its output is that tensor,
    # one version later; ops/inplace.py).
    extra: dict = field(default_factory=dict)
    layer: LayerForm | None = None  # a layer op: the nn module its node makes (LayerForm)

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

    @property
    def condition_port(self):
        """A control-flow op's condition (its first input)."""
        return self.inputs[0].name if self.branches else None

    @property
    def branch_ports(self):
        """A control-flow op's branches (its other inputs), in port order."""
        return tuple(p.name for p in self.inputs[1:]) if self.branches else ()

    def differentiable(self, port):
        """Whether gradients flow back through input `port`."""
        p = self.port(port)
        return p is not None and not p.no_grad

    def describe(self):
        """What the palette, the inspector and the chain-rule panel need, as JSON."""
        return {
            "name": self.name,
            "category": self.category,
            "doc": self.doc,
            "inputs": [p.describe() for p in self.inputs],
            "outputs": list(self.outputs),
            "params": [p.describe() for p in self.params],
            "source": self.source,
            **({"branches": True} if self.branches else {}),
            **({"writes": self.extra["writes"]} if self.extra.get("writes") else {}),
            **({"scalar_for": self.extra["scalar_for"]} if self.extra.get("scalar_for") else {}),
            **({"call": self.call.describe()} if self.call else {}),
        }


REGISTRY: dict[str, OpSpec] = {}
CALLS: dict[str, OpSpec] = {}  # every name a call can use (op names and aliases) -> its op
OPERATORS: dict[str, OpSpec] = {}  # a Python operator (`+`, `@`, `>`) -> the op it writes
ATTRIBUTES: dict[str, OpSpec] = {}  # a tensor attribute read as an op (`T`) -> its op


def register(spec: OpSpec) -> OpSpec:
    """Add an op; an op name, or a call name, that is already taken is refused."""
    if spec.name in REGISTRY:
        raise ValueError(f"op {spec.name!r} is registered twice")
    names = (spec.name, *spec.call.aliases) if spec.call else ()
    for n in names:
        if n in CALLS:
            raise ValueError(f"call name {n!r} of op {spec.name!r} is {CALLS[n].name!r}'s")
    symbol = spec.call.operator if spec.call else ""
    for a in spec.call.attributes if spec.call else ():
        if a in ATTRIBUTES:
            raise ValueError(f"attribute {a!r} of op {spec.name!r} is {ATTRIBUTES[a].name!r}'s")
    if symbol in OPERATORS:
        raise ValueError(f"operator {symbol!r} of op {spec.name!r} is {OPERATORS[symbol].name!r}'s")
    if spec.call:
        unknown = set(spec.call.forms) - set(FORMS)
        if unknown:
            raise ValueError(f"op {spec.name!r}: unknown call forms {sorted(unknown)}")
        if spec.call.usual and spec.call.usual not in spec.call.forms:
            raise ValueError(
                f"op {spec.name!r}: its usual form {spec.call.usual!r} is not one of its forms"
            )
    for port in spec.inputs:
        _check_derivative(spec, port)
    REGISTRY[spec.name] = spec
    for n in names:
        CALLS[n] = spec
    if symbol:
        OPERATORS[symbol] = spec
    for a in spec.call.attributes if spec.call else ():
        ATTRIBUTES[a] = spec
    return spec


def _check_derivative(spec, port):
    """A derivative text's placeholders name params of its op (and a choice's values are the
    param's), and its kind is known: a wrong one is refused when the op is registered."""
    where = f"op {spec.name!r}, input {port.name!r}"
    if port.derivative_kind not in DERIVATIVE_KINDS:
        raise ValueError(f"{where}: derivative kind {port.derivative_kind!r} is not known")
    if port.derivative_scalar and spec.extra.get("scalar_for") in (None, port.name):
        raise ValueError(f"{where}: derivative_scalar needs a scalar_for port other than this")
    for text in (port.derivative, port.derivative_scalar):
        try:
            found = placeholders(text)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        for name, values in found:
            param = spec.param(name)
            if param is None:
                raise ValueError(f"{where}: derivative {text!r} names {name!r}, not a param")
            if values is None:
                continue
            allowed = param.choices or ((True, False) if param.type == "bool" else ())
            known = {json.dumps(v) if not isinstance(v, str) else v for v in allowed}
            if not set(values) <= known:
                raise ValueError(f"{where}: {name!r} has no value {sorted(set(values) - known)}")


def get(name) -> OpSpec | None:
    return REGISTRY.get(name)


def called(name) -> OpSpec | None:
    """The op a call by `name` (an op name or an alias) makes; None for no op."""
    return CALLS.get(name)


def by_operator(symbol) -> OpSpec | None:
    """The op a Python operator (`+`, `@`, `>`) writes; None for no op."""
    return OPERATORS.get(symbol)


def by_attribute(name) -> OpSpec | None:
    """The op a tensor attribute (`x.T`) is; None for none."""
    return ATTRIBUTES.get(name)


def all_ops():
    return list(REGISTRY.values())
