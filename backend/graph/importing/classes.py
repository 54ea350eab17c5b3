"""`nn.Module` classes read from code, as module definitions (backend/graph/document/modules.py):

    class Block(nn.Module):
        def __init__(self, d_in, d_out, act=True):           constructor arguments: constants
            super().__init__()
            self.fc1 = nn.Linear(d_in, d_out)                 layers and parameters, read as
            self.w = nn.Parameter(torch.tensor([1.0, 2.0]))   the lines of a script are
            self.act = act                                    a constant forward reads
        def forward(self, x):                                 x: a module_input node
            h = self.fc1(x) * self.w
            if self.act:                                      a constant `if`: its branch
                h = torch.relu(h)
            return h                                          a module_output node, "out"

    blk = Block(4, 8)                                         an instance (no node yet)
    y = blk(x)                                                a `module` node of Block

Its other methods are inlined where __init__ or forward call them (`self.encode(x)`,
functions.py); one never called is never read. The class's two methods are read by a walker
of their own (the importer's class, sharing its
imports, problems and time budget), with `self.<name>` read as a variable `self.<name>`; the
nodes it makes are the definition's. The constructor's arguments (by position, keyword or
default) must be constants: they and the constants worked out from them are written into the
methods where read (constants.py), so each set of arguments is its own definition: the first
is named after the class, others `Block_2`, `Block_3` ...; instances made with the same
arguments share one.

`return a, b` makes one module_output node per tensor, `out0`, `out1` ... (the ports, in the
order forward returns them; a single one is `out`, the port every single-output node gives);
the caller unpacks them, `y, z = net(x)`.

Each call of an instance is one `module` node. An instance called again shares its parameters
between the calls, as in PyTorch: shared_calls.py makes them nodes of their own wired into
each call (or refuses, where a layer keeps them inside its node)."""

import ast
import copy

from .. import registry
from .constants import NOT, Constants, constant_or_refused, layer_class, literal_node
from .module_modes import moded, unused_unmoded
from .nodes import renamed_ref, split_ref
from .port_comments import meta_id, ports_of
from .problems import Unsupported
from .python_values import (
    ClassAttributes,
    ModuleArg,
    PyObject,
    is_config_class,
    read_config_class,
)
from .random_draws import seed_after_manual_seed
from .shapes import NeedsShapes
from .shared_calls import share, unused_base
from .state_loads import with_state
from .syntax import bound_arguments, dotted

OUT = "out"  # the id of a definition's output node: the instance's output port
_SHAPE = "write class <Name>(nn.Module) with __init__(self, ...) and forward(self, <tensors>)"


