"""What the layer families share: one run() for every layer op described by a LayerForm
(registry.py), and the params every layer has.

A layer node makes its own `nn` module, as `linear` does (ops/layers.py): through `ctx.module`,
so a run makes it anew and a training keeps it across steps; seeded by the node's `seed`; its
stored state (the params a training wrote back) copied in; its parameters handed to the run as
leaves (`ctx.add_parameters`), so each has its gradient.

train() / eval() (docs/graph-format.md, "Layers"): a node's `mode` param says which; `auto`, the
default, is train() while a training steps and eval() in every other run (a forward or backward
run, validation's dry run, a training's evaluation), as a PyTorch user calls model.train()
before the loop and model.eval() to look at the model.
"""

import inspect
import math

import numpy as np

import engine as eg
from engine import nn

from ..registry import OpSpec, Param, all_ops, register

MODES = ("auto", "train", "eval")
MODE = Param(
    "mode",
    "choice",
    "auto",
    choices=MODES,
    doc="auto: train() while a training steps, eval() in a forward or backward run",
)
SEED = Param("seed", "int", 0, min=0, max=2**31 - 1, doc="seed of PyTorch's default init")


def state_param(name, what):
    return Param(name, "tensor", None, nullable=True, doc=f"trained {what} (else initialised)")


def training_mode(ctx, p):
    """Whether the node's module runs in train() mode (see the module's doc)."""
    mode = p.get("mode") or "auto"
    if mode == "auto":
        return bool(getattr(ctx, "training", False))
    return mode == "train"


def attribute(module, key):
    """The tensor at state_dict key `key` ("out_proj.weight") of `module`; None if absent."""
    obj = module
    for part in key.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def constructor_signature(cls):
    """The signature of `nn.<cls>`'s constructor (with self) as PyTorch documents it: its layer
    op's LayerForm.signature where it has one (RNN, LSTM and GRU take (*args, **kwargs), in
    PyTorch as in the engine), else the class's own."""
    for spec in all_ops():
        form = spec.layer
        if form is not None and cls in form.classes and form.signature is not None:
            return form.signature
    return inspect.signature(getattr(nn, cls).__init__)


def load_state(module, form, p):
    """Copy the node's stored state (its params of `form.state`) into a new module."""
    with eg.no_grad():
        for param, key in form.state:
            value = p.get(param)
            t = attribute(module, key)
            if value is not None and t is not None:
                t.copy_(eg.tensor(value, dtype=t.dtype))


def _frozen(value):
    """A hashable copy of an argument (lists become tuples) for the layer's key."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def layer_run(form, init=None, make=None, forward=None):
    """run() of a layer op: the module `nn.<form.cls>(**form.args(x, p))` (or `make(cls, args,
    dtype)`), seeded by `init(module, generator)`, its stored state loaded; then
    `forward(module, x, p)` (default: module(x))."""

    def run(ctx, ins, p):
        x = ins[0]
        cls, args = form.cls(x, p), form.args(x, p)
        if form.shapes is not None:
            # what this node allocates counts against the per-tensor limit, checked first
            for shape in form.shapes(args).values():
                ctx.check_numel(math.prod(shape))
        dtype = x.dtype if x.dtype.is_floating_point else eg.float32

        def build():
            if make is not None:
                module = make(cls, args, dtype)
            else:
                module = getattr(nn, cls)(**args, dtype=dtype)
            if init is not None:
                init(module, eg.Generator().manual_seed(p.get("seed") or 0))
            load_state(module, form, p)
            return module

        key = (cls, *((k, _frozen(v)) for k, v in args.items()))
        module = ctx.module(key, build)
        ctx.add_parameters(module.named_parameters())
        if form.modes:
            module.train(training_mode(ctx, p))
        return forward(module, x, p) if forward is not None else module(x)

    return run


def register_layer(name, doc, form, params, *, inputs, init=None, make=None, forward=None, **kw):
    """Register layer op `name`: category "neural network", written by the exporter; `inputs`:
    its ports, each with its local derivative."""
    return register(
        OpSpec(
            name,
            "neural network",
            doc,
            inputs,
            run=layer_run(form, init, make, forward),
            code=None,  # written by the exporter (it declares the layer: form)
            params=params,
            layer=form,
            extra={"composite": True},
            **kw,
        )
    )


class SeededDropout(nn.Dropout):
    """nn.Dropout drawing its masks from a generator of its own (seeded by the node), not from
    the engine's global one: a forward run is the same every time, a training draws a new
    mask each step, and no run moves another's random numbers (the server runs several at
    once)."""

    def __init__(self, p=0.5, seed=0):
        super().__init__(p)
        self.rng = np.random.default_rng(seed)  # the node's init sets its seeded generator

    def forward(self, input):
        if not self.training or self.p == 0:
            return input
        if not input.dtype.is_floating_point:
            return super().forward(input)  # PyTorch's error for an integer input
        keep = self.rng.random(tuple(input.shape)) >= self.p
        mask = eg.tensor((keep / (1.0 - self.p)).astype(np.float32), dtype=input.dtype)
        return input * mask.to(input.device)
