"""Tuple assignment: several names bound by one line.

    a, b = b, a                      every value is read before any name is bound (as Python
    h, c = torch.tanh(x), x * 2      evaluates the right side first): through temporaries
                                     `<name>.new` where a value reads a name the line binds
    q, k, v = t.split(n, dim=2)      a split by a size into as many parts as names: each part
                                     is t sliced along dim (the last one to the end)
    q, k, v = t.chunk(3, dim=-1)     chunks (their size worked out from t's shape), t.unbind(0)
    a, b = t                         and t itself: t[..., i] along dim (t[i] for t itself)
    mu, logvar = self.encode(x)      a method returning a tuple (functions.py inlines it into
                                     `mu, logvar = (<value>, <value>)`)
    y, _ = attn(q, k, v)             a layer whose module returns a tuple with its node first
                                     (attention, LSTM): `y = attn(q, k, v)[0]`; a name for the
                                     rest (the weights, the state) is refused, the graph has none

Tuples of constants (`B, T, C = 2, 3, 4`, and `x.size()` once shapes.py has written it as its
numbers) are constants.py's; a module's several outputs (`y, z = net(x)`) are the importer's."""

import ast

from .layer_forms import returns_tuple
from .problems import Unsupported
from .syntax import kw


class TupleLines:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def assign(self, target, stmt):
        """Read `<names> = <value>` as one assignment per name; the last name bound."""
        names = target.elts
        if any(isinstance(n, ast.Starred) for n in names):
            raise Unsupported("a starred name in an unpacking is not read: name each value")
        value, lines = stmt.value, []
        layer = returns_tuple(value, self.imp.nn.declared)
        if layer is not None:
            return self._first_of(layer, names, value, stmt)
        if _splits(value) and not isinstance(value.func.value, ast.Name):
            # (the tensor split is computed once, then sliced)
            temp = f"{_first_name(target)}.{value.func.attr}"
            lines.append(_at(ast.Assign(targets=[_store(temp)], value=value.func.value), stmt))
            value = ast.Call(
                func=ast.Attribute(value=_load(temp), attr=value.func.attr, ctx=ast.Load()),
                args=value.args,
                keywords=value.keywords,
            )
            self.imp.statements(lines)
            lines = []
        values = self._values(value, len(names))
        if len(values) != len(names):
            raise Unsupported(f"{len(names)} names are bound to {len(values)} values")
        bound = {n.id for t in names for n in ast.walk(t) if isinstance(n, ast.Name)}
        reads = {n.id for v in values for n in ast.walk(v) if isinstance(n, ast.Name)}
        if bound & reads and len(values) > 1:  # a, b = b, a: all values first
            temps = []
            for t, v in zip(names, values):
                temp = ast.Name(id=f"{_first_name(t)}.new", ctx=ast.Store())
                lines.append(_at(ast.Assign(targets=[temp], value=v), stmt))
                temps.append(ast.Name(id=temp.id, ctx=ast.Load()))
            values = temps
        lines += [_at(ast.Assign(targets=[t], value=v), stmt) for t, v in zip(names, values)]
        return self.imp.statements(lines)

    def _first_of(self, layer, names, call, stmt):
        """`y, _ = layer(x)`: the layer's node is the first of the tuple its module returns."""
        if not all(isinstance(n, ast.Name) and n.id == "_" for n in names[1:]):
            raise Unsupported(
                f"{layer}(...) returns its output first and then what the graph does not hold "
                f"(attention weights, a recurrent state): write y = {layer}(...)[0], or y, _ = ..."
            )
        first = ast.Subscript(value=call, slice=ast.Constant(value=0), ctx=ast.Load())
        return self.imp.statements([_at(ast.Assign(targets=[names[0]], value=first), stmt)])

    def _values(self, value, n):
        """The expressions a value of n parts stands for."""
        if isinstance(value, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in value.elts):
                raise Unsupported("a starred value in an unpacking is not read")
            return list(value.elts)
        if _splits(value) and value.func.attr == "unbind":
            return self._unbind(value.func.value, value, n)
        if _splits(value):
            return self._split(value, n)
        if isinstance(value, ast.Name) and value.id in self.imp.env:
            return self._unbind(value, None, n)  # a, b = t: t's rows
        raise Unsupported(
            "unpack a tuple of values (a, b = x, y), a split (q, k, v = t.split(n, dim=2)) "
            "or a module's outputs (y, z = net(x))"
        )

    def _dim(self, tensor, dim):
        """A dim given as a constant, counted from the front (rank read where negative)."""
        dim_v = 0 if dim is None else self.imp.constants.value(dim)
        if type(dim_v) is not int or dim_v < 0:
            rank = self.imp.shapes.rank(tensor)
            if type(dim_v) is not int or rank is None:
                raise Unsupported("split along a dim the importer knows: dim=<0, 1, 2 ...>")
            dim_v += rank
        return dim_v

    def _unbind(self, tensor, call, n):
        """t.unbind(d) (and `a, b = t`, d 0) into n parts: t[..., i] along dim d."""
        args = list(call.args) if call is not None else []
        dim = self._dim(tensor, args[0] if args else (kw(call, "dim") if call else None))
        if isinstance(tensor, ast.Name) and tensor.id in self.imp.env:
            shape = self.imp.shapes.shape(tensor.id)
            if dim < len(shape) and shape[dim] != n:
                raise Unsupported(f"{n} names are bound to {shape[dim]} values")
        parts = []
        for i in range(n):
            index = [ast.Slice() for _ in range(dim)] + [ast.Constant(i)]
            sl = ast.Tuple(elts=index, ctx=ast.Load()) if dim else index[0]
            parts.append(ast.Subscript(value=tensor, slice=sl, ctx=ast.Load()))
        return parts

    def _split(self, call, n):
        """t.split(size, dim=d) into n parts: t[..., i*size:(i+1)*size] along dim d;
        t.chunk(n, dim=d) likewise, its size ceil(t.size(d) / n)."""
        size = call.args[0] if call.args else kw(call, "split_size") or kw(call, "chunks")
        dim = call.args[1] if len(call.args) > 1 else kw(call, "dim")
        size_v = self.imp.constants.value(size) if size is not None else None
        if type(size_v) is not int or size_v <= 0:
            raise Unsupported("split by a whole number size: t.split(n, dim=d)")
        dim_v = self._dim(call.func.value, dim)
        if call.func.attr == "chunk":
            tensor = call.func.value
            if not isinstance(tensor, ast.Name):
                raise Unsupported("chunk a tensor variable: t.chunk(n, dim=d)")
            total = self.imp.shapes.shape(tensor.id)[dim_v]
            size_v = -(-total // size_v)
            if -(-total // size_v) != n:
                raise Unsupported(f"{n} names are bound to {-(-total // size_v)} chunks")
        parts = []
        for i in range(n):
            upper = None if i == n - 1 else ast.Constant((i + 1) * size_v)
            index = [ast.Slice() for _ in range(dim_v)]
            index.append(ast.Slice(lower=ast.Constant(i * size_v), upper=upper))
            sl = ast.Tuple(elts=index, ctx=ast.Load()) if dim_v else index[0]
            parts.append(ast.Subscript(value=call.func.value, slice=sl, ctx=ast.Load()))
        return parts


def _splits(value):
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("split", "chunk", "unbind")
    )


def _store(name):
    return ast.Name(id=name, ctx=ast.Store())


def _load(name):
    return ast.Name(id=name, ctx=ast.Load())


def _first_name(target):
    for n in ast.walk(target):
        if isinstance(n, ast.Name):
            return n.id
    return "value"


def _at(node, where):
    ast.copy_location(node, where)
    for n in ast.walk(node):
        if isinstance(n, (ast.expr, ast.stmt)) and not hasattr(n, "lineno"):
            ast.copy_location(n, where)
    return node
