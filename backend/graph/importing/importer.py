"""Code import: a Python script (engine or PyTorch) read back into a graph document with `ast`.

The script is parsed, never run: no exec, eval or compile-to-run, so importing a hostile script
does nothing. Each assignment becomes a node and its inputs become edges:

    x = eg.tensor(2.0, requires_grad=True)     tensor sources (also zeros/ones/randn/rand/arange)
    X, y = circle(n=200, noise=0.1, seed=0)    a dataset's arrays (a generator of datasets.py,
    d = eg.tensor(X)                           or from_csv): eg.tensor(X) is the dataset node,
    t = eg.tensor(y[:, None])                  and this (or dtype=eg.int64) its labels node
    y = x * w + 1.0                            + - * / ** @, unary -, comparisons
    z = eg.exp(y) / F.relu(y) / y.sum(dim=0)   calls of the op registry's functions and methods
    torch.manual_seed(5); fc = nn.Linear(3, 2)  a linear node, seed 5 (or reset_parameters')
    h = fc(x)                                  (attention_init.py: MultiheadAttention's)
    if cond: ... y = a  else: ... y = b        an `if` node (both branches end assigning y)
    x.add_(1.0); x[0:2] = v; x += 1            in-place nodes, v = x[0:2] (importing/inplace_lines)
    x.T / x.mT / x.item()                      transpose (registry CallForm.attributes), detach
    for i in range(a, b, step): ...            unrolled, i read as its number in each step
    act = nn.ReLU(); loss_fn = nn.MSELoss()    the op of the same name where called
    seq = nn.Sequential(nn.Linear(2, 3), ...)  its layers one after another where called
    class Net(nn.Module): ... ; y = Net()(x)   a module definition and a `module` node per call
    Block(4, d_out=8); nn.ModuleList([...])    constant arguments (a definition per set of them),
    y, z = net(x)                              module lists, several outputs (importing/classes.py)
    L.backward(torch.ones(L.shape))            target, and a lesson step with gradient_ones
    net2.w.copy_(...) under no_grad            an instance's own values: its state
                                               (a layer's seed too: manual_seed, then
                                               net2.fc.reset_parameters(); state_loads.py)
    opt = torch.optim.Adam(...); for step ...  a training loop: the document's training
                                               settings, not nodes (importing/training_loop.py)

The layout block at the end of an exported script (importing/layout_block.py), or a
`# node <id> (x, y) {json}` comment on a line (as older exports wrote), gives the node its id,
position and what the code cannot say (op, label, params). Header docstring, imports, the
`show` helper, prints, `retain_grad`, `zero_grad` and `.backward()` lines are read but make no nodes
(`.backward()` sets the document's target). Anything else is an ImportFailed problem naming
the line and the reason.

This module walks the statements; the readers of each kind of line or expression are in
`importing/` (see its __init__), the in-place lines in importing/inplace_lines.py.
"""

import ast
import time

from .. import registry
from ..document.format import GraphDocument
from ..limits import DEFAULT
from . import no_grad_lines
from .attention_init import AttentionInit
from .branches import IfReader
from .calls import CallReader, on_device, requires_grad_flag
from .classes import ClassReader
from .constants import NOT, ConstantLines, Constants
from .dataset_lines import DATA, DatasetReader
from .expressions import ExpressionReader
from .first_step import forward_inside, read_first_step
from .functions import Functions
from .import_lines import ModuleNames
from .inplace_lines import InplaceLines
from .layers import LayerReader
from .leaf_values import clear_requires_grad, make_leaf
from .loops import LoopReader
from .model_graph import MARK, inlined
from .module_lists import ModuleLists
from .module_modes import set_instance_mode
from .nn_layers import NnLayers
from .nodes import PORT, ImportedGraph
from .problems import ImportFailed, ImportProblem, Unsupported, number_problem
from .random_draws import RandomDraws
from .shapes import NeedsShapes, ShapeModel
from .skipped import Notes, SkippedLines
from .sources import SOURCE_FUNCTIONS, SourceReader
from .state_loads import StateLoads
from .syntax import assigned, dotted, is_literal, is_main_guard, literal, only_output
from .tensor_lists import TensorLists
from .training_loop import TrainingLoop
from .unpacking import TupleLines
from .weights_file import WeightsError, WeightsFile, read_weights

