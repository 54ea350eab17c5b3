"""The script's own functions, inlined where they are called:

    def conv3x3(cin, cout, stride=1):           a top-level helper: its call is replaced by the
        return nn.Conv2d(cin, cout, 3, stride)  lines of its body and then its return value,
    self.conv1 = conv3x3(4, 8)                  its arguments (position, keyword, default)
                                                written in for its parameters
    class VAE(nn.Module):
        def encode(self, x): ...                a method other than __init__ / forward, called
        def forward(self, x):                   from them as self.encode(...): inlined the same
            mu, logvar = self.encode(x)         way; one that is never called is never read
    def get_params(n):
        def normal(shape): ...                  a def inside a function or method: inlined
        W = normal((n, n))                      where the lines after it call it

Python runs a function's lines each time it is called; define-by-run records the ops they
compute, so reading the body in place of the call gives the same graph. A function's own names
(its parameters, what its lines assign, the defs inside it) are renamed `<function>.<name>` so
that they cannot take the caller's (a def inside keeps its own names, and reads those of the
lines around it as they are when it is called, as Python's closures do); a parameter given a
plain name, and never assigned, is that name itself (a layer passed as an argument stays
callable); one given a value is bound to it by a line of its own (a constant's is worked out
there, so `o * scale` of literals is a number). A call whose value is a constant (its
arguments constants, its lines constant work) is worked out instead (pure_functions.py), and
so is a function made by another's call (`to_2tuple = _ntuple(2)`); such a function called
on a tensor is inlined with the names it closes over written in as their constants. A def
inside is only called there: one passed on or returned is refused. A function must return from
its last line only (or not at all: None); calls nest at most MAX_DEPTH deep (recursion
included) and every line they add is read under the import's time and size budget."""

import ast
import copy

from .constants import literal_node
from .problems import Unsupported
from .pure_functions import UserFunction, defaults_of, local_names, own_scope
from .python_values import NOT, LayerClass
from .syntax import bound_arguments

MAX_DEPTH = 16
_BODIES = ("body", "orelse", "finalbody", "handlers")


