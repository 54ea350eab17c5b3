"""`nn.Module` classes read from code, as module definitions (backend/graph/modules.py):

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(2, 8)                        layers and parameters, read as
            self.w = nn.Parameter(torch.tensor([1.0, 2.0]))   the lines of a script are
        def forward(self, x):                                 x: a module_input node
            return self.fc1(x) * self.w                       a module_output node, "out"

    net = Net()                                               an instance (no node yet)
    y = net(x)                                                a `module` node of Net

The class's two methods are read by a walker of their own (the importer's class, sharing its
imports, problems and time budget), with `self.<name>` read as a variable `self.<name>`; the
nodes it makes are the definition's. Each call of an instance is one `module` node, with its
own parameters; an instance called twice would share them, which a node cannot, so it is
refused. The one output is named `out`, the port every single-output node gives."""

import ast
import copy

from .problems import Unsupported
from .syntax import dotted

OUT = "out"  # the id of a definition's output node: the instance's output port
_SHAPE = "write class <Name>(nn.Module) with __init__(self) and forward(self, <tensors>)"


class ClassReader:
    def __init__(self, imp, walker):
        self.imp = imp  # the statement walker (importer._Importer)
        self.walker = walker  # makes a walker for a class's methods: walker(source)
        self.classes = {}  # class name -> its ast.ClassDef
        self.defs = {}  # class name -> its module definition (a dict), once built
        self.instances = {}  # variable -> {"cls": name, "used": bool}

    def class_def(self, stmt):
        """`class Net(nn.Module): ...` is kept until an instance is made."""
        bases = [self.imp.modules.func_kind(dotted(b)) for b in stmt.bases]
        if bases != [("nn", "Module")] or stmt.keywords or stmt.decorator_list:
            raise Unsupported(f"only nn.Module classes are read: {_SHAPE}")
        methods = {}
        for s in stmt.body:
            if isinstance(s, ast.FunctionDef) and s.name in ("__init__", "forward"):
                methods[s.name] = s
            elif not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
                raise Unsupported(f"a class holds __init__ and forward only: {_SHAPE}")
        if "forward" not in methods:
            raise Unsupported(f"{stmt.name} has no forward: {_SHAPE}")
        self.classes[stmt.name] = (stmt, methods)
        self.imp.env.pop(stmt.name, None)

    def is_class_call(self, value):
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.classes
        )

    def instantiate(self, name, call):
        """`net = Net()`: the definition is built from the class the first time."""
        cls = call.func.id
        if call.args or call.keywords:
            raise Unsupported(f"{cls}() takes no arguments here: write its sizes in __init__")
        if cls not in self.defs:
            self.defs[cls] = None  # a class that makes an instance of itself stops here
            self.defs[cls] = _Definition(self, cls).build()
        elif self.defs[cls] is None:
            raise Unsupported(f"{cls} makes an instance of itself")
        self.instances[name] = {"cls": cls, "used": False}
        self.imp.env.pop(name, None)

    def call(self, name, node, meta):
        """`y = net(x)`: the instance's `module` node, its inputs wired to forward's args."""
        inst = self.instances[name]
        d = self.defs[inst["cls"]]
        if d is None:
            raise Unsupported(f"{inst['cls']} could not be read: see the lines of its class")
        if inst["used"]:
            raise Unsupported(
                f"'{name}' is called twice; each call is a module node with its own "
                f"parameters: make one {inst['cls']}() per call"
            )
        if node.keywords or len(node.args) != len(d["inputs"]):
            raise Unsupported(f"{inst['cls']}'s forward takes {len(d['inputs'])} tensors here")
        inst["used"] = True
        inputs = [(p, self.imp.exprs.operand_node(a)) for p, a in zip(d["inputs"], node.args)]
        seed = sum(1 for i in self.instances.values() if i["cls"] == inst["cls"] and i["used"])
        params = {"module": inst["cls"], "seed": seed - 1}
        return self.imp.add_node("module", params, inputs, meta)

    def definitions(self):
        """The module definitions built, in the order their classes made their first instance."""
        return [d for d in self.defs.values() if d is not None]


