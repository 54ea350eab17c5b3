"""`for i in range(...)` loops read from code: unrolled, as define-by-run records them. Each
step reads the body again with the loop variable written in as its number (so `x * i`,
`x.sum(dim=i)`, `range(i)` of an inner loop and `layers[i]` all see a Python int), and each
assignment makes new nodes (`x = x * 2` five times: x, x_2, ... x_5). The steps together may
make at most the document's node limit of nodes."""

import ast
import copy

from ..limits import DEFAULT
from .problems import Unsupported
from .syntax import literal

_HOW = "write `for i in range(n):` with whole numbers (range(a, b) and range(a, b, step) too)"
# statements a step cannot hold: the unrolled graph has no way to leave a step early
_JUMPS = (ast.Break, ast.Continue, ast.Return)


class LoopReader:
    def __init__(self, imp, max_nodes=DEFAULT.max_nodes):
        self.imp = imp  # the statement walker (importer._Importer)
        self.max_nodes = max_nodes

    def for_statement(self, stmt):
        """Unroll the loop; the variable its last step bound (as statements() returns)."""
        name = self._loop_variable(stmt)
        steps = self._steps(stmt.iter)
        graph, last = self.imp.graph, None
        for value in steps:
            if len(graph.nodes) > self.max_nodes:
                raise Unsupported(
                    f"the loop unrolls to more than {self.max_nodes:,} nodes, the limit of a "
                    "document: loop over fewer steps"
                )
            before = len(self.imp.problems)
            last = self.imp.statements(_with_value(stmt.body, name, value))
            if len(self.imp.problems) > before:
                break  # a line that fails in one step fails in all: reported once
        self.imp.current_line = stmt.lineno
        self.imp.env.pop(name, None)  # the loop variable is a number, not a node
        return last

    def _loop_variable(self, stmt):
        if stmt.orelse:
            raise Unsupported("a for loop's else is not supported: write its lines after it")
        if not isinstance(stmt.target, ast.Name):
            raise Unsupported(f"loop over one variable: {_HOW}")
        name = stmt.target.id
        for node in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            if isinstance(node, _JUMPS):
                kind = type(node).__name__.lower()
                raise Unsupported(f"{kind} inside a loop is not supported: every step runs whole")
            if (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                raise Unsupported(f"the loop assigns its own variable '{name}'")
        return name

    def _steps(self, it):
        """The range a loop runs over, checked against the node limit before any step."""
        if not (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and 1 <= len(it.args) <= 3
            and not it.keywords
        ):
            raise Unsupported(f"only loops over a range of constant numbers are read: {_HOW}")
        try:
            bounds = [literal(a) for a in it.args]
        except Unsupported:
            raise Unsupported(f"the range must be of constant whole numbers: {_HOW}") from None
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise Unsupported(f"the range must be of whole numbers: {_HOW}")
        if len(bounds) == 3 and bounds[2] == 0:
            raise Unsupported("range() step must not be zero")
        steps = range(*bounds)
        try:
            count = len(steps)
        except OverflowError:  # more steps than an index holds
            count = None
        if count is None or count > self.max_nodes:
            raise Unsupported(
                f"the loop runs {'too many' if count is None else f'{count:,}'} steps, more "
                f"than the {self.max_nodes:,} nodes a document may hold: loop over fewer steps"
            )
        return steps


class _Substitute(ast.NodeTransformer):
    """The loop variable, where it is read, replaced by its value in this step."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant(self.value), node)
        return node


def _with_value(body, name, value):
    """A copy of the loop body with `name` read as the number `value` (line numbers kept)."""
    sub = _Substitute(name, value)
    return [sub.visit(copy.deepcopy(s)) for s in body]
