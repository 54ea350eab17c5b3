"""The script's small pure functions worked out while reading, where their result is a constant
(constants.py), never run:

    def _ntuple(n):                             a function that makes a function: its result
        def parse(x):                           is that function with `n` bound (a closure)
            if isinstance(x, Iterable) and not isinstance(x, str):
                return tuple(x)
            return tuple(repeat(x, n))
        return parse
    to_2tuple = _ntuple(2)
    patch_size = to_2tuple(4)                   (4, 4)

Python runs such a helper when the script runs and passes its value on; define-by-run records
only what that value built, so the importer works the value out the same way. A function is
worked out here when its arguments are constants and its lines are only: assignments of
constants to plain names, `if` on constants, `return` (anywhere), nested `def`s (closures over
its names, read when they are called, as Python binds them late), docstrings and `pass`. Any
other line, or a value that is no constant, and the call is read as before: its lines inlined
where it is called (functions.py), or refused there. Calls nest at most MAX_DEPTH deep, one
value may take at most MAX_STEPS lines and calls and one walker's reading MAX_TOTAL_STEPS in
all (each line's values bounded as constants.py bounds them), so neither a recursion nor a
line calling a long function many times can hold the import."""

import ast

from .problems import Unsupported
from .python_values import NOT, LayerClass, PyObject

MAX_DEPTH = 16
MAX_STEPS = 1_000  # lines run and calls made, for one value
MAX_TOTAL_STEPS = 100_000  # for all the values one walker (the script's, a class's) works out


class Unknown(Exception):
    """The call's value is no constant worked out here."""


class UserFunction(PyObject):
    """A `def` of the script: its FunctionDef, the names it closes over (`closure`, the
    enclosing call's names, None at the top) and the script's constants it reads as globals;
    its defaults worked out where it was defined, as Python does."""

    def __init__(self, fn, defaults, closure=None, globals=None, made_by=None):
        self.fn = fn
        self.defaults = defaults  # {parameter: value, or NOT where no constant}
        self.closure = closure
        self.globals = globals
        self.made_by = made_by  # the name of the function whose call made this one, or None

    def __repr__(self):
        return f"<function {self.fn.name} of line {self.fn.lineno}>"

    def evaluate(self, args, kwargs, caller):
        """The value of a call on constant `args`/`kwargs` (values), read with `caller`'s
        constants (its budget of calls); NOT where it is not worked out here."""
        budget = caller.budget
        if min(budget[0], budget[2]) <= 0 or budget[1] >= MAX_DEPTH:
            return NOT
        budget[0] -= 1
        budget[2] -= 1
        budget[1] += 1
        try:
            names = self._bound(args, kwargs)
            local = local_names(self.fn)
            values = {k: v for k, v in (self.closure or {}).items() if k not in local}
            values.update(names)
            frame = caller.frame(values, self.globals, local)
            return _run(self.fn, frame, self.globals)
        except (Unknown, Unsupported):
            return NOT  # (read as before: inlined where it is called, or refused there)
        finally:
            budget[1] -= 1

    def _bound(self, args, kwargs):
        """{parameter: value} as Python binds the call; Unknown where it would not bind."""
        a = self.fn.args
        if a.vararg or a.kwarg or a.posonlyargs or self.fn.decorator_list:
            raise Unknown
        params = [x.arg for x in a.args]
        kwonly = [x.arg for x in a.kwonlyargs]
        if len(args) > len(params):
            raise Unknown
        out = dict(zip(params, args))
        for k, v in kwargs.items():
            if k in out or (k not in params and k not in kwonly):
                raise Unknown
            out[k] = v
        for p in params + kwonly:
            if p not in out:
                if self.defaults.get(p, NOT) is NOT:
                    raise Unknown
                out[p] = self.defaults[p]
        return out


def defaults_of(fn, constants):
    """{parameter: its default's value (NOT where no constant)} of a def, worked out now."""
    a = fn.args
    params = [x.arg for x in a.args]
    out = dict(zip(params[len(params) - len(a.defaults) :], map(constants.value, a.defaults)))
    out.update(
        {x.arg: constants.value(d) for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    )
    return out


def _run(fn, frame, globals):
    """Run a function's lines on constants: the value it returns (None where it ends
    without a return, as Python's); Unknown at a line that is not worked out here."""
    done, value = _lines(fn.body, frame, (globals, fn.name))
    return value if done else None


def _lines(body, frame, scope):
    for s in body:
        budget = frame.budget
        budget[0] -= 1
        budget[2] -= 1
        if min(budget[0], budget[2]) < 0:
            raise Unknown
        if isinstance(s, ast.Pass) or (
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
        ):
            continue
        if isinstance(s, ast.Return):
            return True, None if s.value is None else _value(frame, s.value)
        if isinstance(s, ast.If):
            test = _value(frame, s.test)
            if isinstance(test, PyObject) and not isinstance(test, (UserFunction, LayerClass)):
                raise Unknown  # (a module given as an argument may be empty, hence false)
            done, value = _lines(s.body if test else s.orelse, frame, scope)
            if done:
                return True, value
        elif isinstance(s, ast.Assign):
            v = _value(frame, s.value)
            for t in s.targets:
                _bind(frame, t, v)
        elif isinstance(s, ast.AnnAssign) and s.value is not None and s.simple:
            _bind(frame, s.target, _value(frame, s.value))
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            read = ast.Name(id=s.target.id, ctx=ast.Load())
            _bind(frame, s.target, _value(frame, ast.BinOp(read, s.op, s.value)))
        elif isinstance(s, ast.FunctionDef) and not s.decorator_list:
            # (closing over this call's names, read when the inner function is called)
            globals, outer = scope
            inner = UserFunction(s, defaults_of(s, frame), frame.values, globals, outer)
            frame.values[s.name] = inner
        else:
            raise Unknown
    return False, None


def _value(frame, node):
    v = frame.value(node)
    if v is NOT:
        raise Unknown
    return v


def _bind(frame, target, v):
    if isinstance(target, ast.Name):
        frame.values[target.id] = v
        return
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(v, (list, tuple))):
        raise Unknown
    if len(target.elts) != len(v) or not all(isinstance(e, ast.Name) for e in target.elts):
        raise Unknown
    for e, x in zip(target.elts, v):
        frame.values[e.id] = x


def local_names(fn):
    """The names a function binds (its parameters, what its lines assign, its nested defs):
    local throughout it, as Python reads them."""
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    for n in own_scope(fn.body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
    return names


def own_scope(body):
    """The nodes of a function's lines that are in its own scope: a nested def or class is
    given (its defaults and decorators too), its body is not."""
    todo = list(reversed(body))
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = [*n.decorator_list, *n.args.defaults, *n.args.kw_defaults]
        elif isinstance(n, ast.ClassDef):
            inner = [*n.decorator_list, *n.bases, *n.keywords]
        elif isinstance(n, ast.Lambda):
            inner = [*n.args.defaults, *n.args.kw_defaults]
        else:
            inner = list(ast.iter_child_nodes(n))
        todo.extend(reversed([x for x in inner if x is not None]))