class ClassReader:
    def __init__(self, imp, walker):
        self.imp = imp  # the statement walker (importer._Importer)
        self.walker = walker  # makes a walker for a class's methods: walker(source)
        self.classes = {}  # class name -> (its ast.ClassDef, {method name: FunctionDef})
        self.defs = {}  # definition name -> its module definition (a dict), once built
        self.names = {}  # (class, its arguments) -> the name of its definition
        self.building = set()  # definitions being read (a class making itself stops there)
        self.instances = {}  # variable -> {"cls", "def": definition name, "used": bool}
        self.params = {}  # definition name -> ids of its parameter nodes (made by __init__)
        self.variants = {}  # shared_calls.py: (definition, parameters) -> its variant's name
        self.attrs = {}  # class name -> {class attribute: its constant} (`expansion = 1`)
        self.kept = {}  # definition name -> the constants its __init__ kept on self
        # definitions whose __init__ seeds a layer (torch.manual_seed(S) right before it)
        self.seeded = set()

    def share(self, other):
        """Read a class's methods with the classes and definitions of `other` (the walker
        outside it): a class used inside another is defined once for the document."""
        self.classes, self.defs = other.classes, other.defs
        self.names, self.building = other.names, other.building
        self.params, self.variants = other.params, other.variants
        self.kept = other.kept
        self.attrs, self.seeded = other.attrs, other.seeded

    def class_def(self, stmt):
        """`class Net(nn.Module): ...` is kept until an instance is made; a config class
        (`@dataclass class GPTConfig: n_embd: int = 64`) is a constant (python_values.py)."""
        imp = self.imp
        if is_config_class(stmt):
            c = imp.constants
            cls = read_config_class(stmt, lambda node, what: constant_or_refused(c, node, what))
            c.values[stmt.name] = cls
            imp.env.pop(stmt.name, None)
            return None
        bases = [imp.modules.func_kind(dotted(b)) for b in stmt.bases]
        if bases != [("nn", "Module")] or stmt.keywords or stmt.decorator_list:
            raise Unsupported(
                f"only nn.Module classes and config classes (@dataclass, or class attributes "
                f"only) are read: {_SHAPE}"
            )
        methods, attrs = {}, {}
        for s in stmt.body:
            if isinstance(s, ast.FunctionDef):
                methods[s.name] = s  # others than __init__ / forward: inlined where called
            elif isinstance(s, (ast.Assign, ast.AnnAssign)):
                attrs.update(_class_attribute(stmt, s, imp.constants))
            elif not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
                raise Unsupported(
                    f"a class holds methods and class attributes of constants: {_SHAPE}"
                )
        if "forward" not in methods:
            raise Unsupported(f"{stmt.name} has no forward: {_SHAPE}")
        self.classes[stmt.name] = (stmt, methods)
        self.attrs[stmt.name] = attrs
        imp.constants.values[stmt.name] = ClassAttributes(stmt.name, attrs)  # Block.expansion
        imp.env.pop(stmt.name, None)

    def is_class_call(self, value):
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.classes
        )

    def instantiate(self, name, call):
        """`net = Net(...)`: the definition of the class with these arguments is built the
        first time they are met."""
        cls = call.func.id
        made = {  # modules made at the top, passed as arguments (downsample=downsample)
            n.id: ModuleArg(self.imp.nn.made[n.id])
            for n in [*call.args, *(k.value for k in call.keywords)]
            if isinstance(n, ast.Name) and n.id in self.imp.nn.made and n.id in self.imp.nn.declared
        }
        constants = self.imp.constants.with_values(made) if made else self.imp.constants
        init = self.classes[cls][1].get("__init__")
        args = _arguments(cls, init, call, constants, self.imp.modules)
        key = (cls, repr(sorted(args.items())))
        before = len(self.imp.problems)
        try:
            dname = self._built(cls, key, args, None)
        except NeedsShapes:
            # forward reads its input's shape: built where the instance is called, per shape
            del self.imp.problems[before:]
            self.instances[name] = {"cls": cls, "def": None, "base": None, "used": False}
            self.instances[name]["deferred"] = (key, args)
            self.imp.env.pop(name, None)
            return
        self.instances[name] = {"cls": cls, "def": dname, "base": dname, "used": False}
        self.imp.env.pop(name, None)

    def _built(self, cls, key, args, shapes):
        """The name of the definition of `cls` with arguments `args` (and, for a forward that
        reads shapes, the input stand-ins `shapes`), built the first time it is met."""
        dname = self.names.get(key)
        if dname in self.building:
            raise Unsupported(f"{cls} makes an instance of itself")
        if dname is None:
            dname = self._new_name(cls)
            self.names[key] = dname
        if dname not in self.defs:
            self.building.add(dname)
            try:
                self.defs[dname] = None  # (None: it could not be read)
                self.defs[dname] = _Definition(self, cls, dname, args).build(shapes)
            except NeedsShapes:
                del self.defs[dname], self.names[key]
                raise
            finally:
                self.building.discard(dname)
        if self.defs[dname] is None:
            raise Unsupported(f"{cls} could not be read: see the lines of its class")
        return dname

    def _settle(self, name, inputs):
        """An instance whose forward reads shapes: its definition for the shapes of `inputs`
        (node ids), built at its first call; a later call on other shapes is refused."""
        inst = self.instances[name]
        if "deferred" not in inst:
            return
        stand_ins = [self.imp.shapes.stand_in(i) for i in inputs]
        if any(t is None for t in stand_ins):
            raise Unsupported(
                f"{inst['cls']}.forward reads the shape of its input, which is not known "
                "here (an output of another module): write the sizes as numbers"
            )
        shapes = [(tuple(t.shape), str(t.dtype)) for t in stand_ins]
        if inst.get("shapes", shapes) != shapes:
            raise Unsupported(
                f"{inst['cls']}.forward reads shapes: call each instance on one shape"
            )
        if inst["def"] is None:
            key, args = inst["deferred"]
            key = (*key, repr(shapes))
            inst["def"] = inst["base"] = self._built(inst["cls"], key, args, stand_ins)
            inst["shapes"] = shapes

    def _new_name(self, cls):
        """`Block` for a class's first set of arguments, then `Block_2`, `Block_3` ..."""
        taken = set(self.names.values()) | set(self.classes) - {cls}
        name, k = cls, 2
        while name in taken:
            name, k = f"{cls}_{k}", k + 1
        return name

    def call(self, name, node, meta):
        """`y = net(x)`: the instance's `module` node, its inputs wired to forward's args."""
        inputs = self._args(node)  # first: net(net(x)) calls the inner one first
        d = self._callable(name, inputs, None)
        return self._single(self._node(name, d, inputs, meta), d)

    def call_unpacked(self, names, name, node, meta):
        """`y, z = net(x)`: the module node, and per name the output port it is bound to
        (nodes.port_ref)."""
        inputs = self._args(node)
        d = self._callable(name, inputs, len(names))
        nid = self._node(name, d, inputs, meta)
        return [self.imp.graph.port(nid, port) for port in d["outputs"]]

    def call_with(self, name, inputs, meta):
        """The module node of instance `name` called on node ids (a layer of nn.Sequential)."""
        d = self._callable(name, inputs, 1)
        return self._single(self._node(name, d, inputs, meta), d)

    def _single(self, nid, d):
        """The one output of module node `nid`: the node itself where the port is `out`, else
        its port (an output named by a `# ports` comment)."""
        port = d["outputs"][0]
        return nid if port == OUT else self.imp.graph.port(nid, port)

    def _callable(self, name, inputs, outputs):
        """The definition a call of `name` on `inputs` (node ids) giving `outputs` tensors
        (None: one, bound to one name) makes a node of; checked before anything is changed."""
        self._settle(name, inputs)
        inst = self.instances[name]
        if inst.get("mode") and not inst["used"]:  # model.eval() before its first call
            inst["def"] = moded(self, inst["def"], inst["mode"])
        d, cls = self.defs[inst["def"]], inst["cls"]
        n = len(d["inputs"]) - len(inst.get("shared", ()))
        if len(inputs) != n:
            raise Unsupported(f"{cls}'s forward takes {n} tensors here")
        got = len(d["outputs"])
        if outputs is None and got > 1:
            targets = ", ".join(f"y{i}" for i in range(got))
            raise Unsupported(
                f"{cls}.forward returns {got} tensors: "
                f"unpack them, `{targets} = {name.removeprefix('self.')}(...)`"
            )
        if outputs == 1 and got != 1:
            raise Unsupported(f"nn.Sequential's {cls} must take one tensor and return one")
        if outputs is not None and got != outputs:
            raise Unsupported(f"{cls}.forward returns {got} tensor(s) here, not {outputs}")
        if inst["used"]:
            share(self, name)  # called again: its parameters shared by the calls
        return self.defs[inst["def"]]

    def _args(self, node):
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported("a module takes its tensors as positional arguments here")
        return [self.imp.exprs.operand_node(a) for a in node.args]

    def _node(self, name, d, inputs, meta):
        inst = self.instances[name]
        inst["used"] = True
        if "seed" not in inst:  # every call of one instance: the same seed
            seed = seed_after_manual_seed(self, inst)
            if seed is None and self.seeds_inside(inst["base"]):
                # its __init__ seeds its layers: every instance makes the same ones, as the
                # instance seed 0 gives (another would move the seeds inside it)
                seed = 0
            elif seed is None:  # the instances of one definition in turn: 0, 1, 2 ...
                seed = sum(
                    1 for i in self.instances.values() if i["base"] == inst["base"] and "seed" in i
                )
            inst["seed"] = seed
        params = with_state(inst, {"module": inst["def"], "seed": inst["seed"]}, meta)
        inputs = inputs + list(inst.get("shared", {}).values())  # (the variant's last ports)
        nid = self.imp.add_node("module", params, list(zip(d["inputs"], inputs)), meta)
        inst.setdefault("nodes", []).append(self.imp.graph.nodes[nid])  # (kept if renamed)
        return nid

    def seeds_inside(self, name, depth=0):
        """Whether definition `name`'s __init__ (or a module's inside it) seeds a layer."""
        if name in self.seeded:
            return True
        d = self.defs.get(name)
        if d is None or depth > 32:
            return False
        return any(
            self.seeds_inside(n["params"].get("module"), depth + 1)
            for n in d["nodes"]
            if n["op"] == "module"
        )

    def instance_method(self, name, method):
        """`rnn.initHidden()` called outside the class: the method's FunctionDef with the
        constants __init__ kept on self written in (`self.hidden_size`: its number); None
        where `name` is no instance or `method` none of its class's other methods."""
        inst = self.instances.get(name)
        if inst is None or method in ("__init__", "forward") or inst.get("def") is None:
            return None
        fn = self.classes[inst["cls"]][1].get(method)
        if fn is None:
            return None
        return _Kept(self.kept.get(inst["def"], {})).visit(_Self().visit(copy.deepcopy(fn)))

    def scalar_output(self, ref):
        """Whether output `ref` (a module node, or a port_ref of one) is a scalar by how its
        definition computes it: a whole sum or mean, or a loss that reduces (what
        backward() without a gradient needs); False where that is not seen."""
        nid, port = split_ref(ref)
        node = self.imp.graph.nodes.get(nid)
        d = self.defs.get(node["params"].get("module")) if node else None
        if d is None:
            return False
        src = next((e["source"] for e in d["edges"] if e["target"] == port), None)
        inner = next((n for n in d["nodes"] if n["id"] == src), None)
        if inner is None:
            return False
        op, params = inner["op"], inner["params"]
        if op in ("sum", "mean"):
            return params.get("dim") in (None, [], ())
        spec = registry.get(op)
        reduces = spec is not None and spec.param("reduction") is not None
        return reduces and params.get("reduction", "mean") != "none"

    def definitions(self):
        """The module definitions built, in the order their classes made their first instance
        (one whose instances all became shared, shared_calls.py, left out where unused)."""
        return [
            d
            for d in self.defs.values()
            if d is not None and not unused_base(self, d) and not unused_unmoded(self, d)
        ]