class Functions:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.defs = {}  # name -> ast.FunctionDef (top-level functions; shared with classes)
        self.methods = {}  # `self.<name>` -> its FunctionDef (in a class's walker)
        self.depth = [0]  # calls being inlined now (shared, so recursion is bounded overall)

    def share(self, other):
        self.defs, self.depth = other.defs, other.depth

    def define(self, stmt, top=True):
        """`def f(...): ...`: kept until it is called. One at the top of the script is the
        script's; one inside a function or method (`top` False) is known in the lines read
        after it there: its name is the inlined function's own (renamed with it), or the
        method's, whose constants hold it."""
        if stmt.decorator_list:
            raise Unsupported(f"{stmt.name}() has a decorator: the importer reads plain functions")
        c = self.imp.constants
        if top:
            self.defs[stmt.name] = stmt
        self.imp.env.pop(stmt.name, None)
        # (also a value: a call on constants is worked out where it can be, pure_functions.py;
        # a nested def reads the names of the lines around it as they are when it is called)
        closure = None if top else c.values
        c.values[stmt.name] = UserFunction(stmt, defaults_of(stmt, c), closure, c.top())

    def _callee(self, node):
        """(the FunctionDef a call node calls, whether it is a method, the UserFunction it is
        held as where it closes over names), or None."""
        f = getattr(node, "func", None)
        if isinstance(node, ast.Call) and isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name):  # rnn.initHidden(): a method of an instance
                fn = self.imp.classes.instance_method(f.value.id, f.attr)
                if fn is not None:
                    return fn, True, None
            return None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return None
        name = node.func.id
        if name in self.methods:
            return self.methods[name], True, None
        imp = self.imp
        held = imp.constants.lookup(name)
        if isinstance(held, UserFunction) and name not in imp.env:
            # a def (a nested one in the scope it was read in), or one held under another name
            return held.fn, False, held if held.made_by else None
        if name in self.defs and name not in imp.env and held is NOT:
            return self.defs[name], False, None
        return None

    # -- a statement's calls --------------------------------------------------------------------
    def expand(self, stmt):
        """The statements `stmt` reads as with its first user-function call inlined (the
        function's lines, then `stmt` with the call replaced by the returned value); None
        where it calls none. Only the statement's own expressions are looked at: the lines of
        an if / for / with body are expanded when they are read."""
        call = self._first_call(stmt)
        if call is None:
            return None
        fn, is_method, closure = self._callee(call)
        if self.depth[0] >= MAX_DEPTH:
            raise Unsupported(
                f"{fn.name}() calls functions more than {MAX_DEPTH} deep (a recursion that "
                "does not end within that is not read)"
            )
        lines, value = self._inlined(fn, call, is_method, stmt, closure)
        new = _Replace(call, value).visit(_shallow_owned(stmt))
        return lines + [new]

    def expand_return(self, stmt):
        """(lines, a return statement calling no user function) for a method's last line,
        `return self.decode(z), mu`: its calls inlined before it, as expand() does."""
        lines = []
        for _ in range(MAX_DEPTH * 64):
            expanded = self.expand(stmt)
            if expanded is None:
                return lines, stmt
            lines, stmt = lines + expanded[:-1], expanded[-1]
        raise Unsupported("the returned value calls functions without end")

    def read(self, stmts):
        """Read inlined statements (one level deeper)."""
        self.depth[0] += 1
        try:
            return self.imp.statements(stmts)
        finally:
            self.depth[0] -= 1

    def _first_call(self, stmt):
        """The first call of a user function in `stmt`'s own expressions whose arguments call
        none (the innermost first, as Python evaluates them)."""
        roots = [getattr(stmt, f) for f in _own_fields(stmt)]
        for root in roots:
            for node in _post_order(root):
                if self._callee(node) is not None and not self._worked_out(node):
                    return node
        return None

    def _worked_out(self, call):
        """Whether a call's value is a constant worked out here (pure_functions.py): the
        constant lines write it in where the statement is read."""
        return self.imp.constants.value(call) is not NOT

    # -- one call -------------------------------------------------------------------------------
    def _inlined(self, fn, call, is_method, where, closure=None):
        """(the lines that bind the parameters and run the body, the value returned);
        `closure`: the UserFunction of a function made by another's call, whose names it
        reads are written in as the constants they are."""
        names, given, defaults = bound_arguments(f"{fn.name}()", fn.args, call, is_method)
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # its docstring
        ret = None
        if body and isinstance(body[-1], ast.Return):
            ret, body = body[-1].value, body[:-1]
        _check_body(fn, body, ret)
        assigned = _assigned(body)
        prefix = fn.name
        if self.depth[0]:
            prefix = f"{prefix}_{self.depth[0] + 1}"
        renames, lines = {}, []
        for p in names:
            if p in given:
                arg = given[p]
            elif p in defaults:
                arg = defaults[p]
            else:
                raise Unsupported(f"{fn.name}() needs its argument '{p}'")
            if isinstance(arg, ast.Name) and p not in assigned:
                renames[p] = arg  # the caller's name itself
            else:
                renames[p] = ast.Name(id=f"{prefix}.{p}", ctx=ast.Load())
                lines.append(_at(ast.Assign(targets=[_store(renames[p].id)], value=arg), where))
        for name in assigned:
            renames.setdefault(name, ast.Name(id=f"{prefix}.{name}", ctx=ast.Load()))
        if closure is not None:
            renames.update(_closed_over(fn, closure, set(renames) | set(names), call))
        rename = _Rename(renames)
        lines += [rename.visit(copy.deepcopy(s)) for s in body]
        value = ast.Constant(None) if ret is None else rename.visit(copy.deepcopy(ret))
        return lines, _at(value, call)


