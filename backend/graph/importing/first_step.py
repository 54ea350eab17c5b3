"""A training loop whose forward is inside it (the tutorials' classic loop), read as its first
step:

    optimizer = optim.SGD(net.parameters(), lr=0.001)
    for epoch in range(2):                          epoch = 0
        for i, data in enumerate(trainloader, 0):   i = 0; data = trainloader[0]
            inputs, labels = data
            optimizer.zero_grad()
            outputs = net(inputs)                   the graph: the forward, the loss and its
            loss = criterion(outputs, labels)       backward of the first batch, from the
            loss.backward()                         parameters' first values
            optimizer.step()                        ... where reading stops

Read so where the loss is computed in the loop only (an exported script computes its graph
before the loop as well: its loop is the training settings alone). The document is the model
before its training (training_loop.py reads the loop into the training settings where it can,
else says why in a note): its loss and gradients are those the script computes at its first
step, before the first step() changes the parameters. Each loop is entered at its first item,
as Python enters it: `range(a, ...)` at a (a range of no steps is a loop that never runs:
nothing is read), `enumerate(xs, s)` at (s, xs[0]), any other sequence at its first item
`xs[0]` (a list of batches, a tensor's first row; a DataLoader, which the importer cannot
read, is a problem at its line)."""

import ast

from .constants import NOT
from .problems import Unsupported
from .syntax import dotted


def forward_inside(loop, env):
    """Whether a training loop (an ast.For) computes the tensor its backward() is called on,
    and only there: the name is assigned in the loop's lines and names no node before it (an
    exported script computes its graph before the loop, then again inside it)."""
    names = set()
    assigned = set()
    for n in ast.walk(loop):
        f = getattr(n, "func", None)
        if isinstance(f, ast.Attribute) and f.attr == "backward" and isinstance(f.value, ast.Name):
            names.add(f.value.id)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            assigned.add(n.id)
    return bool(names) and names <= assigned and not any(env.get(n) for n in names)


def read_first_step(section, constants, known, read):
    """Read (with `read(statements)`) the first step of the section's loop (its last
    statement): the lines between the optimizer and the loop, then the loop's lines entered at
    their first items up to the optimizer's step(); `known(name)`: whether a name holds a tensor,
    a list or a constant read so far. False where the loop never runs."""
    *before, loop = section
    made = {t.id for s in before if isinstance(s, ast.Assign) for t in s.targets if _name(t)}
    stepped = {
        n.func.value.id
        for n in ast.walk(loop)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "step"
        and _name(n.func.value) and n.func.value.id in made
    }  # fmt: skip
    opt_line = max(i for i, s in enumerate(before) if _makes_optimizer(s, stepped))
    read(
        [
            s
            for i, s in enumerate(before)
            if i > opt_line or (isinstance(s, ast.Assign) and _number(s.value, constants))
        ]
    )
    return _entered(loop, constants, stepped, known, read)


def _entered(loop, constants, stepped, known, read):
    """Read a `for` loop's lines as its first iteration runs them (the loop variable bound to
    its first item), to its optimizer's step(); False where it has no first item."""
    first = _first_item(loop.target, loop.iter, constants, known)
    if first is None:
        return False
    read(first)
    for s in loop.body:
        if isinstance(s, ast.For) and _steps(s, stepped):
            return _entered(s, constants, stepped, known, read)
        if _steps(s, stepped):
            if not _is_step_call(s, stepped):
                raise Unsupported(
                    "the optimizer's step() is read where it ends the loop's first step: "
                    "a line of its own in the loop"
                )
            return True
        read([s])
    return True


def _first_item(target, it, constants, known):
    """The assignments that bind `target` to the first item of `it`; None where `it` is a
    range of no items."""
    if isinstance(it, ast.Call) and dotted(it.func) == "range" and not it.keywords:
        bounds = [constants.value(a) for a in it.args]
        if not 1 <= len(bounds) <= 3 or not all(type(b) is int for b in bounds):
            raise Unsupported("loop over range(<whole numbers>) or a list of batches")
        r = range(*bounds) if bounds[-1] != 0 or len(bounds) < 3 else None
        if r is None:
            raise Unsupported("range() arg 3 must not be zero")
        return [_assign(target, ast.Constant(r[0]), it)] if len(r) else None
    if isinstance(it, ast.Call) and dotted(it.func) == "enumerate" and it.args:
        start = it.args[1] if len(it.args) > 1 else _keyword(it, "start") or ast.Constant(0)
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            raise Unsupported("unpack enumerate() into two names: for i, batch in enumerate(...)")
        rest = _first_item(target.elts[1], it.args[0], constants, known)
        return None if rest is None else [_assign(target.elts[0], start, it), *rest]
    if isinstance(it, ast.Name) and not known(it.id):
        raise Unsupported(
            f"the training loop's first batch: '{it.id}' is no list of batches or tensor read "
            "here (a DataLoader is not read: write the batches as a list of (inputs, labels))"
        )
    item = ast.Subscript(value=it, slice=ast.Constant(0), ctx=ast.Load())
    return [_assign(target, item, it)]


def _assign(target, value, where):
    stmt = ast.Assign(targets=[target], value=value)
    for n in ast.walk(stmt):
        if isinstance(n, (ast.expr, ast.stmt)):
            ast.copy_location(n, where)
    return stmt


def _name(node):
    return isinstance(node, ast.Name)


def _keyword(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _number(node, constants):
    v = constants.value(node)
    return v is not NOT and isinstance(v, (int, float)) and not isinstance(v, bool)


def _makes_optimizer(stmt, stepped):
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id in stepped
    )


def _steps(stmt, stepped):
    """Whether a statement calls <optimizer>.step() anywhere in it."""
    return any(_step_call(n, stepped) for n in ast.walk(stmt))


def _is_step_call(stmt, stepped):
    return isinstance(stmt, ast.Expr) and _step_call(stmt.value, stepped)


def _step_call(node, stepped):
    f = getattr(node, "func", None)
    return (
        isinstance(node, ast.Call)
        and isinstance(f, ast.Attribute)
        and f.attr == "step"
        and isinstance(f.value, ast.Name)
        and f.value.id in stepped
    )
