"""The backward pass: dependency-counted, in reverse topological order.

Nodes become ready when every consumer has sent its gradient; among ready nodes the most recently
created runs first (PyTorch's order), so hooks fire in the order a PyTorch user sees. Gradients
reaching the same output are summed. With `create_graph` the whole pass runs with grad mode on, so
the engine ops inside each backward formula record a graph of their own.
"""

import heapq

from .. import _tensor
from .grad_mode import STATE
from .graph import OBSERVER, AccumulateGrad, edge_of


def run_backward(
    outputs,
    grad_outputs,
    retain_graph,
    create_graph,
    inputs=None,
    allow_unused=False,
    accumulate=True,
):
    """Propagate `grad_outputs` from `outputs`. With `inputs`, return their gradients instead of
    accumulating into `.grad` (autograd.grad); only the part of the graph they need is run."""
    roots = []
    for i, out in enumerate(outputs):
        node, nr = edge_of(out)
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append((node, nr))

    # state[node] = [edges still to arrive, grad for output 0, grad for output 1, ...]
    state = _count_dependencies([node for node, _ in roots])
    for (node, nr), g in zip(roots, grad_outputs):
        slot = state[node]
        slot[nr + 1] = g if slot[nr + 1] is None else slot[nr + 1] + g

    captures = needed = None
    if inputs is not None:
        captures = {}
        for k, t in enumerate(inputs):
            node, nr = edge_of(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            captures.setdefault(node, []).append((k, nr))
        needed = _needed_nodes([node for node, _ in roots], captures)
    results = [None] * (len(inputs) if inputs is not None else 0)

    ready = []
    for node, _ in roots:
        if state[node][0] == 0 and (-node._seq, node) not in ready:
            heapq.heappush(ready, (-node._seq, node))

    prev_enabled = STATE.enabled
    STATE.enabled = bool(create_graph)
    try:
        _loop(ready, state, retain_graph, create_graph, captures, needed, results, accumulate)
    finally:
        STATE.enabled = prev_enabled

    if inputs is not None and not allow_unused:
        for k, r in enumerate(results):
            if r is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
    return results


def _loop(ready, state, retain_graph, create_graph, captures, needed, results, accumulate):
    """The hot loop: one iteration per node. Everything rare (hooks, captures, dtype casts) sits
    behind one check each, so a common node costs little more than its own backward formula."""
    pop, push, wrap = heapq.heappop, heapq.heappush, _tensor.wrap
    observe = OBSERVER.fn  # graph.observe_backward
    while ready:
        node = pop(ready)[1]
        grads = state.pop(node)
        del grads[0]
        if node.__class__ is AccumulateGrad:
            var = node.variable
            if var._hooks and grads[0] is not None:
                grads[0] = _run_tensor_hooks(var._hooks, grads[0])
            if node._has_hooks:
                _run_pre_hooks(node, grads)
            if captures is not None:
                for k, _ in captures.get(node, ()):
                    results[k] = grads[0]
            elif accumulate and grads[0] is not None:
                node.backward(grads[0])
            continue
        if node._has_hooks:
            _run_pre_hooks(node, grads)
        if captures is not None:
            for k, nr in captures.get(node, ()):
                results[k] = grads[nr]
            if node not in needed:
                continue
        if grads[0] is None and all(g is None for g in grads):
            # nothing arrived (a consumer returned None): pass None on, still count the edges
            grad_inputs = (None,) * len(node.next_functions)
        else:
            grad_inputs = node.backward(grads[0]) if node.single_output else node.apply(grads)
            if node._has_hooks and node._hooks:
                for fn in list(node._hooks.values()):
                    r = fn(grad_inputs, tuple(grads))
                    if r is not None:
                        grad_inputs = tuple(r)
            if observe is not None:
                observe(node, grad_inputs, grads)
            if node.casts is not None:
                grad_inputs = tuple(
                    g if c is None or g is None else g.to(c)
                    for g, c in zip(grad_inputs, node.casts)
                )
        if not retain_graph and node._saved:
            node._saved = None
        for (nxt, nr), g in zip(node.next_functions, grad_inputs):
            if nxt is None:
                continue
            slot = state[nxt]
            if g is not None:
                old = slot[nr + 1]
                if old is None:
                    slot[nr + 1] = g
                elif create_graph:
                    slot[nr + 1] = old + g
                else:  # same shape by construction: add the arrays, skip the op machinery
                    slot[nr + 1] = wrap(old._data + g._data)
            left = slot[0] - 1
            slot[0] = left
            if left == 0 and (needed is None or nxt in needed):
                push(ready, (-nxt._seq, nxt))
        # drop this node's references to the gradients it sent, so that a leaf can take its
        # gradient without a copy when nothing else holds it (AccumulateGrad checks refcounts)
        grad_inputs = g = old = None


def _run_pre_hooks(node, grads):
    """Tensor hooks, then retain_grad, then the node's own pre-hooks, as PyTorch orders them."""
    if node._tensor_pre_hooks:
        for nr, fn in list(node._tensor_pre_hooks.values()):
            if grads[nr] is not None:
                r = fn(grads[nr])
                if r is not None:
                    grads[nr] = r
    if node._retains_grad_hooks:
        for nr, fn in list(node._retains_grad_hooks.items()):
            if grads[nr] is not None:
                fn(grads[nr])
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads[:] = list(r)


def _run_tensor_hooks(hooks, grad):
    for fn in list(hooks.values()):
        r = fn(grad)
        if r is not None:
            grad = r
    return grad


def _count_dependencies(roots):
    """For each node reachable from the roots: [number of edges pointing at it, then one empty
    gradient slot per output]."""
    state = {root: [0] + [None] * root.num_outputs for root in roots}
    stack = list(state)
    push, pop = stack.append, stack.pop
    while stack:
        for nxt, _ in pop().next_functions:
            if nxt is None:
                continue
            slot = state.get(nxt)
            if slot is None:
                state[nxt] = [1] + [None] * nxt.num_outputs
                push(nxt)
            else:
                slot[0] += 1
    return state


def _needed_nodes(roots, captures):
    """Nodes on some path from a root to a captured input: the only ones autograd.grad runs."""
    needed = set(captures)
    order = []
    seen = set()
    stack = [(r, False) for r in roots]
    while stack:  # iterative post-order, so a node is decided after all it leads to
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((n, False) for n, _ in node.next_functions if n is not None and n not in seen)
    for node in order:
        if any(n in needed for n, _ in node.next_functions if n is not None):
            needed.add(node)
    return needed
