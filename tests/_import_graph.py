"""Which module imports which, read from the source with `ast` (never run), and the circles in
it: the layout tests of the engine (tests/engine/test_import_layers.py) and of the graph layer,
the server and the notebook package (tests/graph/test_package_layers.py)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules(*packages):
    """Every module of `packages` (folders under the repository root) by dotted name: its .py
    file, or for a compiled one (built from a .c file by `pip install`, optional) its .c source,
    which imports nothing."""
    found = {}
    for package in packages:
        base = ROOT / package
        for path in sorted(base.rglob("*.c")) + sorted(base.rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def loaded_at_import(tree):
    """The import statements a module runs when it loads: its body, class bodies and the
    branches of top-level if/try/with, not function bodies."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        else:
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    stack.extend(handler.body)


def in_functions(tree):
    """The import statements inside functions: they run when the function is called."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def _absolute(node, name, known):
    """The absolute module name of an ImportFrom's `from` part in module `name`."""
    if node.level == 0:
        return node.module
    package = name if known[name].name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def targets(node, name, known):
    """The modules of `known` an import statement in module `name` makes run. A package that
    is an ancestor of `name` is already loading when `name` runs, so importing a submodule from
    it is no edge to it; reading any other name from a package needs its __init__ to have run."""
    ancestors = {name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)}
    if isinstance(node, ast.Import):
        found = []
        for alias in node.names:
            parts = alias.name.split(".")
            found += [".".join(parts[: i + 1]) for i in range(len(parts))]
        return {m for m in found if m in known and m not in ancestors}
    base = _absolute(node, name, known)
    if base not in known:
        return set()
    out = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in known:
            out.add(sub)
            if base not in ancestors:
                out.add(base)
        else:
            out.add(base)
    if base not in ancestors:
        parts = base.split(".")
        out |= {".".join(parts[: i + 1]) for i in range(len(parts) - 1)} - ancestors
    return out - {name}


def import_graph(*packages, functions=False):
    """{module: the modules it imports}: those it runs when it loads, and with `functions` also
    those its functions import when called (a circle closed late is still a circle)."""
    known = modules(*packages)
    graph = {}
    for name, path in known.items():
        if path.suffix != ".py":
            graph[name] = set()
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        nodes = list(loaded_at_import(tree)) + (list(in_functions(tree)) if functions else [])
        graph[name] = set().union(*(targets(n, name, known) for n in nodes))
    return graph


def find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    state = {}  # 1: on the current path, 2: done
    path = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n) :] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None