def _arguments(cls, init, call, constants, modules):
    """{argument: value} of `cls(...)`'s call, bound to __init__'s arguments as Python binds
    them (defaults included); each must be a constant (a layer class or torch function named
    as a value is one: python_values.LayerClass)."""
    if init is None:
        if call.args or call.keywords:
            raise Unsupported(f"{cls}() takes no arguments: its class has no __init__")
        return {}
    if init.decorator_list:
        raise Unsupported(f"{cls}.__init__ is decorated: the importer reads a plain __init__")
    if not init.args.args or init.args.args[0].arg != "self":
        raise Unsupported(f"{cls}.__init__ must be __init__(self, ...): {_SHAPE}")
    names, given, defaults = bound_arguments(f"{cls}()", init.args, call, method=True)
    args = {}
    for n in names:
        if n in given or n in defaults:
            # (a layer class, act_layer=nn.GELU: called where __init__ calls the argument)
            node = given[n] if n in given else defaults[n]
            held = layer_class(modules, node) if constants.value(node) is NOT else None
            what = f"{cls}()'s argument {n}" if n in given else f"the default of {cls}'s {n}"
            where = constants if n in given else Constants()
            args[n] = held or constant_or_refused(where, node, what)
        else:
            raise Unsupported(f"{cls}() needs its argument '{n}'")
    return args


