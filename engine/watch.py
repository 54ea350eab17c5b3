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
- `from_array(a, requires_grad=False)`: a tensor around an existing array, no copy.
- `version(t)`: the tensor's version counter (`t._version` in PyTorch).
"""

from ._tensor import version, wrap
from .autograd.graph import AccumulateGrad, Node, accumulator_of, observe_backward

__all__ = [
    "AccumulateGrad",
    "Node",
    "accumulator_of",
    "array_of",
    "from_array",
    "observe_backward",
    "version",
]


def array_of(t):
    return t._data


def from_array(a, requires_grad=False):
    return wrap(a, requires_grad)