class _Definition:
    """One class read into a module definition by a walker of its own."""

    def __init__(self, reader, cls):
        self.reader, self.cls = reader, cls
        self.stmt, self.methods = reader.classes[cls]

    def build(self):
        imp = self.reader.imp
        sub = self.reader.walker(imp.source)
        sub.modules, sub.problems, sub.deadline = imp.modules, imp.problems, imp.deadline
        sub.classes.classes, sub.classes.defs = self.reader.classes, self.reader.defs
        before = len(imp.problems)
        init = self.methods.get("__init__")
        if init is not None:
            self._check_args(init, 0)
            sub.statements(_own(_body_of_init(init)))
        forward = self.methods["forward"]
        inputs = self._inputs(sub, forward)
        body = _own(forward.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise Unsupported(f"{self.cls}.forward must end with `return <tensor>`")
        sub.statements(body[:-1])
        sub.current_line = body[-1].lineno
        out = self._output(sub, body[-1])
        if len(imp.problems) > before:
            raise Unsupported(f"{self.cls} could not be read: see the lines of its class")
        return self._definition(sub, inputs, out)

    def _check_args(self, fn, n_tensors):
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or fn.decorator_list:
            raise Unsupported(f"{self.cls}.{fn.name} takes plain arguments only: {_SHAPE}")
        if len(a.args) != n_tensors + 1 or a.args[0].arg != "self":
            raise Unsupported(f"{self.cls}.{fn.name} must be {fn.name}(self...): {_SHAPE}")

    def _inputs(self, sub, forward):
        """forward's arguments: one module_input node each."""
        self._check_args(forward, len(forward.args.args) - 1)
        sub.current_line = forward.lineno
        ids = []
        for arg in forward.args.args[1:]:
            if arg.arg == OUT:
                raise Unsupported(f"name forward's argument other than '{OUT}'")
            ids.append(sub.add_node("module_input", {}, [], arg.arg))
            sub.env[arg.arg] = ids[-1]
        return ids

    def _output(self, sub, ret):
        """`return <tensor>`: the module_output node `out` (a node already called so is
        renamed first)."""
        if isinstance(ret.value, ast.Tuple):
            raise Unsupported(f"{self.cls}.forward returns one tensor here")
        value = sub.exprs.operand_node(ret.value)
        graph = sub.graph
        if OUT in graph.nodes:
            new = graph.fresh_id(f"{OUT}_value")
            graph.rename(OUT, new)
            value = new if value == OUT else value
        graph.reserved.discard(OUT)
        return sub.add_node("module_output", {}, [("input", value)], OUT)

    def _definition(self, sub, inputs, out):
        graph = sub.graph
        for nid in list(graph.nodes):  # self.w: the node w, where no other node is
            if nid.startswith("self.") and nid[5:] and nid[5:] not in graph.nodes:
                graph.rename(nid, nid[5:])
        doc = ast.get_docstring(self.stmt) or ""
        return {
            "name": self.cls,
            "doc": doc.strip().splitlines()[0][:2000] if doc.strip() else "",
            "nodes": graph.laid_out(),
            "edges": graph.edge_list(),
            "inputs": inputs,
            "outputs": [out],
        }


def _body_of_init(init):
    """__init__'s lines, its `super().__init__()` left out."""
    return [s for s in init.body if not _is_super_init(s)]


def _is_super_init(s):
    return (
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr == "__init__"
        and isinstance(s.value.func.value, ast.Call)
        and dotted(s.value.func.value.func) == "super"
    )


class _Self(ast.NodeTransformer):
    """`self.<name>` read as the variable `self.<name>` (no script variable has a dot)."""

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return ast.copy_location(ast.Name(id=f"self.{node.attr}", ctx=node.ctx), node)
        self.generic_visit(node)
        return node


def _own(body):
    """A copy of a method's lines with self.<name> as a variable (line numbers kept)."""
    t = _Self()
    return [t.visit(copy.deepcopy(s)) for s in body]
