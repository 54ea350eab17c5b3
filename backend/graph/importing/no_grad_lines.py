"""Lines computed under `with torch.no_grad():` that make tensors (not the weight copies of
layers.py, nor a training loop's updates, training_loop.py):

    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani

Each tensor variable the block reads is read through a `detach` node (the same values, no
gradient back), so what the block computes holds no path to a leaf, as under no_grad; the
names it assigns are its results after it, the others name their nodes as before."""

import ast


def claims(imp, stmt):
    """Whether `stmt` is a no_grad block of plain assignments (x = <expression>)."""
    if not (isinstance(stmt, ast.With) and len(stmt.items) == 1):
        return False
    item = stmt.items[0]
    if item.optional_vars is not None or not imp.modules.is_call(
        item.context_expr, "lib", "no_grad"
    ):
        return False
    return all(
        isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        for s in stmt.body
    )


def read(imp, stmt):
    """The block's lines, each tensor variable they read detached first."""
    before = {}
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            nid = imp.env.get(node.id)
            if nid is not None and node.id not in before:
                before[node.id] = nid
    assigned = {s.targets[0].id for s in stmt.body if isinstance(s.targets[0], ast.Name)}
    for name, nid in before.items():
        imp.current_line = stmt.lineno
        imp.env[name] = imp.add_node("detach", {}, [("input", nid)], f"{name}_detached")
    try:
        imp.statements(stmt.body)
    finally:
        for name, nid in before.items():
            if name not in assigned:
                imp.env[name] = nid
    return None
