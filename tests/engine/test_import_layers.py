"""engine/ has no import circle: the graph of its module-level imports (read with ast, never
run) has no cycle. An import inside a function runs when the function is called, not when its
module loads, so it is no edge here; such an import of an engine module is allowed only with a
comment (on its line or the line above) saying why it is not at the top of the file."""

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def _module_name(path):
    parts = ["engine", *path.relative_to(ENGINE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
    """Every engine module by name: its .py file, or for a compiled one (built from a .c file by
    `pip install`, optional) its .c source, which imports nothing of the engine."""
    found = {_module_name(p): p for p in sorted(ENGINE.rglob("*.c"))}
    found.update({_module_name(p): p for p in sorted(ENGINE.rglob("*.py"))})
    return found


def _is_package(name, modules):
    return modules[name].name == "__init__.py"


def _absolute(node, name, modules):
    """The absolute module name of an ImportFrom's `from` part in module `name`."""
    if node.level == 0:
        return node.module
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _loaded_at_import(tree):
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


def _in_functions(tree):
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def _targets(node, name, modules):
    """The engine modules an import statement in module `name` makes run. A package that is an
    ancestor of `name` is already loading when `name` runs, so importing a submodule from it is
    no edge to it; reading any other name from a package needs its __init__ to have run."""
    ancestors = {name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)}
    if isinstance(node, ast.Import):
        found = []
        for alias in node.names:
            parts = alias.name.split(".")
            found += [".".join(parts[: i + 1]) for i in range(len(parts))]
        return {m for m in found if m in modules and m not in ancestors}
    base = _absolute(node, name, modules)
    if base not in modules:
        return set()
    targets = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules:
            targets.add(sub)
            if base not in ancestors:
                targets.add(base)
        else:
            targets.add(base)
    if base not in ancestors:
        parts = base.split(".")
        targets |= {".".join(parts[: i + 1]) for i in range(len(parts) - 1)} - ancestors
    return targets


def import_graph():
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        if path.suffix != ".py":
            graph[name] = set()
            continue
        tree = ast.parse(path.read_text(), str(path))
        edges = set()
        for node in _loaded_at_import(tree):
            edges |= _targets(node, name, modules)
        graph[name] = edges - {name}
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
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_graph_sees_the_imports():
    graph = import_graph()
    assert "engine._tensor" in graph["engine.autograd.graph"]
    assert "engine.ops.reduce" in graph["engine.ops._binary"]
    assert "engine.ops._common" in graph["engine.ops.arithmetic"]
    assert "engine.autograd" in graph["engine.ops._common"]  # the package's __init__ runs first
    assert "engine.ops" not in graph["engine.ops.arithmetic"]  # its own package is loading


def test_a_cycle_is_found():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_engine():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_import_in_a_function_says_why():
    modules = _modules()
    undocumented = []
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines), str(path))
        for node in _in_functions(tree):
            if not _targets(node, name, modules) and not (
                isinstance(node, ast.ImportFrom) and node.level
            ):
                continue  # not an engine module (numpy, cupy, the standard library)
            here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
            if "#" not in here and not above.startswith("#"):
                undocumented.append(f"{path.relative_to(ENGINE.parent)}:{node.lineno}")
    assert not undocumented, "imports in functions without a comment saying why: " + ", ".join(
        undocumented
    )
