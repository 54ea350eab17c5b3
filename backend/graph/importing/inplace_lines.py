"""Reading in-place lines of a script into in-place nodes (ops/inplace.py), with `ast`
only, never running them:

    x.add_(1.0)   x.mul_(w)   x.relu_()   x.clamp_(min=0.0)   x.zero_()   x.fill_(2.0)
    x += 1        x -= w      x *= 2      x /= 2               (on a tensor variable)
    x[0] = 5.0    x[0:2] = v  x[:, 1] = 0.0                     (setitem)
    x[0:2].mul_(3.0)                                            (getitem, then the write)
    v = x[0:2]                                                  (getitem: a view)

After a write to a variable, the variable names the in-place node (the same tensor, one
version later), so later lines read it from there; the order of the lines is the order of
the nodes, which is the order the document runs them in.
"""

import ast

from ..ops.inplace import index_code, parse_index

METHODS = {"add_", "sub_", "mul_", "div_", "clamp_", "relu_", "zero_", "fill_"}
_AUG = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _int(node):
    """An integer literal (`3`, `-1`) or None for a missing slice bound."""
    if node is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    raise ValueError


def index_text(node, unsupported):
    """The subscript `node` (ast) as the index param's text, checked by parse_index."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    key = []
    try:
        for p in parts:
            if isinstance(p, ast.Slice):
                lo, hi, st = _int(p.lower), _int(p.upper), _int(p.step)
                key.append(slice(lo, hi, st))
            elif isinstance(p, ast.Constant) and p.value is Ellipsis:
                key.append(Ellipsis)
            elif isinstance(p, ast.Constant) and p.value is None:
                key.append(None)
            else:
                v = _int(p)
                if v is None:
                    raise ValueError
                key.append(v)
    except ValueError:
        raise unsupported(
            "an index here takes integers, slices, ... and None only (x[0], x[0:2], x[:, 1])"
        ) from None
    text = index_code(tuple(key) if isinstance(node, ast.Tuple) else key[0])
    try:
        parse_index(text)
    except ValueError as exc:
        raise unsupported(str(exc)) from None
    return text


class InplaceLines:
    """The in-place part of an importer (importer._Importer passes itself)."""

    def __init__(self, imp, unsupported, literal):
        self.imp, self.unsupported, self.literal = imp, unsupported, literal

    def meta(self, stmt, name):
        return self.imp.node_comment(stmt.lineno, stmt.end_lineno) or name

    def tensor_var(self, node):
        """The node id of a tensor variable, or the getitem node of `x[...]`; None for a
        receiver that is not one."""
        if isinstance(node, ast.Name) and node.id in self.imp.env:
            return self.imp.ref_name(node.id)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            return self.getitem(node, None)
        return None

    def getitem(self, node, meta):
        """`x[index]` as a getitem node (a view where the index is basic)."""
        if not isinstance(node.value, ast.Name):
            raise self.unsupported("index a tensor variable (x[0:2])")
        src = self.imp.ref_name(node.value.id)
        text = index_text(node.slice, self.unsupported)
        return self.imp.add_node("getitem", {"index": text}, [("input", src)], meta)

    def is_write_call(self, call):
        f = call.func
        return isinstance(f, ast.Attribute) and f.attr in METHODS

    def write_call(self, call, meta):
        """`x.add_(1.0)` and friends: the in-place node (`x` may be `x[...]`)."""
        f = call.func
        op = f.attr
        recv = self.tensor_var(f.value)
        if recv is None:
            raise self.unsupported(f"{op}() is read on a tensor variable (x.{op}(...))")
        kw = {k.arg: k.value for k in call.keywords}
        if None in kw:
            raise self.unsupported("**kwargs are not supported")
        args = list(call.args)
        params, inputs = {}, [("input", recv)]
        if op in ("add_", "sub_", "mul_", "div_"):
            other = args[0] if args else kw.pop("other", None)
            if other is None or len(args) > 1 or kw:
                raise self.unsupported(f"{op} takes one argument here: a tensor or a number")
            kind, v = self.imp.operand(other)
            if kind == "number":
                params["scalar"] = float(v)
            else:
                inputs.append(("other", v))
        elif op == "clamp_":
            names = ("min", "max")
            if len(args) > 2 or set(kw) - set(names):
                raise self.unsupported("clamp_ takes min and max")
            bound = dict(zip(names, args)) | kw
            params = {n: self.number(bound.get(n)) for n in names}
        elif op == "fill_":
            value = args[0] if args else kw.pop("value", None)
            if value is None or len(args) > 1 or kw:
                raise self.unsupported("fill_ takes one number")
            params["value"] = self.number(value)
        elif args or kw:
            raise self.unsupported(f"{op}() takes no arguments")
        return self.imp.add_node(op, params, inputs, meta)

    def number(self, node):
        if node is None:
            return None
        v = self.literal(node)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise self.unsupported("expected a number")
        return None if v is None else float(v)

    def bind(self, receiver, nid):
        """After a write to variable `receiver` (ast), the variable names the written node."""
        if isinstance(receiver, ast.Name):
            self.imp.env[receiver.id] = nid

    # -- statements ---------------------------------------------------------------------------
    def expr_statement(self, stmt):
        call = stmt.value
        nid = self.write_call(call, self.meta(stmt, call.func.attr))
        self.bind(call.func.value, nid)
        return None

    def aug_assign(self, stmt):
        op = _AUG.get(type(stmt.op))
        if op is None or not isinstance(stmt.target, ast.Name):
            raise self.unsupported("in-place updates are read as x += / -= / *= / /= on a tensor")
        name = stmt.target.id
        if name not in self.imp.env:
            raise self.unsupported(f"'{name}' is not defined by an earlier line")
        call = ast.Call(
            func=ast.Attribute(value=stmt.target, attr=op, ctx=ast.Load()),
            args=[stmt.value],
            keywords=[],
        )
        nid = self.write_call(call, self.meta(stmt, op))
        self.bind(stmt.target, nid)
        return None

    def setitem(self, stmt):
        target = _merged(stmt.targets[0])  # x[i][0][j] = 1: x[i, 0, j] = 1
        if not isinstance(target.value, ast.Name):
            raise self.unsupported("write into a tensor variable's elements (x[0] = 1.0)")
        src = self.imp.ref_name(target.value.id)
        params = {"index": index_text(target.slice, self.unsupported)}
        inputs = [("input", src)]
        kind, v = self.imp.operand(stmt.value)
        if kind == "number":
            params["scalar"] = float(v)
        else:
            inputs.append(("value", v))
        nid = self.imp.add_node("setitem", params, inputs, self.meta(stmt, "setitem"))
        self.bind(target.value, nid)
        return None


def _merged(target):
    """`x[a][b] = v` as `x[a, b] = v` where each index before the last is one whole number
    (then both pick the same elements); the target as it is otherwise."""
    parts, node = [], target
    while isinstance(node, ast.Subscript):
        parts.insert(0, node.slice)
        node = node.value
    ints = parts[:-1]
    if len(parts) < 2 or not all(_is_int(p) for p in ints):
        return target
    index = ast.Tuple(elts=[*ints, *_parts(parts[-1])], ctx=ast.Load())
    return ast.copy_location(ast.Subscript(value=node, slice=index, ctx=target.ctx), target)


def _is_int(node):
    try:
        return _int(node) is not None
    except ValueError:
        return False


def _parts(node):
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]
