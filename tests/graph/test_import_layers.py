"""The layout's promises, read from the source: no module of the graph layer, the server or the
notebook package imports another round a circle (imports inside functions count: a circle
closed late is still a circle), and each package of the graph layer imports only the layers
above it (backend/graph/__init__.py and docs/architecture.md say which)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# each subpackage (or top-level module) of backend.graph and what it may import of the layer
GRAPH_LAYERS = {
    "registry": set(),
    "limits": set(),
    "op_context": {"limits"},
    "ops": {"registry", "op_context", "limits"},
    "document": {"registry", "op_context", "limits"},
    "running": {"registry", "op_context", "limits", "ops", "document", "_observe", "_tables"},
    "importing": {"registry", "limits", "ops", "document"},
    "export": {"registry", "op_context", "limits", "ops", "document", "running", "importing"},
    "tracing": {"registry", "ops", "document"},
}


def _modules(*packages):
    found = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name, path, known):
    """The modules of `known` that `name` imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            # a module's own package runs first anyway: importing it is no edge
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


def _graph(*packages):
    modules = _modules(*packages)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _a_cycle(graph):
    """One import circle as a list of modules, or None."""
    state = {}
    stack = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("package", ["backend", "wiregrad"])
def test_no_import_circles(package):
    cycle = _a_cycle(_graph(package))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_a_circle_is_found():
    assert _a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_cycle({"a": {"b"}, "b": set()}) is None


def test_graph_packages_import_only_the_layers_above():
    graph = {n: t for n, t in _graph("backend").items() if n.startswith("backend.graph.")}
    wrong = []
    for name, targets in graph.items():
        layer = name.split(".")[2]
        assert layer in GRAPH_LAYERS or layer in ("_observe", "_tables"), f"{layer} has no layer"
        for target in targets:
            other = target.split(".")[2] if target.startswith("backend.graph.") else target
            if other != layer and other not in GRAPH_LAYERS.get(layer, ()):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_graph_layer_never_imports_flask():
    for path in (ROOT / "backend" / "graph").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0].startswith("flask") for n in names), path
