"""Plain `ast` helpers of code import: they read a piece of syntax and know nothing of the
graph being built (literal values, dotted names, the node comments, output-only lines)."""

import ast
import io
import math
import re
import tokenize

from .problems import Unsupported

# `# node <id> (x, y) {json}`, as code export writes it
COMMENT = re.compile(
    r"#\s*node\s+(?P<id>\S+)\s+\(\s*(?P<x>[-+0-9.eE]+)\s*,\s*(?P<y>[-+0-9.eE]+)\s*\)"
    r"\s*(?P<extra>\{.*\})?\s*$"
)


def split_lines(source):
    """Lines as Python counts them (\\n, \\r\\n or \\r), not str.splitlines (which also breaks
    at \\x0c, \\x1c, U+2028, ...): the node comments are found by these numbers."""
    return re.split(r"\r\n|\r|\n", source)


def comments(source):
    """{line: comment text} of the script."""
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


def literal(node):
    """The Python value of a literal (numbers, bools, None, strings, nested lists/tuples,
    unary minus); Unsupported for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = literal(node.operand)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    inf = _infinity(node)
    if inf is not None:
        return inf  # float("-inf"), math.inf, torch.inf: a mask's fill value
    if isinstance(node, ast.List):
        return [literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(literal(e) for e in node.elts)
    raise Unsupported("expected a literal value")


def _infinity(node):
    """inf or -inf for `float("inf")`, `float("-inf")`, `math.inf`, `torch.inf`; else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "float"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        text = node.args[0].value.strip().lower()
        if text in ("inf", "+inf", "infinity", "+infinity"):
            return math.inf
        if text in ("-inf", "-infinity"):
            return -math.inf
        return None
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "inf"
        and isinstance(node.value, ast.Name)
        and node.value.id in ("math", "torch", "eg", "np", "numpy")
    ):
        return math.inf
    return None


def is_literal(node):
    try:
        literal(node)
        return True
    except Unsupported:
        return False


def is_number(v):
    """An int or float that is not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def lists(v):
    """Tuples as lists, all the way down (JSON has no tuples)."""
    return [lists(x) for x in v] if isinstance(v, (list, tuple)) else v


def dtype_of_values(v):
    """The dtype eg.tensor gives these values when none is written."""
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


def dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def kw(call, name):
    """The value of keyword argument `name` of a call, or None."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def num_name(v):
    return repr(v)


def strip_bool(node):
    """`bool(c)` and `c.item()` as conditions are just c."""
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1:
            return node.args[0]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
            return node.func.value
    return node


def is_new_axis(index):
    """`[:, None]`: a column of a 1-D array."""
    return (
        isinstance(index, ast.Tuple)
        and len(index.elts) == 2
        and isinstance(index.elts[0], ast.Slice)
        and not any((index.elts[0].lower, index.elts[0].upper, index.elts[0].step))
        and isinstance(index.elts[1], ast.Constant)
        and index.elts[1].value is None
    )


def is_main_guard(test):
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def is_output_call(node):
    """show(...), print(...), x.retain_grad(), if t.requires_grad: ..."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        f = node.value.func
        if isinstance(f, ast.Name) and f.id in ("show", "print"):
            return True
        if isinstance(f, ast.Attribute) and f.attr == "retain_grad":
            return True
    return isinstance(node, (ast.If, ast.For)) and only_output(node)


def only_output(stmt):
    """An if or for statement holding only output lines (the results section)."""
    if isinstance(stmt, ast.For):
        return all(is_output_call(s) for s in stmt.body) and not stmt.orelse
    if isinstance(stmt, ast.If):
        return all(is_output_call(s) for s in stmt.body + stmt.orelse)
    return False


def assigned(stmt):
    """The plain names an assignment binds (they are marked failed when its line fails)."""
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    return []


def bound_arguments(what, args, call, method=False):
    """How Python binds `call`'s arguments to a `def`'s `args` (an ast.arguments): (the
    parameter names in order, keyword-only ones last; {name: the expression given};
    {name: its default expression}). `what` names the callee in problems (`Block()`,
    `conv3x3()`); a method's `self` is left out. *args, **kwargs and positional-only
    parameters are not read."""
    if args.vararg or args.kwarg or args.posonlyargs:
        raise Unsupported(f"{what} takes *args or **kwargs: the importer reads named arguments")
    params = [x.arg for x in args.args]
    if method:
        if not params or params[0] != "self":
            raise Unsupported(f"{what} must be a method taking self first")
        params = params[1:]
    kwonly = [x.arg for x in args.kwonlyargs]
    if any(isinstance(x, ast.Starred) for x in call.args) or len(call.args) > len(params):
        raise Unsupported(f"{what} takes at most {len(params)} positional arguments")
    given = dict(zip(params, call.args))
    for k in call.keywords:
        if k.arg is None:
            raise Unsupported(f"{what} is called with **kwargs: write its arguments")
        if k.arg not in params and k.arg not in kwonly:
            raise Unsupported(f"{what} has no argument '{k.arg}'")
        if k.arg in given:
            raise Unsupported(f"{what} got '{k.arg}' twice")
        given[k.arg] = k.value
    defaults = dict(zip(params[len(params) - len(args.defaults) :], args.defaults))
    defaults.update({k: d for k, d in zip(kwonly, args.kw_defaults) if d is not None})
    return params + kwonly, given, defaults