__all__ = ["MAX_SOURCE", "ImportFailed", "ImportProblem", "from_python"]

MAX_SOURCE = 2_000_000  # characters
_Unsupported = Unsupported  # the name this module used to define
# the exporter's own helpers and datasets.py's code, read (never run) where a script has them
_HELPER_DEFS = frozenset({"show", "init_like_engine"} | set(DATA))
_NOT_READ = {
    "While": "while loops are not supported: write `for i in range(n):` (unrolled)",
    "ClassDef": "a class is read at the top of the script only",
}
_BACKWARD_ARGS = (
    "backward() takes no arguments here but gradient=ones_like(x) or torch.ones(x.shape) "
    "(torch. or eg.), x being the tensor backward is called on"
)


def from_python(
    source: str, max_seconds: float = DEFAULT.max_import_seconds, weights=None
) -> GraphDocument:
    """The graph document a script describes (see the module doc); ImportFailed when a line
    cannot be read, or when reading takes longer than `max_seconds`. A script that says its
    graph as one model (model_graph.MARK) reads back as its flat graph. `weights`: the
    `.safetensors` file the script loads from beside it (its bytes, or {name: array}:
    importing/weights_file.py); ImportFailed where that file is not one within the limits."""
    return _import(source, max_seconds, flat=MARK in source.splitlines(), weights=weights)


def _import(source, max_seconds=DEFAULT.max_import_seconds, flat=False, weights=None):
    """The document of `source`; with `flat`, a model class read back as its flat graph
    (importing/model_graph.py) before the training loop is settled against its ids."""
    try:
        tensors = read_weights(weights)
    except WeightsError as bad:
        raise ImportFailed([ImportProblem(0, f"the weights file: {bad}")]) from None
    tree = _parse(source)  # (before the walker starts its clock: parsing is not in the budget)
    return _Importer(source, max_seconds, flat, tensors).run(tree)


def _parse(source):
    """The script's syntax tree; ImportFailed for what is no script or does not parse."""
    if not isinstance(source, str):
        raise ImportFailed([ImportProblem(0, "the script must be text")])
    if len(source) > MAX_SOURCE:
        raise ImportFailed(
            [ImportProblem(0, f"the script is over {MAX_SOURCE:,} characters, the limit")]
        )
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        problem = ImportProblem(exc.lineno or 0, f"syntax error: {exc.msg}", text)
        raise ImportFailed([problem]) from None
    except MemoryError:
        problem = "cannot parse the script: it needs more memory than an import may use"
        raise ImportFailed([ImportProblem(0, problem)]) from None
    except (RecursionError, ValueError) as exc:
        raise ImportFailed([ImportProblem(0, f"cannot parse the script: {exc}")]) from None


def _moved(call):
    """x.to(<device>) / x.cpu() (calls.on_device)."""
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in ("to", "cpu")
        and (on_device(call))
    )


def _sets_requires_grad(target, value):
    """`p.requires_grad = True` or `= False`."""
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "requires_grad"
        and isinstance(target.value, ast.Name)
        and isinstance(value, ast.Constant)
        and isinstance(value.value, bool)
    )


