"""Code import: a Python script (engine or PyTorch) read back into a graph document with `ast`.

The script is parsed, never run: no exec, eval or compile-to-run, so importing a hostile script
does nothing. Each assignment becomes a node and its inputs become edges:

    x = eg.tensor(2.0, requires_grad=True)     tensor sources (also zeros/ones/randn/rand/arange)
    X, y = circle(n=200, noise=0.1, seed=0)    a dataset's arrays (a generator of datasets.py,
    d = eg.tensor(X)                           or from_csv): eg.tensor(X) is the dataset node,
    t = eg.tensor(y[:, None])                  and this (or dtype=eg.int64) its labels node
    y = x * w + 1.0                            + - * / ** @, unary -, comparisons
    z = eg.exp(y) / F.relu(y) / y.sum(dim=0)   calls of the op registry's functions and methods
    fc = nn.Linear(3, 2); h = fc(x)            a linear node (seed from reset_parameters)
    if cond: ... y = a  else: ... y = b        an `if` node (both branches end assigning y)
    x.add_(1.0); x[0:2] = v; x += 1            in-place nodes, and v = x[0:2] (import_inplace.py)

A `# node <id> (x, y) {json}` comment on a line (as code export writes) gives the node its id,
position and what the code cannot say (op, label, params). Header docstring, imports, the
`show` helper, prints, `retain_grad` and `.backward()` lines are read but make no nodes
(`.backward()` sets the document's target). Anything else is an ImportFailed problem naming
the line and the reason.
"""

import ast
import io
import json
import math
import re
import time
import tokenize
from dataclasses import dataclass

from . import registry
from .datasets import GENERATORS
from .document import ID_PATTERN, GraphDocument, parse
from .import_inplace import InplaceLines
from .limits import DEFAULT

MAX_SOURCE = 2_000_000  # characters
_COMMENT = re.compile(
    r"#\s*node\s+(?P<id>\S+)\s+\(\s*(?P<x>[-+0-9.eE]+)\s*,\s*(?P<y>[-+0-9.eE]+)\s*\)"
    r"\s*(?P<extra>\{.*\})?\s*$"
)
_ID = re.compile(ID_PATTERN)
_HELPERS = {"show", "init_like_engine"}
# a dataset's functions (datasets.py, copied into exported scripts) and their arguments
_DATA = {
    **{name: ("n", "noise", "seed") for name in GENERATORS},
    "from_csv": ("text", "features", "target"),
}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_CMPOPS = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
_SOURCE_INITS = ("zeros", "ones", "randn", "rand")
_DTYPES = ("float32", "float64", "int64", "bool")
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "long": "int64"}

# name -> (op, positional args, keyword-only args); args named as the op's ports and params
_SIGS = {
    **{n: (n, ("input", "other"), ()) for n in ("add", "sub", "mul", "div", "pow")},
    **{n: (n, ("input", "other"), ()) for n in ("maximum", "minimum", "matmul")},
    **{n: (n, ("input", "other"), ()) for n in ("gt", "lt", "ge", "le", "eq", "ne")},
    "where": ("where", ("condition", "input", "other"), ()),
    **{
        n: (n, ("input",), ())
        for n in ("exp", "log", "sqrt", "abs", "sin", "cos", "reciprocal")
        + ("relu", "sigmoid", "tanh", "neg", "detach")
    },
    "negative": ("neg", ("input",), ()),
    "clamp": ("clamp", ("input", "min", "max"), ()),
    "clip": ("clamp", ("input", "min", "max"), ()),
    "leaky_relu": ("leaky_relu", ("input", "negative_slope"), ()),
    "softmax": ("softmax", ("input", "dim"), ()),
    "log_softmax": ("log_softmax", ("input", "dim"), ()),
    "sum": ("sum", ("input", "dim", "keepdim"), ()),
    "mean": ("mean", ("input", "dim", "keepdim"), ()),
    "max": ("max", ("input", "dim", "keepdim"), ()),
    "min": ("min", ("input", "dim", "keepdim"), ()),
    "amax": ("max", ("input", "dim", "keepdim"), ()),
    "amin": ("min", ("input", "dim", "keepdim"), ()),
    "var": ("var", ("input", "dim"), ("correction", "keepdim", "unbiased")),
    "std": ("std", ("input", "dim"), ("correction", "keepdim", "unbiased")),
    "mm": ("matmul", ("input", "other"), ()),
    "transpose": ("transpose", ("input", "dim0", "dim1"), ()),
    "reshape": ("reshape", ("input", "shape"), ()),
    "view": ("reshape", ("input", "shape"), ()),
    "flatten": ("flatten", ("input", "start_dim", "end_dim"), ()),
    "unsqueeze": ("unsqueeze", ("input", "dim"), ()),
    "squeeze": ("squeeze", ("input", "dim"), ()),
    "permute": ("permute", ("input", "dims"), ()),
    "cat": ("cat", ("tensors", "dim"), ()),
    "concat": ("cat", ("tensors", "dim"), ()),
    "stack": ("stack", ("tensors", "dim"), ()),
    **{
        n: (n, ("input", "target"), ("reduction",))
        for n in ("mse_loss", "l1_loss", "binary_cross_entropy", "cross_entropy")
    },
}
_FUNCTIONAL_ONLY = {"leaky_relu", "mse_loss", "l1_loss", "binary_cross_entropy", "cross_entropy"}
_NOT_METHODS = _FUNCTIONAL_ONLY | {"cat", "concat", "stack", "where"}
# what PyTorch takes when an argument is left out, where it is not the op's param default
_CODE_DEFAULTS = {"clamp": {"min": None, "max": None}}
_REQUIRED = {
    "softmax": ("dim",),
    "log_softmax": ("dim",),
    "transpose": ("dim0", "dim1"),
    "reshape": ("shape",),
    "unsqueeze": ("dim",),
    "permute": ("dims",),
}
_VARARGS = {"reshape": "shape", "view": "shape", "permute": "dims"}  # x.reshape(2, 3)


