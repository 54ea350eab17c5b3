"""Live PyTorch code as a graph document: `trace(fn, *example_inputs)`.

`fn` (an `nn.Module`, or any callable taking tensors) runs once in PyTorch on the example
inputs, captured by torch.fx with a real value at every node (capture.py); each call becomes the
registry op it is (nodes.py, layers.py), the classes a person wrote become module definitions
(modules.py), the module's parameters and buffers are the values, the inputs are leaves and the
output is the target. Needs PyTorch (`pip install wiregrad[torch]`); nothing here runs without
it, and nothing else in `backend.graph` imports it."""

from collections import Counter

from .. import registry
from .capture import CaptureError, capture
from .layers import layer_classes
from .modules import group_modules
from .nodes import NodeBuilder

__all__ = ["CaptureError", "trace"]


def trace(fn, *example_inputs, name=None):
    """The graph document (a dict) of `fn` run on `example_inputs`. CaptureError says what
    could not be drawn, at its module path (`model.blocks.3.attn: ...`)."""
    import torch

    leaf = layer_classes()
    cap = capture(fn, list(example_inputs), set(leaf))
    calls = Counter(n.target for n in cap.graph.nodes if n.op == "call_module")
    twice = sorted(t for t, k in calls.items() if k > 1)
    if twice:
        raise CaptureError(
            f"model.{twice[0]}: the layer is called {calls[twice[0]]} times; its weights would be "
            "shared between the calls, which a layer node cannot do (make one layer per call, "
            "or write its weights as nn.Parameter tensors)"
        )
    builder = NodeBuilder(cap, leaf)
    built, out = builder.build()
    if out[0] == "tuple":
        first = next((p for p in out[1] if p[0] == "node"), None)
        out = first or out
    if out[0] != "node":
        raise CaptureError("model: its output is not a tensor")
    target = out[1]
    layer_ids = {n["id"] for n in built.nodes if _is_layer(n["op"])}
    nodes, edges, modules, target = group_modules(built, target, layer_ids)
    for n in nodes:
        n.setdefault("position", {"x": 0, "y": 0})
    for d in modules:
        for n in d["nodes"]:
            n.setdefault("position", {"x": 0, "y": 0})
    title = name or (type(fn).__name__ if isinstance(fn, torch.nn.Module) else _fn_name(fn))
    doc = {
        "format": "wiregrad.graph",
        "version": 2 if modules else 1,
        "name": title[:200],
        "description": _description(title, example_inputs, cap, builder.notes)[:10000],
        "nodes": nodes,
        "edges": edges,
        "target": target,
    }
    if modules:
        doc["modules"] = modules
    return doc


def _is_layer(op):
    spec = registry.get(op)
    return spec is not None and spec.layer is not None


def _fn_name(fn):
    n = getattr(fn, "__name__", "") or "traced"
    return "a function" if n == "<lambda>" else n


def _description(title, inputs, cap, notes):
    shapes = ", ".join(
        "x".join(str(s) for s in t.shape) or "scalar" if hasattr(t, "shape") else repr(t)
        for t in inputs
    )
    lines = [f"Traced from {title} on inputs of shape {shapes} (wiregrad.trace)."]
    if cap.decisions:
        lines.append(
            "Python control flow went the way the traced run went; another input may go "
            "another way:"
        )
        lines += [f"- {where}: {what}" for where, what in cap.decisions[:50]]
    lines += [f"Note: {n}" for n in notes[:50]]
    return "\n".join(lines)
