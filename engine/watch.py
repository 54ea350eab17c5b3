"""The engine's public API for tools that watch autograd at work (not a PyTorch API).

Wiregrad's graph layer is such a tool: it runs a user's graph on the engine, then reports the
value on every edge and the gradient the backward pass sends along it. Everything it needs from
the engine beyond PyTorch's own API is here, so that the engine's private names can change
without breaking it:

- `observe_backward(fn)`: a context manager; within it, every node a backward pass in this
  thread runs (AccumulateGrad aside) calls `fn(node, grad_inputs, grad_outputs)` once, right
  after its post-hooks. One call per node with nothing registered: cheaper than a hook on each
  of thousands of nodes.
- `accumulator_of(t)`: the `AccumulateGrad` node of a leaf that requires grad (made on first
  use, then the same object while the leaf lives), i.e. what a consumer's `next_functions`
  points at for that leaf.
- `array_of(t)`: the tensor's array itself (numpy on the CPU, cupy on "cuda"), no copy and no
  grad check: what `t.detach().numpy()` reads, without making a tensor. Do not write into it.
- `requires_grad_of(t)`: `t.requires_grad`, as a C getter: for loops over thousands of
  tensors, where the property costs as much again.
- `from_array(a, requires_grad=False)`: a tensor around an existing array, no copy.
- `version(t)`: the tensor's version counter (`t._version` in PyTorch).
- `version_counter(t)`: the counter object itself, shared by the tensors that count writes
  together (a tensor, its views, what detach made of it), or None while the tensor has never
  been viewed or written: compare with `is` to ask "does this write reach that tensor".
- `stale_saved(fn)`: where a backward pass from `fn` fails with "modified by an inplace
  operation": the newest node behind `fn` holding a saved tensor whose version moved since it
  was saved, as (node, tensor, saved version, version now), or None.
- `alias(t)`: the same storage under an engine node of its own (AliasBackward0): a place to
  watch one use of a tensor, e.g. the gradient that flows along one edge of a graph.
"""

from operator import attrgetter

from ._tensor import version, wrap
from .autograd.graph import AccumulateGrad, Node, accumulator_of, observe_backward
from .ops.shape import alias

__all__ = [
    "AccumulateGrad",
    "Node",
    "accumulator_of",
    "alias",
    "array_of",
    "from_array",
    "observe_backward",
    "requires_grad_of",
    "stale_saved",
    "version",
    "version_counter",
]


# a C getter rather than a def: as cheap as reading the attribute, also where a tool maps it
# over thousands of tensors
array_of = attrgetter("_data")
requires_grad_of = attrgetter("_requires_grad")


def from_array(a, requires_grad=False):
    return wrap(a, requires_grad)


def version_counter(t):
    return t._vc


def stale_saved(fn):
    stale, seen, stack = None, set(), [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        versions = node._versions
        for i, t in enumerate(node._saved or ()):
            want = 0 if versions is None else versions[i]
            have = version(t)
            if have != want and (stale is None or node._seq > stale[0]._seq):
                stale = (node, t, want, have)
        stack.extend(f for f, _ in node.next_functions)
    return stale