class _Importer:
    """The statement walker: reads each line with the reader for its kind, and holds what the
    readers share (the variables, the graph being built, the line being read)."""

    def __init__(self, source, max_seconds=DEFAULT.max_import_seconds, flat=False, tensors=None):
        self.source = source
        self.weights_file = WeightsFile(self, tensors)  # state_dict = load_file(...)
        self.flat = flat  # the graph as one model (model_graph.MARK): read back flat
        self.graph = ImportedGraph(source)
        self.env = {}  # variable -> node id (None: defined by a line that failed)
        self.problems = []
        self.notes = Notes()  # lines read and skipped (skipped.py), said in the description
        self.target = None
        self.gradient_ones = False  # backward starts from ones of the target's shape
        self.name, self.description = "imported script", ""
        self.deadline = time.perf_counter() + max_seconds  # the import's own time budget
        self.max_seconds = max_seconds
        self.graph.deadline, self.graph.max_seconds = self.deadline, max_seconds
        self.current_var = None
        self.current_line = 0
        self.modules = ModuleNames()
        self.sources = SourceReader(self)
        self.datasets = DatasetReader(self)
        self.layers = LayerReader(self)
        self.exprs = ExpressionReader(self)
        self.calls = CallReader(self)
        self.branches = IfReader(self)
        self.loops = LoopReader(self)
        self.nn = NnLayers(self)  # nn.ReLU(), nn.MSELoss(), nn.Sequential(...), nn.Conv2d(...)
        self.classes = ClassReader(self, type(self))  # nn.Module classes: module definitions
        self.lists = ModuleLists(self)  # nn.ModuleList: modules declared as self.layers.<i>
        # Python constants (`n = 3`, a class's arguments, module lists' lengths): worked out where
        # they are bound and written in where they are read, and an `if` on one picks its branch,
        # as Python does when it runs the script (define-by-run records only what it computed)
        self.constants = Constants()
        self.constant_lines = ConstantLines(self)
        self.writes = InplaceLines(self, Unsupported, literal)  # x.add_(1), x[0] = 5., x += 1
        self.state_loads = StateLoads(self)  # an instance's own values: inst.w.copy_(...)
        self.training = TrainingLoop(self)  # the training loop: the document's settings
        self.functions = Functions(self)  # the script's functions, inlined where called
        self.skipped = SkippedLines(self)  # print, manual_seed, assert ...: noted, skipped
        self.shapes = ShapeModel(self)  # x.size(0), x.shape[-1]: their numbers
        self.tuples = TupleLines(self)  # a, b = b, a; q, k, v = t.split(n, dim=2)
        self.optimizers = set()  # made outside a training loop (no step() of theirs is read)
        self.tensor_lists = TensorLists(self)  # outs.append(h); torch.cat(outs, dim=-1)
        self.random = RandomDraws(self)  # torch.randn(..., generator=g): PyTorch's numbers
        self.attention_init = AttentionInit(self)  # an attention layer seeded in the node's order
        self.seeded_layers = False  # a layer made right after torch.manual_seed(S) (classes.py)

    # -- what the readers call back (inplace_lines.InplaceLines too) ---------------------------
    def problem(self, stmt, message):
        line = getattr(stmt, "lineno", 0)
        self.problems.append(ImportProblem(line, message, self.graph.code_at(line)))

    def node_comment(self, first, last):
        return self.graph.node_comment(first, last)

    def add_node(self, op, params, inputs, meta):
        """A node of `op` on the line being read (see ImportedGraph.add_node)."""
        return self.graph.add_node(op, params, inputs, meta, self.current_line, self.current_var)

    def ref_name(self, name):
        """The node a variable names; Unsupported where it names none."""
        if name not in self.env:
            if name in self.layers.declared:
                raise Unsupported(f"'{name}' is a layer: call it on a tensor")
            raise Unsupported(f"'{name}' is not defined by an earlier line")
        nid = self.env[name]
        if nid is None:
            raise Unsupported(f"uses '{name}', whose line could not be read")
        return nid

    def operand(self, node):
        return self.exprs.operand(node)

    def mark_requires_grad(self, nid, name=None, attribute=False, flag=True):
        """x.requires_grad_() (x.requires_grad = True where `attribute`): on a tensor source,
        its requires_grad param; a computed x, a leaf of its values (leaf_values.py). With
        `flag` False, x.requires_grad_(False): a leaf that stops requiring grad."""
        if not flag:
            return clear_requires_grad(self, nid, name or nid)
        n = self.graph.nodes.get(nid)
        if n is not None and n["op"] == "tensor":
            n["params"]["requires_grad"] = True
            return
        make_leaf(self, nid, name or nid, attribute)

    # -- the script -----------------------------------------------------------------------------
    def run(self, tree):
        body = tree.body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            self.header(first.value.value)
            body = body[1:]
        self.current_line = 0
        body, loop = self.training.split(body)  # a training loop: settings, not nodes
        self.statements(body, top=True)
        if loop is not None and not self.problems and forward_inside(loop[-1], self.env):
            self.first_step(loop)  # (its forward inside: the graph is its first step)
        if self.problems:
            raise ImportFailed(self.problems, self.partial(loop))
        if not self.graph.nodes and self.notes.items:
            # every line was skipped: an empty canvas would look like a failed import
            problems = [ImportProblem(ln, f"{text}", self.graph.code_at(ln))
                        for ln, text in self.notes.items if ln]  # fmt: skip
            summary = "nothing to draw: no line of the script makes a tensor"
            raise ImportFailed([ImportProblem(0, summary), *problems])
        return self.training.settle(self.document(), loop)

    def first_step(self, section):
        """A training loop that computes its loss inside: its first step read as the graph
        (first_step.py), said in a note."""
        loop = section[-1]
        self.current_line = loop.lineno
        self.notes.add(
            loop.lineno,
            f"lines {section[0].lineno}-{loop.end_lineno}: the training loop computes its loss "
            "inside, so the graph is its first step (the forward, loss and backward before the "
            "first step() of the optimizer)",
        )
        try:
            runs = read_first_step(section, self.constants, self._holds_values, self.statements)
        except Unsupported as exc:
            return self.problem(loop, str(exc))
        if not runs:
            self.notes.add(loop.lineno, "the training loop never runs: nothing of it is read")

    def _holds_values(self, name):
        """Whether a name holds a tensor, a list of them or a constant read so far."""
        held = self.env.get(name) or name in self.tensor_lists.lists
        return bool(held) or self.constants.lookup(name) is not NOT

    def document(self):
        """The graph read, flat where the script says its graph as one model (the training
        loop's loss and output then name the flat graph's nodes)."""
        doc = self.graph.document(
            self.name, self.described(), self.target, self.lesson(), self.classes.definitions()
        )
        return inlined(doc) if self.flat else doc

    def described(self):
        """The description, with the notes of the lines skipped (skipped.py)."""
        return self.notes.described(self.description)

    def partial(self, loop):
        """The document of the lines that were read, where it is a valid one (None where not):
        what the page offers to open in spite of the problems. A line that failed made no
        node its variables name (nodes of a part of it read before the failure are kept)."""
        try:
            return self.training.settle(self.document(), loop)
        except ImportFailed:
            return None

    def lesson(self):
        """A script's backward from ones (`L.backward(torch.ones(L.shape))`) is a lesson step
        that runs backward with the option gradient_ones, as the script does."""
        if not (self.gradient_ones and self.target):
            return []
        text = f"Backward from ones of {self.target}'s shape, as the script calls it."
        step = {"text": text, "select": [self.target], "run": "backward"}
        return [{**step, "options": {"gradient_ones": True}}]

    def header(self, text):
        # an exported script's prints are the exporter's results section: skipped unsaid
        self.notes.quiet_output = "\nExported from Wiregrad" in text
        head = text.split("\nExported from Wiregrad", 1)[0].strip("\n")
        lines = head.splitlines()
        if lines and lines[0].strip():
            self.name = lines[0].strip()[:200]
        self.description = "\n".join(lines[1:]).strip()[:10000]

    def statements(self, stmts, top=False):
        """Read statements; returns the variable the last one binds (for if-branches). A line
        that cannot be read is a problem, and the names it assigns are unusable after it."""
        last = None
        for stmt in stmts:
            self.current_line = stmt.lineno
            if time.perf_counter() > self.deadline:
                raise ImportFailed([self._out_of_time(stmt)])
            last = None
            try:
                last = self.statement(stmt, top)
            except Unsupported as exc:
                self.problem(stmt, str(exc))
                for name in assigned(stmt):
                    self.env[name] = None
            except RecursionError:
                self.problem(stmt, "the expression is nested too deeply")
            except (ImportFailed, NeedsShapes):
                raise  # the time budget; a forward that reads shapes (classes.py)
            except (OverflowError, ValueError) as exc:  # a number no float holds, 10**400
                self.problem(stmt, number_problem(exc))
                for name in assigned(stmt):
                    self.env[name] = None
        return last

    def _out_of_time(self, stmt):
        return ImportProblem(
            stmt.lineno,
            f"reading the script took longer than {self.max_seconds:g} s, the "
            "limit; it stopped at this line (import a shorter script)",
        )

    def statement(self, stmt, top):
        """Read one statement; the variable it binds, or None."""
        if isinstance(stmt, ast.FunctionDef) and not (top and stmt.name in _HELPER_DEFS):
            return self.functions.define(stmt, top)  # (inside a function: inlined there)
        if self.weights_file.imports(stmt):
            return None
        if self.weights_file.claims(stmt):
            return self.weights_file.read(stmt)
        if self.skipped.read(stmt):
            return None
        if self.attention_init.claims(stmt):  # (before the other readers of such calls)
            return self.attention_init.read(stmt)
        expanded = self.functions.expand(stmt)
        if expanded is not None:
            return self.functions.read(expanded)
        stmt = self.shapes.substituted(stmt)
        if self.lists.read_value(stmt):  # layers = [nn.Linear(...)]; layers.append(...)
            return None
        if self.tensor_lists.read(stmt):
            return None
        stmt = self.tensor_lists.substituted(stmt)  # outs: [outs[0], outs[1], ...]
        done, stmt = self.constant_lines.read(stmt)
        if done:
            return stmt  # (what the line read returned)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for name in self.modules.imports(stmt):
                self.notes.add(stmt.lineno, f"import of {name}: no line reads it for a tensor")
            for name, value in self.modules.python_values(stmt):  # math, its functions
                self.constants.values[name] = value
            return None
        if isinstance(stmt, ast.FunctionDef) and stmt.name in _HELPER_DEFS and top:
            return self.helper_def(stmt)
        if self.state_loads.claims(stmt):
            return self.state_loads.read(stmt)
        if isinstance(stmt, ast.Expr):
            return self.expr_statement(stmt)
        if isinstance(stmt, ast.Assign):
            return self.assign_statement(stmt)
        if isinstance(stmt, ast.If):
            return self.if_statement(stmt, top)
        if no_grad_lines.claims(self, stmt):
            return no_grad_lines.read(self, stmt)  # x = <expr> lines computed under no_grad
        if isinstance(stmt, ast.With):
            return self.layers.with_statement(stmt)
        if isinstance(stmt, ast.For) and only_output(stmt):
            return None
        if isinstance(stmt, ast.For):
            return self.loops.for_statement(stmt)
        if isinstance(stmt, ast.ClassDef) and top:
            return self.classes.class_def(stmt)
        if isinstance(stmt, ast.Pass):
            return None
        if isinstance(stmt, ast.AugAssign):
            return self.writes.aug_assign(stmt)
        kind = type(stmt).__name__
        raise Unsupported(_NOT_READ.get(kind, f"{kind} statements are not supported"))

    def helper_def(self, stmt):
        """`def show(...)` and the like: the exporter's plain helper, read and skipped."""
        a = stmt.args
        defaults = a.defaults + [d for d in a.kw_defaults if d is not None]
        if stmt.decorator_list or stmt.returns or not all(map(is_literal, defaults)):
            raise Unsupported(f"{stmt.name}() must be the exporter's plain helper")
        return None

    def expr_statement(self, stmt):
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return None  # a string used as a comment
        if isinstance(stmt.value, ast.Call) and self.writes.is_write_call(stmt.value):
            return self.writes.expr_statement(stmt)
        if isinstance(stmt.value, ast.Call) and dotted(stmt.value.func) == "self.register_buffer":
            return self.register_buffer(stmt, stmt.value)
        if isinstance(stmt.value, ast.Call):
            return self.call_statement(stmt.value)
        raise Unsupported("an expression whose value is not assigned")

    def assign_statement(self, stmt):
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if target is not None and self.datasets.read_arrays(target, stmt.value):
            return None
        if isinstance(target, ast.Subscript):
            return self.writes.setitem(stmt)
        if isinstance(target, ast.Tuple) and self.unpack(target, stmt):
            return None
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.tuples.assign(target, stmt)
        if _sets_requires_grad(target, stmt.value):  # p.requires_grad = True
            name, flag = target.value.id, stmt.value.value
            return self.mark_requires_grad(self.ref_name(name), name, attribute=True, flag=flag)
        if not isinstance(target, ast.Name):
            raise Unsupported("assign to one plain variable name (x = ...)")
        self.assign(target.id, stmt.value, stmt)
        return target.id

    def register_buffer(self, stmt, call):
        """`self.register_buffer("mask", <tensor>)` in __init__: self.mask is that tensor (a
        value of the module that no optimizer changes, as a tensor without requires_grad)."""
        args = list(call.args) + [k.value for k in call.keywords if k.arg == "tensor"]
        other = [k.arg for k in call.keywords if k.arg not in ("tensor", "persistent")]
        name = args[0] if args else None
        if (
            len(args) != 2
            or other
            or not (isinstance(name, ast.Constant) and isinstance(name.value, str))
        ):
            raise Unsupported('write self.register_buffer("<name>", <tensor>)')
        if not name.value.isidentifier():
            raise Unsupported(f"a buffer's name is a Python name, not {name.value!r}")
        self.assign(f"self.{name.value}", args[1], stmt)
        return f"self.{name.value}"

    def unpack(self, target, stmt):
        """`y, z = net(x)`, net a module whose forward returns several tensors: each name is
        bound to its output port; False for any other tuple assignment."""
        call = stmt.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in self.classes.instances
        ):
            return False
        if not all(isinstance(e, ast.Name) for e in target.elts):
            raise Unsupported("unpack a module's outputs into plain names: y, z = net(x)")
        names = [e.id for e in target.elts]
        meta = self.node_comment(stmt.lineno, stmt.end_lineno)
        inst = call.func.id
        refs = self.classes.call_unpacked(names, inst, call, meta or inst.removeprefix("self."))
        for name, ref in zip(names, refs):
            self.env[name] = ref
            for declared in (self.layers.declared, self.nn.declared, self.classes.instances):
                declared.pop(name, None)
        return True

    def if_statement(self, stmt, top):
        if is_main_guard(stmt.test):
            self.statements(stmt.body, top=top)
            if stmt.orelse:
                raise Unsupported("an else after `if __name__ == '__main__'`")
            return None
        if only_output(stmt):
            return None
        return self.branches.if_block(stmt)

    def assign(self, name, value, stmt):
        """`name = value`: a layer declaration, another name for a node, or a new node."""
        if isinstance(value, ast.Call) and _moved(value):
            value = value.func.value  # net = Net().to(device): the document's own device
        if self.declare(name, value):
            return
        value = self.parameter_of(value)
        comment = self.node_comment(stmt.lineno, stmt.end_lineno)
        if isinstance(value, ast.Name) and comment is None:
            self.env[name] = self.ref_name(value.id)  # another name for the same node
            return
        self.current_var = name
        try:
            nid = self.exprs.expr(value, comment or name)
        finally:
            self.current_var = None
        self.env[name] = nid
        for declared in (self.layers.declared, self.nn.declared, self.classes.instances):
            declared.pop(name, None)

    def declare(self, name, value):
        """`name = nn.Linear(...)` / `nn.ReLU()` / `Net()` and the like: a layer or module
        that makes nodes where it is called; False for any other value."""
        kind, rest = self.modules.call_kind(value)
        if kind == "lib" and rest.startswith(("optim.", "optim.lr_scheduler.")):
            # an optimizer no training loop steps (training_loop.py takes those): its
            # zero_grad() changes nothing here, and its step() is a problem at its line
            self.optimizers.add(name)
            self.env.pop(name, None)
            self.notes.add(
                self.current_line, f"{name}: an optimizer no training loop steps, skipped"
            )
            return True
        generator = self.random.generator(value)
        if generator is not None:  # g = torch.Generator().manual_seed(S): a constant
            self.constants.values[name] = generator
            self.env.pop(name, None)
            return True
        seed = self.random.fresh_seed()  # torch.manual_seed(S) just before: the layer's seed
        if self.classes.is_class_call(value):
            self.classes.instantiate(name, value)
        elif kind == "nn" and rest == "Linear":
            self.layers.declare(name, value)
        elif kind == "nn" and rest == "ModuleList":
            self.lists.declare(name, value)
        elif kind == "nn" and rest != "Parameter":
            self.nn.declare(name, value, rest)
        else:
            return False
        self.env.pop(name, None)
        self.random.layer_made(self._seeded_layer(name, seed))
        return True

    def _seeded_layer(self, name, seed):
        """A layer just declared that draws its init from PyTorch's global stream: given the
        seed of a fresh stream (random_draws.py) where there is one; whether the stream is
        drawn from (a class instance or a Sequential may be: counted as drawn)."""
        if name in self.classes.instances:  # its layers are known at its first call
            inst = self.classes.instances[name]
            inst["line"] = self.current_line
            if seed is not None:
                inst["fresh_seed"] = seed
            elif self.classes.seeds_inside(inst.get("base")):
                pass  # (its __init__ seeds its layers: PyTorch's values, classes.py)
            elif not self.notes.quiet_output and self.random.exact:
                inst["fresh_seed"] = None
                self.notes.add(
                    self.current_line,
                    f"{name}: its layers' default init is the document's own seeded draw, "
                    "not the one PyTorch makes here",
                )
            return True
        if name in self.layers.declared:
            entry = self.layers.declared[name]
        else:
            entry = self.nn.declared.get(name)
            if entry is None or entry.get("kind") != "op":
                return True  # a module instance or a Sequential: their layers may draw
            spec = registry.get(entry["op"])
            if spec is None or spec.param("seed") is None or entry["op"] == "dropout":
                return False  # no random init (an activation, a norm, dropout's masks later)
            entry = entry["params"]
        if seed is not None:
            entry["seed"] = seed
            self.seeded_layers = True
        elif not self.notes.quiet_output and self.random.exact:
            self.notes.add(
                self.current_line,
                f"{name}: its default init is the document's own seeded draw, not the one "
                "PyTorch makes here (torch.manual_seed(S) right before the layer gives "
                "PyTorch's)",
            )
        return True

    def parameter_of(self, value):
        """`nn.Parameter(<tensor source>)`: the source, which then requires grad;
        `nn.Parameter(<computed tensor>)`: a leaf of its values (leaf_values.py)."""
        if self.modules.call_kind(value) != ("nn", "Parameter"):
            return value
        if len(value.args) != 1 or value.keywords:
            raise Unsupported("write nn.Parameter(torch.tensor(<values>))")
        inner = value.args[0]
        if self.weights_file.loaded and self.weights_file.key(inner) is not None:
            func = ast.Attribute(value=inner, attr="requires_grad_", ctx=ast.Load())
            return ast.Call(func=func, args=[], keywords=[])  # (weights_file.py's leaf)
        kind, fn = self.modules.call_kind(inner) if isinstance(inner, ast.Call) else (None, "")
        if kind != "lib" or fn not in SOURCE_FUNCTIONS:  # a computed value: a leaf of it
            cut = ast.Call(ast.Attribute(inner, "detach", ast.Load()), [], [])  # a leaf
            func = ast.Attribute(value=cut, attr="requires_grad_", ctx=ast.Load())
            return ast.Call(func=func, args=[], keywords=[])
        rg = ast.keyword(arg="requires_grad", value=ast.Constant(True))
        return ast.Call(func=inner.func, args=inner.args, keywords=[*inner.keywords, rg])

    # -- calls whose result is not assigned -----------------------------------------------------
    def call_statement(self, call):
        d = dotted(call.func)
        if d in ("print", "show"):
            return None
        if d == "init_like_engine":
            return self.layers.init_like_engine(call)
        if isinstance(call.func, ast.Attribute):
            attr, recv = call.func.attr, call.func.value
            rname = recv.id if isinstance(recv, ast.Name) else None
            if attr == "backward" and rname is not None:
                return self.backward_call(call, rname)
            if attr == "append" and rname is not None and self.lists.is_list(rname):
                if len(call.args) != 1 or call.keywords:
                    raise Unsupported("append() takes one module")
                return self.lists.append(rname, call.args[0])
            if _moved(call) and rname is not None:
                return None  # model.to(device): the document runs on its own device
            if attr in ("retain_grad", "zero_grad") and rname is not None:
                return None  # (a run's gradients start from zero)
            if rname in self.optimizers:
                raise Unsupported(
                    f"{rname}.{attr}() outside a training loop is not read: the document runs "
                    f"from the parameters' first values; write the steps as a loop "
                    f"`for step in range(n):` with zero_grad, backward and {rname}.step()"
                )
            declared = rname in self.layers.declared or rname in self.nn.declared
            if attr == "reset_parameters" and declared:
                return self.layers.reset_parameters(rname, call)
            if attr in ("eval", "train") and declared:
                return self.layers.set_mode(rname, attr, call)
            if attr in ("eval", "train") and rname in self.classes.instances:
                return set_instance_mode(self.classes, rname, attr, call)
            if attr == "requires_grad_" and rname is not None:
                flag = requires_grad_flag(call)
                if flag is None:
                    raise Unsupported(f"write {rname}.requires_grad_(True) or (False)")
                return self.mark_requires_grad(self.ref_name(rname), rname, flag=flag)
            if self.modules.func_kind(d) == ("lib", "manual_seed"):
                return None  # random sources carry their own seeds
        raise Unsupported("a call whose result is not assigned")

    def backward_call(self, call, name):
        """`y.backward()`: y is the document's target."""
        ones = bool(call.args or call.keywords)
        if ones and not self.ones_of(call, name):
            raise Unsupported(_BACKWARD_ARGS)
        target = self.ref_name(name)
        module_out = PORT in target or self.graph.nodes.get(target, {}).get("op") == "module"
        if module_out and (ones or not self.classes.scalar_output(target)):
            raise Unsupported(
                f"backward() from one output of a module: write `L = {name}.sum()` (or the "
                "loss of it) and call L.backward()"
            )
        if module_out:
            # backward() without a gradient is PyTorch's for a scalar only, and the sum of a
            # scalar is itself: a sum node is the document's target (a target names a node)
            self.current_var = name
            try:
                target = self.add_node("sum", {}, [("input", target)], f"{name}_sum")
            finally:
                self.current_var = None
            self.env[name] = target
            self.notes.add(
                self.current_line,
                f"{name}.backward() on a module's output: a sum node (a scalar's sum is "
                "itself) is the target",
            )
        self.target = target
        self.gradient_ones = ones

    def ones_of(self, call, name):
        """Whether a backward call's one argument is ones of the shape of the tensor it is
        called on: `gradient=lib.ones_like(name)`, `lib.ones(name.shape)` or
        `lib.ones(name.size())` (by keyword or position), what the run option gradient_ones
        does."""
        given = list(call.args) + [k.value for k in call.keywords if k.arg == "gradient"]
        if len(given) != 1 or len(call.args) + len(call.keywords) != 1:
            return False
        g = given[0]
        if not (isinstance(g, ast.Call) and len(g.args) == 1 and not g.keywords):
            return False
        arg = g.args[0]
        if self.modules.is_call(g, "lib", "ones_like"):
            return isinstance(arg, ast.Name) and arg.id == name
        if isinstance(arg, ast.Call) and not arg.args and not arg.keywords:
            arg = arg.func if getattr(arg.func, "attr", None) == "size" else None
        return (
            self.modules.is_call(g, "lib", "ones")
            and isinstance(arg, ast.Attribute)
            and arg.attr in ("shape", "size")
            and isinstance(arg.value, ast.Name)
            and arg.value.id == name
        )