@dataclass
class ImportProblem:
    line: int
    message: str
    code: str = ""

    def to_dict(self):
        return {"line": self.line, "message": self.message, "code": self.code}

    def __str__(self):
        return f"line {self.line}: {self.message}" + (f"  [{self.code}]" if self.code else "")


class ImportFailed(ValueError):
    """The script cannot be read as a graph; `.problems` lists each line that failed and why."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class _Unsupported(Exception):
    pass


def _number_problem(exc):
    if isinstance(exc, OverflowError) or "integer string conversion" in str(exc):
        return "a number is too large for a tensor (at most about 1.8e308)"
    return f"a value cannot be read: {str(exc)[:200]}"


def from_python(source: str, max_seconds: float = DEFAULT.max_import_seconds) -> GraphDocument:
    """The graph document a script describes (see the module doc); ImportFailed when a line
    cannot be read, or when reading takes longer than `max_seconds`."""
    return _import(source, max_seconds)


def _import(source, max_seconds=DEFAULT.max_import_seconds):
    if not isinstance(source, str):
        raise ImportFailed([ImportProblem(0, "the script must be text")])
    if len(source) > MAX_SOURCE:
        raise ImportFailed(
            [ImportProblem(0, f"the script is over {MAX_SOURCE:,} characters, the limit")]
        )
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        problem = ImportProblem(exc.lineno or 0, f"syntax error: {exc.msg}", text)
        raise ImportFailed([problem]) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ImportFailed([ImportProblem(0, f"cannot parse the script: {exc}")]) from None
    return _Importer(source, max_seconds).run(tree)


def _comments(source):
    out = {}
    if "#" not in source:
        return out  # tokenizing costs a third of reading a long script: only when it helps
    try:
        # newline=None: a lone \r ends a line here as it does for ast
        for tok in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _literal(node):
    """The Python value of a literal (numbers, bools, None, strings, nested lists/tuples,
    unary minus); _Unsupported for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    raise _Unsupported("expected a literal value")


def _is_literal(node):
    try:
        _literal(node)
        return True
    except _Unsupported:
        return False


def _lists(v):
    return [_lists(x) for x in v] if isinstance(v, (list, tuple)) else v


