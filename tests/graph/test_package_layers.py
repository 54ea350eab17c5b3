"""The layout's promises, read from the source: no module of the graph layer, the server or the
notebook package imports another round a circle (imports inside functions count: a circle
closed late is still a circle), and each package of the graph layer imports only the layers
above it (backend/graph/__init__.py and docs/architecture.md say which)."""

import ast

import pytest

from tests._import_graph import ROOT, find_cycle, import_graph

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


@pytest.mark.parametrize("package", ["backend", "wiregrad"])
def test_no_import_circles(package):
    cycle = find_cycle(import_graph(package, functions=True))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_graph_packages_import_only_the_layers_above():
    graph = import_graph("backend", functions=True)
    graph = {n: t for n, t in graph.items() if n.startswith("backend.graph.")}
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
