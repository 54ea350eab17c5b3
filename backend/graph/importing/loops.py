"""`for i in range(...)` loops read from code: unrolled, as define-by-run records them. Each
step reads the body again with the loop variable written in as its number (so `x * i`,
`x.sum(dim=i)`, `range(i)` of an inner loop and `layers[i]` all see a Python int), and each
assignment makes new nodes (`x = x * 2` five times: x, x_2, ... x_5). The steps together may
make at most the document's node limit of nodes. `for layer in self.layers:` (and
`self.layers[1:]`, `enumerate(self.layers)`) over an nn.ModuleList (module_lists.py) reads
`layer` as each element's variable in turn."""

import ast
import copy

from ..limits import DEFAULT
from .constants import literal_node
from .problems import GraphTooBig, Unsupported
from .syntax import is_literal, literal

_HOW = (
    "write `for i in range(n):` with whole numbers (range(a, b) and range(a, b, step) too), "
    "or `for layer in self.layers:` over an nn.ModuleList"
)
# statements a step cannot hold: the unrolled graph has no way to leave a step early
_JUMPS = (ast.Break, ast.Continue, ast.Return)


class LoopReader:
    def __init__(self, imp, max_nodes=DEFAULT.max_nodes):
        self.imp = imp  # the statement walker (importer._Importer)
        self.max_nodes = max_nodes

    def for_statement(self, stmt):
        """Unroll the loop; the variable its last step bound (as statements() returns)."""
        names, steps = self._plan(stmt)
        graph, last = self.imp.graph, None
        too_many = Unsupported(
            f"the loop unrolls to more than {self.max_nodes:,} nodes, the limit of a "
            "document: loop over fewer steps"
        )
        for values in steps:
            if len(graph.nodes) > self.max_nodes:
                raise too_many
            before = len(self.imp.problems)
            try:
                last = self.imp.statements(_with_values(stmt.body, dict(zip(names, values))))
            except GraphTooBig:
                raise too_many from None  # said at the loop's line, which is what to change
            if len(self.imp.problems) > before:
                break  # a line that fails in one step fails in all: reported once
        self.imp.current_line = stmt.lineno
        for name in names:
            self.imp.env.pop(name, None)  # the loop variable is a number, not a node
        return last

    def _plan(self, stmt):
        """(the loop's variables, per step the ast node each reads as): a number of a range,
        a module of a module list (`for layer in self.layers`), or both (enumerate)."""
        it, target = stmt.iter, stmt.target
        enum = (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "enumerate"
            and len(it.args) == 1
            and not it.keywords
        )
        if enum and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            names = self._loop_variables(stmt, target.elts)
            modules = self.imp.lists.steps(it.args[0])
            items = self._constant_items(it.args[0]) if modules is None else None
            if items is not None:  # for li, letter in enumerate(line), line a constant
                return names, [(ast.Constant(i), literal_node(v, it)) for i, v in enumerate(items)]
            if modules is None:
                raise Unsupported(f"enumerate() is read over a module list only: {_HOW}")
            return names, [(ast.Constant(i), _name(m)) for i, m in enumerate(modules)]
        names = self._loop_variables(stmt, [target])
        modules = self.imp.lists.steps(it)
        if modules is None:
            modules = self.imp.nn.sequence_steps(it)  # for layer in net: nn.Sequential's
        if modules is not None:
            return names, [(_name(m),) for m in modules]
        if _tensors(it, self.imp.env):  # a list of tensors, as tensor_lists.py writes it out
            return names, [(e,) for e in it.elts]
        if isinstance(it, ast.Name) and it.id in self.imp.env:  # for X in inputs: its rows
            n = self.imp.shapes.shape(it.id)[:1]
            if not n:
                raise Unsupported("iteration over a 0-d tensor")
            if n[0] > self.max_nodes:
                raise Unsupported(f"the loop runs more than {self.max_nodes:,} steps")
            rows = [
                ast.Subscript(value=it, slice=ast.Constant(i), ctx=ast.Load()) for i in range(n[0])
            ]
            return names, [(ast.copy_location(r, it),) for r in rows]
        items = self._constant_items(it)
        if items is not None:  # for letter in "abc", for s in sizes (constants)
            return names, [(literal_node(v, it),) for v in items]
        return names, [(ast.Constant(v),) for v in self._steps(it)]

    def _constant_items(self, it):
        """The items of a constant string, list or tuple a loop walks; None for another."""
        v = self.imp.constants.value(it)
        if isinstance(v, (str, list, tuple, range)) and not isinstance(it, ast.Call):
            if len(v) > self.max_nodes:
                raise Unsupported(f"the loop runs more than {self.max_nodes:,} steps")
            return list(v)
        return None

    def _loop_variables(self, stmt, targets):
        if stmt.orelse:
            raise Unsupported("a for loop's else is not supported: write its lines after it")
        if not all(isinstance(t, ast.Name) for t in targets):
            raise Unsupported(f"loop over one variable: {_HOW}")
        names = [t.id for t in targets]
        for node in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            if isinstance(node, _JUMPS):
                kind = type(node).__name__.lower()
                raise Unsupported(f"{kind} inside a loop is not supported: every step runs whole")
            if (
                isinstance(node, ast.Name)
                and node.id in names
                and not isinstance(node.ctx, ast.Load)
            ):
                raise Unsupported(f"the loop assigns its own variable '{node.id}'")
        return names

    def _steps(self, it):
        """The range a loop runs over, checked against the node limit before any step; or
        the values of a constant tuple or list (`for s in x.size()[1:]`, shapes.py)."""
        if isinstance(it, (ast.Tuple, ast.List)) and is_literal(it):
            values = literal(it)
            if len(values) > self.max_nodes:
                raise Unsupported(f"the loop runs more than {self.max_nodes:,} steps")
            return values
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
    """The loop variables, where they are read, replaced by their value in this step."""

    def __init__(self, values):
        self.values = values

    def visit_Name(self, node):
        if node.id in self.values and isinstance(node.ctx, ast.Load):
            return ast.copy_location(copy.copy(self.values[node.id]), node)
        return node


def _with_values(body, values):
    """A copy of the loop body with each variable read as its value in the step (an ast
    node: a number, or the name of a module list's element); line numbers kept."""
    sub = _Substitute(values)
    return [sub.visit(copy.deepcopy(s)) for s in body]


def _tensors(it, env):
    """Whether a loop's sequence is a list of tensors written out (their variables)."""
    return (
        isinstance(it, (ast.List, ast.Tuple))
        and bool(it.elts)
        and all(isinstance(e, ast.Name) and e.id in env for e in it.elts)
    )


def _name(variable):
    return ast.Name(id=variable, ctx=ast.Load())
