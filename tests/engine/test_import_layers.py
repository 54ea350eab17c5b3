"""engine/ has no import circle: the graph of its module-level imports (read with ast, never
run) has no cycle. An import inside a function runs when the function is called, not when its
module loads, so it is no edge here; such an import of an engine module is allowed only with a
comment (on its line or the line above) saying why it is not at the top of the file."""

import ast

from tests._import_graph import ROOT, find_cycle, in_functions, modules, targets
from tests._import_graph import import_graph as _graph

ENGINE = ROOT / "engine"


def import_graph():
    return _graph("engine")


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
    known = modules("engine")
    undocumented = []
    for name, path in known.items():
        if path.suffix != ".py":
            continue
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines), str(path))
        for node in in_functions(tree):
            if not targets(node, name, known) and not (
                isinstance(node, ast.ImportFrom) and node.level
            ):
                continue  # not an engine module (numpy, cupy, the standard library)
            here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
            if "#" not in here and not above.startswith("#"):
                undocumented.append(f"{path.relative_to(ENGINE.parent)}:{node.lineno}")
    assert not undocumented, "imports in functions without a comment saying why: " + ", ".join(
        undocumented
    )
