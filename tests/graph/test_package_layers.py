"""The layout's promises, read from the source: no module of the graph layer, the server or the
notebook package imports another round a circle (imports inside functions count: a circle
closed late is still a circle), each package of the graph layer imports only the layers above
it (backend/graph/__init__.py and docs/architecture.md say which), and neither the engine nor
the graph layer imports anything of the layers above them."""

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


def _imported_names(package):
    """Every module name `package`'s files import, in functions too, as written."""
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                yield path, [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                yield path, [node.module or ""]


@pytest.mark.parametrize(
    "package, above",
    [
        ("engine", ("backend", "wiregrad", "flask", "flask_socketio")),
        ("backend/graph", ("wiregrad", "flask", "flask_socketio")),
    ],
)
def test_a_layer_imports_nothing_above_it(package, above):
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, names in _imported_names(package)
        for name in names
        if name.split(".")[0] in above or name.startswith("backend.server")
    ]
    assert not wrong, "\n".join(wrong)