class _Definition:
    """One class read into a module definition by a walker of its own."""

    def __init__(self, reader, cls, name, args):
        self.reader, self.cls, self.name, self.args = reader, cls, name, args
        self.stmt, self.methods = reader.classes[cls]

    def build(self, shapes=None):
        """The definition; NeedsShapes where forward reads its input's shape and `shapes`
        (its inputs' stand-ins) are not given."""
        imp = self.reader.imp
        sub = self.reader.walker(imp.source)
        sub.modules, sub.problems, sub.deadline = imp.modules, imp.problems, imp.deadline
        sub.notes = imp.notes
        sub.random.exact = False  # its draws are read once for every call
        sub.classes.share(self.reader)
        sub.functions.share(imp.functions)
        sub.weights_file.share(imp.weights_file)  # (a global the methods read)
        sub.functions.methods = {  # self.encode(x): inlined (functions.py)
            f"self.{n}": _Self().visit(copy.deepcopy(fn))
            for n, fn in self.methods.items()
            if n not in ("__init__", "forward")
        }
        top = imp.constants.top()  # the script's constants, read as Python reads globals
        own = {f"self.{k}": v for k, v in self.reader.attrs.get(self.cls, {}).items()}
        init = self.methods.get("__init__")
        hidden = _locals(init) if init is not None else ()
        sub.constants = Constants({**own, **self.args}, globals=top, hidden=hidden)
        before = len(imp.problems)
        if init is not None:
            sub.statements(_own(_body_of_init(init)))
        if sub.seeded_layers:
            self.reader.seeded.add(self.name)
        for n in sub.graph.nodes.values():
            n["param"] = True  # what __init__ made: the parameters a shared call shares
        # forward sees what __init__ kept on self, not its arguments or locals
        c = sub.constants
        forward = self.methods["forward"]
        kept = {k: v for k, v in c.values.items() if "." in k}
        self.reader.kept[self.name] = kept
        sub.constants = Constants(kept, c.lengths, globals=top, hidden=_locals(forward))
        inputs = self._inputs(sub, forward)
        if shapes is not None:
            sub.shapes.inputs = dict(zip(inputs, shapes))
        body = _own(forward.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise Unsupported(f"{self.cls}.forward must end with `return <tensor>`")
        sub.statements(body[:-1])
        sub.current_line = body[-1].lineno
        try:  # `return self.decode(z), mu`: the method's lines, then the value
            lines, last = sub.functions.expand_return(body[-1])
            sub.functions.read(lines)
            body[-1] = last
        except Unsupported as exc:
            sub.problem(body[-1], str(exc))
        outs = None
        if len(imp.problems) == before:  # (a value whose line failed was reported there)
            try:
                ret = sub.shapes.substituted(body[-1])  # return x * self.w.shape[0]
                value = sub.tensor_lists.substituted_expr(ret.value)
                outs = self._outputs(sub, sub.constants.substituted(value))
            except Unsupported as exc:
                sub.problem(body[-1], str(exc))  # at the return line
        if len(imp.problems) > before:
            raise Unsupported(f"{self.cls} could not be read: see the lines of its class")
        return self._definition(sub, inputs, outs)

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
        ids, args = [], forward.args.args[1:]
        metas = ports_of(sub.graph, forward.lineno, [a.arg for a in args])  # code export's ids
        for arg, meta in zip(args, metas):
            if arg.arg == OUT or (arg.arg.startswith(OUT) and arg.arg[len(OUT) :].isdigit()):
                raise Unsupported(f"name forward's argument other than '{arg.arg}'")
            ids.append(sub.add_node("module_input", {}, [], meta))
            sub.env[arg.arg] = ids[-1]
        return ids

    def _outputs(self, sub, value):
        """`return <tensor>`: the module_output node `out`; `return a, b`: `out0`, `out1` ...
        (a node already called so is renamed first)."""
        values = value.elts if isinstance(value, ast.Tuple) else [value]
        if not values or any(isinstance(v, ast.Starred) for v in values):
            raise Unsupported(
                f"{self.cls}.forward must return tensors: `return a` or `return a, b`"
            )
        ports = [f"{OUT}{i}" for i in range(len(values))] if isinstance(value, ast.Tuple) else [OUT]
        metas = ports_of(sub.graph, getattr(value, "end_lineno", None) or sub.current_line, ports)
        ports = [meta_id(m) for m in metas]
        nodes = [sub.exprs.operand_node(v) for v in values]
        graph = sub.graph
        for port in ports:
            if port in graph.nodes:
                new = graph.fresh_id(f"{port}_value")
                graph.rename(port, new)
                nodes = [renamed_ref(n, port, new) for n in nodes]
            graph.reserved.discard(port)
        return [
            sub.add_node("module_output", {}, [("input", n)], meta) for meta, n in zip(metas, nodes)
        ]

    def _definition(self, sub, inputs, outs):
        graph = sub.graph
        for nid in list(graph.nodes):  # self.w: the node w, where no other node is
            if nid.startswith("self.") and nid[5:] and nid[5:] not in graph.nodes:
                graph.rename(nid, nid[5:])
        self.reader.params[self.name] = {n["id"] for n in graph.nodes.values() if n.get("param")}
        doc = ast.get_docstring(self.stmt) or ""
        return {
            "name": self.name,
            "doc": doc.strip().splitlines()[0][:2000] if doc.strip() else "",
            "nodes": graph.laid_out(),
            "edges": graph.edge_list(),
            "inputs": inputs,
            "outputs": outs,
        }


def _class_attribute(cls, s, constants):
    """{name: value} of a class attribute line of an nn.Module class (`expansion: int = 1`):
    read as self.<name> by its methods."""
    if isinstance(s, ast.AnnAssign):
        if s.value is None:
            return {}  # an annotation alone binds nothing
        targets = [s.target]
    else:
        targets = s.targets
    if not all(isinstance(t, ast.Name) for t in targets):
        raise Unsupported(f"a class attribute of {cls.name} is one plain name: `expansion = 1`")
    v = constant_or_refused(constants, s.value, f"{cls.name}'s class attribute")
    return {t.id: v for t in targets}


def _locals(fn):
    """The names a method binds (its arguments, and what any of its lines assigns): local to
    it throughout, so never the script's top-level constants of the same name."""
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
    return names


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


class _Kept(ast.NodeTransformer):
    """`self.<name>` read as the constant __init__ kept there (a method called outside)."""

    def __init__(self, kept):
        self.kept = kept

    def visit_Name(self, node):
        v = self.kept.get(node.id, NOT)
        if isinstance(node.ctx, ast.Load) and v is not NOT and not isinstance(v, PyObject):
            return literal_node(v, node)
        return node


def _own(body):
    """A copy of a method's lines with self.<name> as a variable (line numbers kept)."""
    t = _Self()
    return [t.visit(copy.deepcopy(s)) for s in body]