def _dtype_of_values(v):
    flat = []

    def walk(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        else:
            flat.append(x)

    walk(v)
    if flat and all(isinstance(x, bool) for x in flat):
        return "bool"
    if flat and all(isinstance(x, int) for x in flat):
        return "int64"
    return "float32"


def _dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Importer:
    def __init__(self, source, max_seconds=DEFAULT.max_import_seconds):
        self.text = source
        # lines as Python counts them (\n, \r\n or \r), not str.splitlines (which also
        # breaks at \x0c, \x1c, U+2028, ...): the node comments are found by these numbers
        self.lines = re.split(r"\r\n|\r|\n", source)
        self.comments = _comments(source)
        self.reserved = set()
        for text in self.comments.values():
            m = _COMMENT.match(text)
            if m:
                self.reserved.add(m["id"])
        self.nodes = {}  # id -> dict(id, op, params, position, label, line)
        self.edges = []
        self.env = {}  # variable -> node id (None: defined by a line that failed)
        self.layers = {}  # variable -> linear params
        self.arrays = {}  # variable -> ("features" | "labels", a dataset's params and node)
        self.problems = []
        self.target = None
        self.name, self.description = "imported script", ""
        self.mods = {"lib": set(), "F": set(), "nn": set(), "np": set(), "other": set()}
        self.auto = 0
        self.next_suffix = {}  # fresh_id's next suffix per base name
        self.deadline = time.perf_counter() + max_seconds  # the import's own time budget
        self.max_seconds = max_seconds
        self.current_var = None
        self.current_line = 0
        self.writes = InplaceLines(self, _Unsupported, _literal)  # x.add_(1), x[0] = 5., x += 1

    # -- helpers --------------------------------------------------------------------------------
    def problem(self, stmt, message):
        line = getattr(stmt, "lineno", 0)
        code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.problems.append(ImportProblem(line, message, code[:200]))

    def node_comment(self, first, last):
        for ln in range(first, last + 1):
            text = self.comments.get(ln)
            m = _COMMENT.match(text) if text else None
            if m:
                extra = {}
                if m["extra"]:
                    try:
                        extra = json.loads(m["extra"])
                    except ValueError:
                        raise _Unsupported("the JSON after '# node' cannot be read") from None
                    if not isinstance(extra, dict):
                        raise _Unsupported("the JSON after '# node' must be an object")
                try:
                    pos = {"x": float(m["x"]), "y": float(m["y"])}
                    if not all(math.isfinite(v) for v in pos.values()):
                        raise ValueError
                except ValueError:
                    raise _Unsupported("the position in '# node' cannot be read") from None
                return m["id"], pos, extra
        return None

    def fresh_id(self, base):
        base = re.sub(r"[^A-Za-z0-9_.:-]", "_", base)[:56] or "node"
        # the next suffix to try for each base, so that n lines assigning one name cost O(n)
        # in all, not a scan of every suffix taken so far per line (12,000 lines: 23 s)
        nid = base
        if nid in self.nodes or nid in self.reserved:  # (the base itself may be free again)
            k = self.next_suffix.get(base, 2)
            nid = f"{base}_{k}"
            while nid in self.nodes or nid in self.reserved:
                k += 1
                nid = f"{base}_{k}"
            self.next_suffix[base] = k + 1
        return nid

    def add_node(self, op, params, inputs, meta):
        """A node of `op`; inputs are [(port, node id)]; meta: (id, position, extra) or a
        variable name to derive the id from (None: an inner expression)."""
        spec = registry.get(op)
        position, label = None, None
        if isinstance(meta, tuple):
            nid, position, extra = meta
            if nid in self.nodes:
                raise _Unsupported(f"node id '{nid}' is used twice")
            hop = extra.get("op")
            if hop is not None and not isinstance(hop, str):
                raise _Unsupported("the op in the node comment must be text")
            if hop is not None and hop != op:
                hspec = registry.get(hop)
                if hspec is None:
                    raise _Unsupported(f"unknown op '{hop}' in the node comment")
                if [p.name for p in hspec.inputs if not p.optional] != [
                    p.name for p in spec.inputs if not p.optional
                ]:
                    raise _Unsupported(f"the code does not fit op '{hop}' of the node comment")
                op, spec = hop, hspec
                params = {k: v for k, v in params.items() if spec.param(k) is not None}
            if isinstance(extra.get("params"), dict):
                params.update(extra["params"])
            label = extra.get("label")
            if label is not None and not isinstance(label, str):
                raise _Unsupported("the label in the node comment must be text")
        else:
            nid = self.fresh_id(meta if meta else op)
            self.reserved.add(nid)
        if (
            spec.source
            and spec.param("name") is not None
            and "name" not in params
            and meta is not None
            and self.current_var
        ):
            params["name"] = self.current_var
        self.nodes[nid] = {
            "id": nid,
            "op": op,
            "params": params,
            "position": position,
            "label": label,
            "line": self.current_line,
            "auto": not isinstance(meta, tuple),
        }
        for port, src in inputs:
            self.edges.append((src, nid, port))
        return nid

    # -- the script -----------------------------------------------------------------------------
    def run(self, tree):
        body = tree.body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            self.header(first.value.value)
            body = body[1:]
        self.current_line = 0
        self.statements(body, top=True)
        if self.problems:
            raise ImportFailed(self.problems)
        return self.document()

    def header(self, text):
        head = text.split("\nExported from Wiregrad", 1)[0].strip("\n")
        lines = head.splitlines()
        if lines and lines[0].strip():
            self.name = lines[0].strip()[:200]
        self.description = "\n".join(lines[1:]).strip()[:10000]

    def statements(self, stmts, top=False):
        """Read statements; returns the variable the last one binds (for if-branches)."""
        last = None
        for stmt in stmts:
            self.current_line = stmt.lineno
            if time.perf_counter() > self.deadline:
                raise ImportFailed(
                    [
                        ImportProblem(
                            stmt.lineno,
                            f"reading the script took longer than {self.max_seconds:g} s, the "
                            "limit; it stopped at this line (import a shorter script)",
                        )
                    ]
                )
            last = None
            try:
                last = self.statement(stmt, top)
            except _Unsupported as exc:
                self.problem(stmt, str(exc))
                for name in _assigned(stmt):
                    self.env[name] = None
            except RecursionError:
                self.problem(stmt, "the expression is nested too deeply")
            except ImportFailed:
                raise  # the time budget, from a nested block
            except (OverflowError, ValueError) as exc:  # a number no float holds, 10**400
                self.problem(stmt, _number_problem(exc))
                for name in _assigned(stmt):
                    self.env[name] = None
        return last

    def statement(self, stmt, top):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return self.imports(stmt)
        if isinstance(stmt, ast.FunctionDef) and stmt.name in _HELPERS | set(_DATA) and top:
            a = stmt.args
            defaults = a.defaults + [d for d in a.kw_defaults if d is not None]
            if stmt.decorator_list or stmt.returns or not all(map(_is_literal, defaults)):
                raise _Unsupported(f"{stmt.name}() must be the exporter's plain helper")
            return None  # the exporter's own helpers and datasets.py's code (read, never run)
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                return None  # a string used as a comment
            if isinstance(stmt.value, ast.Call) and self.writes.is_write_call(stmt.value):
                return self.writes.expr_statement(stmt)
            if isinstance(stmt.value, ast.Call):
                return self.call_statement(stmt.value)
            raise _Unsupported("an expression whose value is not assigned")
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) == 1 and self.dataset_arrays(stmt.targets[0], stmt.value):
                return None
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
                return self.writes.setitem(stmt)
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                raise _Unsupported("assign to one plain variable name (x = ...)")
            self.assign(stmt.targets[0].id, stmt.value, stmt)
            return stmt.targets[0].id
        if isinstance(stmt, ast.If):
            if _is_main_guard(stmt.test):
                self.statements(stmt.body, top=top)
                if stmt.orelse:
                    raise _Unsupported("an else after `if __name__ == '__main__'`")
                return None
            if _only_output(stmt):
                return None
            return self.if_statement(stmt)
        if isinstance(stmt, ast.With):
            return self.with_statement(stmt)
        if isinstance(stmt, ast.For) and _only_output(stmt):
            return None
        if isinstance(stmt, ast.Pass):
            return None
        if isinstance(stmt, ast.AugAssign):
            return self.writes.aug_assign(stmt)
        kind = type(stmt).__name__
        why = {
            "For": "loops are not supported: write each step as its own line",
            "While": "loops are not supported: write each step as its own line",
            "FunctionDef": "function definitions are not supported",
            "ClassDef": "class definitions are not supported",
        }.get(kind, f"{kind} statements are not supported")
        raise _Unsupported(why)

    def imports(self, stmt):
        allowed = {
            "engine": "lib",
            "torch": "lib",
            "engine.nn.functional": "F",
            "torch.nn.functional": "F",
            "engine.nn": "nn",
            "torch.nn": "nn",
            "numpy": "np",
            "json": "other",
            "math": "other",
        }
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                kind = allowed.get(a.name)
                if kind is None:
                    raise _Unsupported(f"import of '{a.name}' is not supported")
                if a.asname is None and "." in a.name:
                    raise _Unsupported(f"write `import {a.name} as ...`")
                self.mods[kind].add(a.asname or a.name)
            return None
        mod = stmt.module or ""
        for a in stmt.names:
            kind = allowed.get(f"{mod}.{a.name}")
            if kind is None or stmt.level:
                raise _Unsupported(f"from {mod} import {a.name} is not supported")
            self.mods[kind].add(a.asname or a.name)
        return None

    # -- module paths -------------------------------------------------------------------------
    def ones_of(self, call, name):
        """Whether a backward call's one argument is `gradient=lib.ones_like(name)` (or the
        same given by position): what the run option gradient_ones does."""
        given = list(call.args) + [k.value for k in call.keywords if k.arg == "gradient"]
        if len(given) != 1 or len(call.args) + len(call.keywords) != 1:
            return False
        g = given[0]
        return (
            isinstance(g, ast.Call)
            and self.func_kind(_dotted(g.func)) == ("lib", "ones_like")
            and len(g.args) == 1
            and not g.keywords
            and isinstance(g.args[0], ast.Name)
            and g.args[0].id == name
        )

    def func_kind(self, dotted):
        """('lib'|'F'|'nn'|'np', rest) for a dotted call name rooted at a known module."""
        if dotted is None:
            return None, None
        head, _, rest = dotted.partition(".")
        for kind in ("lib", "F", "nn", "np"):
            if head in self.mods[kind]:
                if kind == "lib" and rest.startswith("nn.functional."):
                    return "F", rest[len("nn.functional.") :]
                if kind == "lib" and rest.startswith("nn."):
                    return "nn", rest[3:]
                if kind == "nn" and rest.startswith("functional."):
                    return "F", rest[len("functional.") :]
                return kind, rest
        return None, None

    def dtype(self, node):
        d = _dotted(node)
        kind, rest = self.func_kind(d)
        if kind == "lib" and rest in _DTYPES + tuple(_DTYPE_ALIASES):
            return _DTYPE_ALIASES.get(rest, rest)
        if isinstance(node, ast.Constant) and node.value in _DTYPES:
            return node.value
        raise _Unsupported("dtype must be one of " + ", ".join(f"eg.{d}" for d in _DTYPES))

    # -- statements ---------------------------------------------------------------------------
    def call_statement(self, call):
        d = _dotted(call.func)
        if d in ("print", "show"):
            return None
        if d == "init_like_engine":
            if not call.args or not isinstance(call.args[0], ast.Name):
                raise _Unsupported("init_like_engine(layer, seed=...) needs a layer variable")
            layer = self.layer_of(call.args[0].id)
            seed = call.args[1] if len(call.args) > 1 else _kw(call, "seed")
            layer["seed"] = int(_literal(seed)) if seed is not None else 0
            return None
        if isinstance(call.func, ast.Attribute):
            attr, recv = call.func.attr, call.func.value
            rname = recv.id if isinstance(recv, ast.Name) else None
            if attr == "backward" and rname is not None:
                if (call.args or call.keywords) and not self.ones_of(call, rname):
                    raise _Unsupported(
                        "backward() takes no arguments here but gradient=ones_like(x) (torch. "
                        "or eg.), x being the tensor backward is called on"
                    )
                self.target = self.ref_name(rname)
                return None
            if attr == "retain_grad" and rname is not None:
                return None
            if attr == "reset_parameters" and rname in self.layers:
                self.layers[rname]["seed"] = self.seed_of(call.args[0] if call.args else None)
                return None
            if attr == "requires_grad_" and rname is not None:
                nid = self.ref_name(rname)
                n = self.nodes[nid]
                if n["op"] != "tensor":
                    raise _Unsupported("requires_grad_() is supported on tensor sources only")
                n["params"]["requires_grad"] = True
                return None
            kind, rest = self.func_kind(d)
            if kind == "lib" and rest == "manual_seed":
                return None  # random sources carry their own seeds
        raise _Unsupported("a call whose result is not assigned")

    def seed_of(self, node):
        """The seed of `eg.Generator().manual_seed(S)`; 0 when no generator is given."""
        if node is None:
            return 0
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "manual_seed"
            and len(node.args) == 1
        ):
            inner = node.func.value
            kind, rest = self.func_kind(_dotted(getattr(inner, "func", None)))
            if isinstance(inner, ast.Call) and kind == "lib" and rest == "Generator":
                seed = _literal(node.args[0])
                if isinstance(seed, int) and not isinstance(seed, bool):
                    return seed
        raise _Unsupported("a generator must be written eg.Generator().manual_seed(<int>)")

    def layer_of(self, name):
        if name not in self.layers:
            raise _Unsupported(f"'{name}' is not a layer made by nn.Linear")
        return self.layers[name]

    def with_statement(self, stmt):
        if len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            raise _Unsupported("only `with eg.no_grad():` holding layer weights is supported")
        ctx = stmt.items[0].context_expr
        kind, rest = self.func_kind(_dotted(getattr(ctx, "func", None)))
        if not (isinstance(ctx, ast.Call) and kind == "lib" and rest == "no_grad"):
            raise _Unsupported("only `with eg.no_grad():` holding layer weights is supported")
        for s in stmt.body:
            self.current_line = s.lineno
            try:
                self.weight_copy(s)
            except _Unsupported as exc:
                self.problem(s, str(exc))
        return None

    def weight_copy(self, s):
        """`layer.weight.copy_(eg.tensor(V))` or `layer.bias.copy_(...)`."""
        why = "inside no_grad only layer.weight.copy_(eg.tensor(...)) is supported"
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            raise _Unsupported(why)
        call = s.value
        f = call.func
        if not (
            isinstance(f, ast.Attribute)
            and f.attr == "copy_"
            and isinstance(f.value, ast.Attribute)
            and f.value.attr in ("weight", "bias")
            and isinstance(f.value.value, ast.Name)
            and len(call.args) == 1
        ):
            raise _Unsupported(why)
        layer = self.layer_of(f.value.value.id)
        arg = call.args[0]
        kind, rest = self.func_kind(_dotted(getattr(arg, "func", None)))
        if not (isinstance(arg, ast.Call) and kind == "lib" and rest == "tensor" and arg.args):
            raise _Unsupported(why)
        value = _lists(_literal(arg.args[0]))
        layer["weight" if f.value.attr == "weight" else "bias_value"] = value

    def assign(self, name, value, stmt):
        # a layer declaration: fc = nn.Linear(in, out, bias=...)
        if isinstance(value, ast.Call):
            kind, rest = self.func_kind(_dotted(value.func))
            if kind == "nn" and rest == "Linear":
                self.layers[name] = self.linear_layer(value)
                self.env.pop(name, None)
                return
            if kind == "nn":
                raise _Unsupported(f"nn.{rest} is not supported (nn.Linear is)")
        if isinstance(value, ast.Name) and self.node_comment(stmt.lineno, stmt.end_lineno) is None:
            self.env[name] = self.ref_name(value.id)  # another name for the same node
            return
        meta = self.node_comment(stmt.lineno, stmt.end_lineno) or name
        self.current_var = name
        try:
            nid = self.expr(value, meta, name)
        finally:
            self.current_var = None
        self.env[name] = nid
        self.layers.pop(name, None)

    def linear_layer(self, call):
        args = list(call.args)
        if len(args) > 3:
            raise _Unsupported("nn.Linear(in_features, out_features, bias=...) takes 3 arguments")
        out = args[1] if len(args) > 1 else _kw(call, "out_features")
        if out is None:
            raise _Unsupported("nn.Linear needs out_features")
        out = _literal(out)
        if not isinstance(out, int) or isinstance(out, bool):
            raise _Unsupported("out_features must be a whole number")
        bias = args[2] if len(args) > 2 else _kw(call, "bias")
        bias = True if bias is None else _literal(bias)
        if not isinstance(bias, bool):
            raise _Unsupported("bias must be True or False")
        for k in call.keywords:
            if k.arg not in ("in_features", "out_features", "bias", "dtype", "device"):
                raise _Unsupported(f"nn.Linear has no argument '{k.arg}' here")
        return {"out_features": out, "bias": bias, "seed": 0, "used": False}

    def if_statement(self, stmt):
        meta = self.node_comment(stmt.lineno, stmt.body[0].lineno - 1)
        cond = self.operand_node(_strip_bool(stmt.test))
        if not stmt.orelse:
            raise _Unsupported("an if needs an else: both branches must assign the same variable")
        saved = dict(self.env)
        then_var = self.statements(stmt.body)
        then_env = self.env
        self.env = dict(saved)
        else_var = self.statements(stmt.orelse)
        else_env = self.env
        self.current_line = stmt.lineno
        if then_var is None or then_var != else_var:
            raise _Unsupported(
                "both branches of an if must end by assigning the same variable (y = ...)"
            )
        then_node, else_node = then_env.get(then_var), else_env.get(else_var)
        for node, branch, body in (
            (then_node, "then", stmt.body),
            (else_node, "else", stmt.orelse),
        ):
            # `y = <expr>` ending a branch without a node comment: y is the if node's name
            n = self.nodes.get(node)
            if n is not None and n["auto"] and n["line"] == body[-1].lineno:
                new = self.fresh_id(f"{then_var}_{branch}")
                self.rename(node, new)
                if branch == "then":
                    then_node = new
                else:
                    else_node = new
                for env in (then_env, else_env):
                    for k, v in env.items():
                        if v == node:
                            env[k] = new
        merged = dict(saved)
        for env in (then_env, else_env):
            for k, v in env.items():
                if k not in saved or saved[k] != v:
                    other = else_env if env is then_env else then_env
                    merged[k] = v if other.get(k, v) == v else None
        self.env = merged
        if then_node is None or else_node is None:
            self.env[then_var] = None
            return then_var  # the branch's own line failed and was reported
        nid = self.add_node(
            "if",
            {},
            [("condition", cond), ("then", then_node), ("else", else_node)],
            meta or then_var,
        )
        self.env[then_var] = nid
        return then_var

    def rename(self, old, new):
        n = self.nodes.pop(old)
        n["id"] = new
        self.nodes[new] = n
        self.reserved.discard(old)
        self.reserved.add(new)
        self.edges = [(new if s == old else s, new if d == old else d, p) for s, d, p in self.edges]

    # -- expressions --------------------------------------------------------------------------
    def ref_name(self, name):
        if name not in self.env:
            if name in self.layers:
                raise _Unsupported(f"'{name}' is a layer: call it on a tensor")
            raise _Unsupported(f"'{name}' is not defined by an earlier line")
        nid = self.env[name]
        if nid is None:
            raise _Unsupported(f"uses '{name}', whose line could not be read")
        return nid

    def operand(self, node):
        """('node', id) or ('number', value)."""
        if isinstance(node, ast.Name):
            return "node", self.ref_name(node.id)
        if _is_literal(node):
            v = _literal(node)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return "number", v
            raise _Unsupported("expected a tensor or a number")
        folded = self.fold(node)
        if folded is not None:
            return "number", folded
        return "node", self.expr(node, None, None)

    def fold(self, node):
        """A constant arithmetic expression (1 / 3) as a number, else None."""
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            a, b = node.left, node.right
            if _is_literal(a) and _is_literal(b):
                x, y = _literal(a), _literal(b)
                if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
                    try:
                        return {
                            ast.Add: x + y,
                            ast.Sub: x - y,
                            ast.Mult: x * y,
                            ast.Div: x / y if y else None,
                        }[type(node.op)]
                    except (OverflowError, TypeError):
                        return None
        return None

    def operand_node(self, node):
        """A node id for `node`; a number becomes a scalar source."""
        kind, v = self.operand(node)
        if kind == "node":
            return v
        if not math.isfinite(float(v)):  # 1e999: JSON has no infinity to store it as
            raise OverflowError(v)
        return self.add_node("scalar", {"value": float(v), "name": _num_name(v)}, [], None)

    def expr(self, node, meta, var):
        """The node that computes `node`; `meta` names it (see add_node)."""
        if isinstance(node, ast.Name):
            nid = self.ref_name(node.id)
            return nid
        if isinstance(node, ast.BinOp):
            return self.binop(node, meta)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if _is_literal(node):
                return self.add_node("scalar", {"value": float(_literal(node))}, [], meta)
            return self.add_node("neg", {}, [("input", self.operand_node(node.operand))], meta)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise _Unsupported("chained comparisons are not supported")
            op = _CMPOPS.get(type(node.ops[0]))
            if op is None:
                raise _Unsupported(f"the comparison {type(node.ops[0]).__name__} is not supported")
            a = self.operand_node(node.left)
            b = self.operand_node(node.comparators[0])
            return self.add_node(op, {}, [("input", a), ("other", b)], meta)
        if isinstance(node, ast.IfExp):
            cond = self.operand_node(_strip_bool(node.test))
            a, b = self.operand_node(node.body), self.operand_node(node.orelse)
            return self.add_node("if", {}, [("condition", cond), ("then", a), ("else", b)], meta)
        if isinstance(node, ast.Attribute) and node.attr == "values":
            inner = node.value
            if isinstance(inner, ast.Call):
                return self.call(inner, meta, values=True)
        if isinstance(node, ast.Call) and self.writes.is_write_call(node):
            nid = self.writes.write_call(node, meta)  # y = x.add_(1): x is written too
            self.writes.bind(node.func.value, nid)
            return nid
        if isinstance(node, ast.Call):
            return self.call(node, meta)
        if isinstance(node, ast.Subscript):
            return self.writes.getitem(node, meta)
        if _is_literal(node):
            raise _Unsupported("a literal must be wrapped in eg.tensor(...)")
        raise _Unsupported(f"{type(node).__name__} expressions are not supported")

    def binop(self, node, meta):
        if isinstance(node.op, ast.MatMult):
            a, b = self.operand_node(node.left), self.operand_node(node.right)
            return self.add_node("matmul", {}, [("input", a), ("other", b)], meta)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise _Unsupported(f"the operator {type(node.op).__name__} is not supported")
        folded = self.fold(node)
        if folded is not None:
            raise _Unsupported("a constant must be wrapped in eg.tensor(...)")
        lk, lv = self.operand(node.left)
        rk, rv = self.operand(node.right)
        if lk == "number" and op in ("add", "mul"):
            (lk, lv), (rk, rv) = (rk, rv), (lk, lv)
        if lk == "number":
            lv = self.add_node("scalar", {"value": float(lv), "name": _num_name(lv)}, [], None)
        if rk == "number":
            return self.add_node(op, {"scalar": rv}, [("input", lv)], meta)
        return self.add_node(op, {}, [("input", lv), ("other", rv)], meta)

    def call(self, node, meta, values=False):
        func = node.func
        d = _dotted(func)
        # a layer: h = fc(x)
        if isinstance(func, ast.Name) and func.id in self.layers and not values:
            layer = self.layers[func.id]
            if layer["used"]:
                raise _Unsupported(
                    f"layer '{func.id}' is used twice; each linear node has its own weights"
                )
            if len(node.args) != 1 or node.keywords:
                raise _Unsupported("a layer takes one tensor")
            layer["used"] = True
            params = {k: v for k, v in layer.items() if k != "used"}
            return self.add_node(
                "linear", params, [("input", self.operand_node(node.args[0]))], meta
            )
        kind, rest = self.func_kind(d)
        if kind == "lib" and rest in ("tensor", "arange", *_SOURCE_INITS):
            return self.source(node, rest, meta)
        method_recv = None
        if kind is None and isinstance(func, ast.Attribute):
            # a method: x.exp(), x.sum(dim=0), eg.arange(6).reshape((2, 3))
            if func.attr == "requires_grad_" and not node.args and not node.keywords:
                inner = self.expr(func.value, meta, None)
                n = self.nodes[inner]
                if n["op"] != "tensor":
                    raise _Unsupported("requires_grad_() is supported on tensor sources only")
                n["params"]["requires_grad"] = True
                return inner
            if func.attr == "reshape" and self.is_arange(func.value):
                return self.source(node, "arange", meta)
            method_recv, rest = func.value, func.attr
            kind = "method"
        if kind not in ("lib", "F", "method"):
            if d is None:
                raise _Unsupported("only calls of eg./torch./F. functions and methods")
            raise _Unsupported(f"'{d}' is not a function of the op registry")
        sig = _SIGS.get(rest)
        if (
            sig is None
            or rest in (_FUNCTIONAL_ONLY if kind == "lib" else ())
            or (kind == "method" and rest in _NOT_METHODS)
        ):
            raise _Unsupported(f"'{d or rest}' is not an op of the registry")
        op, positional, kwonly = sig
        args = list(node.args)
        if method_recv is not None:
            if (
                rest in _VARARGS
                and args
                and not isinstance(args[0], (ast.Tuple, ast.List))
                and (len(args) > 1 or isinstance(args[0], ast.Constant))
            ):
                args = [ast.Tuple(elts=args, ctx=ast.Load())]
            args = [method_recv] + args
        if any(isinstance(a, ast.Starred) for a in args):
            raise _Unsupported("*args are not supported")
        if len(args) > len(positional):
            raise _Unsupported(f"{rest} takes at most {len(positional)} positional arguments")
        bound = dict(zip(positional, args))
        for k in node.keywords:
            if k.arg is None:
                raise _Unsupported("**kwargs are not supported")
            if k.arg in bound:
                raise _Unsupported(f"{rest} got '{k.arg}' twice")
            if k.arg not in positional and k.arg not in kwonly:
                raise _Unsupported(f"{rest} has no argument '{k.arg}' here")
            bound[k.arg] = k.value
        return self.make_op(op, rest, bound, meta, values)

    def is_arange(self, node):
        kind, rest = self.func_kind(_dotted(getattr(node, "func", None)))
        return isinstance(node, ast.Call) and kind == "lib" and rest == "arange"

    def make_op(self, op, name, bound, meta, values):
        spec = registry.get(op)
        ports = {p.name for p in spec.inputs}
        # scalar `other` for add/sub/mul/div/pow: eg.pow(x, 2)
        scalar = None
        if spec.extra.get("scalar_for") == "other" and "other" in bound:
            kind, v = self.operand(bound["other"])
            if kind == "number":
                bound.pop("other")
                scalar = v
        vals = {}
        for k in list(bound):
            if k not in ports:
                v = _literal(bound.pop(k))
                vals[k] = list(v) if isinstance(v, tuple) else v
        if op in ("max", "min"):
            dim = vals.get("dim")
            if name in ("max", "min") and isinstance(dim, int) and not values:
                raise _Unsupported(f"{name}(x, dim) gives (values, indices): add .values")
            if name in ("amax", "amin") and isinstance(dim, int):
                vals["dim"] = [dim]
        elif values:
            raise _Unsupported(".values is supported after max/min along a dim")
        if "unbiased" in vals:
            if "correction" in vals:
                raise _Unsupported("give correction or unbiased, not both")
            vals["correction"] = 1 if vals.pop("unbiased") else 0
        for req in _REQUIRED.get(op, ()):
            if req not in vals:
                raise _Unsupported(f"{name} needs {req}=")
        params = dict(_CODE_DEFAULTS.get(op, {}))
        if scalar is not None:
            params["scalar"] = scalar
        inputs = []
        for port in spec.inputs:
            a = bound.pop(port.name, None)
            if a is None:
                if not port.optional or (port.name == "other" and scalar is None):
                    raise _Unsupported(f"{name} needs its '{port.name}' input")
                continue
            if port.variadic:
                if not isinstance(a, (ast.List, ast.Tuple)):
                    raise _Unsupported(f"{name} takes a list of tensors")
                inputs += [(port.name, self.operand_node(e)) for e in a.elts]
            else:
                inputs.append((port.name, self.operand_node(a)))
        for k, v in vals.items():
            if spec.param(k) is None:
                raise _Unsupported(f"{name} has no argument '{k}' here")
            params[k] = v
        return self.add_node(op, params, inputs, meta)

    def source(self, node, fn, meta):
        """eg.tensor / zeros / ones / randn / rand / arange(...).reshape(...)."""
        params = {}
        kwargs = {k.arg: k.value for k in node.keywords}
        if None in kwargs:
            raise _Unsupported("**kwargs are not supported")
        if fn == "arange" and isinstance(node.func, ast.Attribute) and node.func.attr == "reshape":
            inner = node.func.value
            shape = (
                _literal(node.args[0])
                if len(node.args) == 1
                else tuple(_literal(a) for a in node.args)
            )
            if isinstance(shape, int):
                shape = (shape,)
            kwargs = {k.arg: k.value for k in inner.keywords}
            params.update({"init": "arange", "shape": list(shape), "value": None})
            params["dtype"] = self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else "int64"
            if len(inner.args) != 1:
                raise _Unsupported("write eg.arange(n).reshape(shape)")
        elif fn == "arange":
            if len(node.args) != 1:
                raise _Unsupported("only eg.arange(n) is supported")
            n = _literal(node.args[0])
            params.update({"init": "arange", "shape": [n], "value": None})
            params["dtype"] = self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else "int64"
        elif fn == "tensor":
            if len(node.args) != 1:
                raise _Unsupported("eg.tensor takes one value")
            arg = node.args[0]
            array = arg.value if isinstance(arg, ast.Subscript) else arg
            if isinstance(array, ast.Name) and array.id in self.arrays:
                return self.dataset_tensor(arg, array.id, kwargs, meta)
            rnd = self.numpy_random(arg)
            if rnd is not None:
                params.update(rnd)
                params["dtype"] = (
                    self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else ("float64")
                )
            else:
                value = _lists(_literal(arg))
                if isinstance(value, str) or value is None:
                    raise _Unsupported("eg.tensor takes numbers or nested lists of numbers")
                params["value"] = value
                params["dtype"] = (
                    self.dtype(kwargs.pop("dtype"))
                    if "dtype" in kwargs
                    else _dtype_of_values(value)
                )
        else:
            shape = [_literal(a) for a in node.args]
            if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
                shape = list(shape[0])
            if "size" in kwargs:
                shape = list(_literal(kwargs.pop("size")))
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
                raise _Unsupported(f"{fn} takes sizes (whole numbers)")
            params.update({"init": fn, "shape": shape, "value": None})
            params["dtype"] = self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else "float32"
            if fn in ("randn", "rand"):
                params["seed"] = self.seed_of(kwargs.pop("generator", None))
        rg = kwargs.pop("requires_grad", None)
        if rg is not None:
            rg = _literal(rg)
            if not isinstance(rg, bool):
                raise _Unsupported("requires_grad must be True or False")
            params["requires_grad"] = rg
        kwargs.pop("device", None)
        if kwargs:
            raise _Unsupported(f"{fn} has no argument '{next(iter(kwargs))}' here")
        if params.get("value") is None:
            params.pop("value", None)
        return self.add_node("tensor", params, [], meta)

    def dataset_arrays(self, target, value):
        """`X, y = circle(n=200, noise=0.1, seed=0)` (or `from_csv(text, features=...,
        target=...)`): the arrays a dataset node and its labels are made from; False for any
        other assignment."""
        if not (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in _DATA
        ):
            return False
        fn, names = value.func.id, _DATA[value.func.id]
        if len(target.elts) != 2 or not all(isinstance(e, ast.Name) for e in target.elts):
            raise _Unsupported(f"{fn}() gives two arrays: write features, labels = {fn}(...)")
        if len(value.args) > len(names) or any(isinstance(a, ast.Starred) for a in value.args):
            raise _Unsupported(f"{fn} takes at most {len(names)} positional arguments")
        bound = dict(zip(names, value.args))
        for k in value.keywords:
            if k.arg not in names or k.arg in bound:
                raise _Unsupported(f"{fn} has no argument '{k.arg}' here")
            bound[k.arg] = k.value
        needed = names[:1] if fn == "from_csv" else names
        if not set(needed) <= set(bound):
            raise _Unsupported(f"{fn} needs {', '.join(needed)}")
        params = {"kind": "csv" if fn == "from_csv" else fn}
        params.update({"csv" if k == "text" else k: _literal(v) for k, v in bound.items()})
        made = {"params": params, "node": None}  # the node, once eg.tensor(X) makes it
        for name, part in zip(target.elts, ("features", "labels")):
            self.arrays[name.id] = (part, made)
            self.env.pop(name.id, None)
        return True

    def dataset_tensor(self, arg, name, kwargs, meta):
        """eg.tensor(X) of a dataset's features: the dataset node. Of its labels:
        eg.tensor(y[:, None]) (a float column) or eg.tensor(y, dtype=eg.int64) (classes), a
        labels node."""
        part, made = self.arrays[name]
        dtype = self.dtype(kwargs.pop("dtype")) if "dtype" in kwargs else "float32"
        kwargs.pop("device", None)
        if kwargs:
            raise _Unsupported(f"tensor has no argument '{next(iter(kwargs))}' here")
        if part == "features":
            if isinstance(arg, ast.Subscript) or dtype != "float32":
                raise _Unsupported(f"write eg.tensor({name}) for a dataset's features")
            made["node"] = self.add_node("dataset", dict(made["params"]), [], meta)
            return made["node"]
        column = isinstance(arg, ast.Subscript)
        if (column and (dtype != "float32" or not _is_new_axis(arg.slice))) or (
            not column and dtype != "int64"
        ):
            raise _Unsupported(
                f"write eg.tensor({name}[:, None]) for labels in a column, or "
                f"eg.tensor({name}, dtype=eg.int64) for class indices"
            )
        if made["node"] is None:
            raise _Unsupported("make the dataset's features tensor before its labels")
        self.nodes[made["node"]]["params"]["labels"] = "column" if column else "classes"
        return self.add_node("labels", {}, [("dataset", made["node"])], meta)

    def numpy_random(self, node):
        """{init, seed, shape} for np.random.default_rng(S).standard_normal(shape) / .random."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return None
        draw = node.func.attr
        rng = node.func.value
        kind, rest = self.func_kind(_dotted(getattr(rng, "func", None)))
        if not (isinstance(rng, ast.Call) and kind == "np" and rest == "random.default_rng"):
            return None
        if draw not in ("standard_normal", "random") or len(node.args) != 1 or len(rng.args) != 1:
            raise _Unsupported("only default_rng(seed).standard_normal(shape) or .random(shape)")
        seed = _literal(rng.args[0])
        shape = _literal(node.args[0])
        shape = [shape] if isinstance(shape, int) else list(shape)
        return {
            "init": "randn" if draw == "standard_normal" else "rand",
            "seed": seed,
            "shape": shape,
        }

    # -- the document ---------------------------------------------------------------------------
    def document(self):
        ids = list(self.nodes)
        depth = {}
        incoming = {}
        for src, dst, _ in self.edges:
            incoming.setdefault(dst, []).append(src)
        for nid in ids:
            depth[nid] = 1 + max((depth.get(s, 0) for s in incoming.get(nid, [])), default=-1)
        column = {}
        nodes = []
        for nid in ids:
            n = self.nodes[nid]
            pos = n["position"]
            if pos is None:
                row = column.get(depth[nid], 0)
                column[depth[nid]] = row + 1
                pos = {"x": 220.0 * depth[nid], "y": 110.0 * row}
            out = {"id": nid, "op": n["op"], "params": n["params"], "position": pos}
            if n["label"] is not None:
                out["label"] = n["label"]
            nodes.append(out)
        edges, seen = [], set()
        for src, dst, port in self.edges:
            eid = f"{src}-{dst}"
            if eid in seen or len(eid) > 64 or not _ID.match(eid):
                eid = f"{src}-{dst}-{port}"
            k = 2
            base = eid
            while eid in seen or len(eid) > 64 or not _ID.match(eid):
                eid = f"e{len(edges) + 1}" if len(base) > 60 else f"{base}-{k}"
                k += 1
                if eid in seen:
                    base = f"e{len(edges) + k}"
            seen.add(eid)
            edges.append(
                {"id": eid, "source": src, "sourcePort": "out", "target": dst, "targetPort": port}
            )
        data = {
            "name": self.name,
            "description": self.description,
            "nodes": nodes,
            "edges": edges,
            "target": self.target,
        }
        try:
            doc = parse(data)
        except Exception as exc:  # pydantic's ValidationError: an id or a value out of range
            problem = ImportProblem(0, f"the graph is not a valid document: {exc}")
            raise ImportFailed([problem]) from None
        from .validate import structural_problems

        problems = []
        for p in structural_problems(doc):
            line = self.nodes[p.node]["line"] if p.node in self.nodes else 0
            code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
            problems.append(ImportProblem(line, p.message, code[:200]))
        if problems:
            raise ImportFailed(problems)
        return doc


def _is_new_axis(index):
    """`[:, None]`: a column of a 1-D array."""
    return (
        isinstance(index, ast.Tuple)
        and len(index.elts) == 2
        and isinstance(index.elts[0], ast.Slice)
        and not any((index.elts[0].lower, index.elts[0].upper, index.elts[0].step))
        and isinstance(index.elts[1], ast.Constant)
        and index.elts[1].value is None
    )


def _kw(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _num_name(v):
    return repr(v)


def _strip_bool(node):
    """`bool(c)` and `c.item()` as conditions are just c."""
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1:
            return node.args[0]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
            return node.func.value
    return node


def _is_main_guard(test):
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _is_output_call(node):
    """show(...), print(...), x.retain_grad(), if t.requires_grad: ..."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        f = node.value.func
        if isinstance(f, ast.Name) and f.id in ("show", "print"):
            return True
        if isinstance(f, ast.Attribute) and f.attr == "retain_grad":
            return True
    return isinstance(node, (ast.If, ast.For)) and _only_output(node)


def _only_output(stmt):
    """An if or for statement holding only output lines (the results section)."""
    if isinstance(stmt, ast.For):
        return all(_is_output_call(s) for s in stmt.body) and not stmt.orelse
    if isinstance(stmt, ast.If):
        return all(_is_output_call(s) for s in stmt.body + stmt.orelse)
    return False


def _assigned(stmt):
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    return []