def _check_body(fn, body, ret):
    """A body the inlining reads as Python runs it: no return but the last line's, no yield,
    no global / nonlocal, no class or lambda; a nested def only called (never passed on or
    returned: the importer holds no function made of the lines it reads)."""
    nested = set()
    for n in own_scope(body):
        if isinstance(n, ast.Return):
            raise Unsupported(
                f"{fn.name}() returns from inside its lines: the importer reads one return, "
                "its last line (set a variable and return it at the end)"
            )
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            raise Unsupported(f"{fn.name}() is a generator: write a function that returns")
        if isinstance(n, (ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            raise Unsupported(f"{fn.name}() defines a class or lambda inside: write it at the top")
        if isinstance(n, ast.FunctionDef):
            nested.add(n.name)
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            raise Unsupported(f"{fn.name}() declares global names: pass them as arguments")
    if nested:
        _called_only(fn, body, ret)


def _called_only(fn, body, ret):
    """Refused: a def inside `fn` (at any depth) named other than to call it."""
    lines = [*body, ast.Expr(ret)] if ret is not None else body
    nodes = [n for s in lines for n in ast.walk(s)]
    nested = {n.name for n in nodes if isinstance(n, ast.FunctionDef)}
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    for n in nodes:
        if isinstance(n, ast.Name) and n.id in nested and id(n) not in called:
            raise Unsupported(
                f"{fn.name}() passes on its inner function {n.id}(): the importer reads such "
                "a function only where it is called inside, or where its result is constants "
                "(numbers, tuples)"
            )


def _assigned(body):
    """The plain names a function's lines bind (its locals, its nested defs' names);
    `self.<name>` is the instance's."""
    out = []
    for n in own_scope(body):
        stored = isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
        name = n.id if stored else n.name if isinstance(n, ast.FunctionDef) else None
        if name is not None and "." not in name and name not in out:
            out.append(name)
    return out


def _closed_over(fn, held, bound, where):
    """{name: the expression written in} for each name a function made by another's call
    reads of that call's (its closure): a constant's literal, a layer class as written."""
    out = {}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id in held.closure) or n.id in bound | set(out):
            continue
        v = held.closure[n.id]
        if isinstance(v, LayerClass):
            out[n.id] = v.func(where)
        elif v is None or isinstance(v, (bool, int, float, str)) or _literal_seq(v):
            out[n.id] = literal_node(v, where)
        else:
            raise Unsupported(
                f"{fn.name}() (made by {held.made_by}()) reads its '{n.id}', which the "
                "importer holds as no value it can write in"
            )
    return out


def _literal_seq(v):
    return isinstance(v, (list, tuple)) and all(
        x is None or isinstance(x, (bool, int, float, str)) or _literal_seq(x) for x in v
    )


def _own_fields(stmt):
    return [f for f in stmt._fields if f not in _BODIES and getattr(stmt, f, None) is not None]


def _post_order(node):
    """The expressions under `node` (a node or a list of them), children first, left to right;
    not into a lambda or comprehension, whose names are their own."""
    if isinstance(node, list):
        for x in node:
            yield from _post_order(x)
        return
    if not isinstance(node, ast.AST) or isinstance(node, (ast.Lambda, ast.stmt)):
        return
    for field in node._fields:
        yield from _post_order(getattr(node, field, None))
    yield node


def _shallow_owned(stmt):
    """A copy of `stmt` whose own expressions may be changed (its bodies stay shared)."""
    new = type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields})
    for f in _own_fields(stmt):
        setattr(new, f, copy.deepcopy(getattr(stmt, f)))
    return ast.copy_location(new, stmt)


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


def _at(node, where):
    """`node` (and what it holds) placed at the line of `where`."""
    ast.copy_location(node, where)
    for n in ast.walk(node):
        if not hasattr(n, "lineno") and isinstance(n, (ast.expr, ast.stmt)):
            ast.copy_location(n, where)
    return node


class _Replace(ast.NodeTransformer):
    """The call node (by its place in the copy: equal position and text) replaced by a value."""

    def __init__(self, call, value):
        self.key = _key(call)
        self.value = value
        self.done = False

    def visit_Call(self, node):
        if not self.done and _key(node) == self.key:
            self.done = True
            return copy.deepcopy(self.value)
        return self.generic_visit(node)


def _key(node):
    return (
        getattr(node, "lineno", None),
        getattr(node, "col_offset", None),
        getattr(node, "end_col_offset", None),
        ast.dump(node),
    )


class _Rename(ast.NodeTransformer):
    """A function's own names as the inlined call names them (a nested def's own names are
    its own: only the names it reads of the lines around it are renamed inside it)."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        new = self.renames.get(node.id)
        if new is None:
            return node
        if isinstance(new, ast.Name):
            return ast.copy_location(ast.Name(id=new.id, ctx=node.ctx), node)
        return ast.copy_location(copy.deepcopy(new), node)

    def visit_FunctionDef(self, node):
        new = self.renames.get(node.name)
        if isinstance(new, ast.Name):
            node.name = new.id
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [d if d is None else self.visit(d) for d in node.args.kw_defaults]
        own = local_names(node)
        inner = _Rename({k: v for k, v in self.renames.items() if k not in own})
        node.body = [inner.visit(s) for s in node.body]
        return node
