"""Python lists of tensors, worked out while reading:

    outs = []                                  an empty list (a constant until a tensor is put in)
    for i in range(3):
        outs.append(x * i)                     each item's node, bound to a name of its own
    y = torch.cat(outs, dim=-1)                the list read as [outs[0], outs[1], outs[2]]
    params = [W1, b1, W2]                      a list written out
    state = (torch.zeros(2, 4),)               a tuple of tensors, read as a list of them
    batches = [(X, y)]                         a list of lists (or tuples) of tensors
    h = outs[-1]; n = len(outs)                an item, its length
    for t in outs: ...                         a loop over the items (loops.py)
    torch.cat([h(x) for h in self.heads], -1)  a comprehension over a module list, a list of
                                               tensors or a constant range: its items written out

Python builds the list when it runs; define-by-run records the ops on its items, so each item
is the node it was when appended (an item's name is `outs[0]`, which no script variable can
take). A list changed in ways not read here (insert, pop, sort, `outs[0] = t`) is a problem at
its line; at most _MAX_ITEMS items."""

import ast
import copy

from .constants import NOT, literal_node
from .problems import Unsupported

_MAX_ITEMS = 10_000
_BODIES = ("body", "orelse", "finalbody", "handlers")
_CHANGES = ("insert", "pop", "remove", "sort", "reverse", "clear")


def item(name, k):
    return f"{name}[{k}]"


class TensorLists:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.lists = {}  # name -> [the variable of each item]

    # -- lines that build a list ----------------------------------------------------------------
    def read(self, stmt):
        """Whether `stmt` is a line that builds or changes a list of tensors (then read)."""
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            return self._method(stmt, stmt.value)
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                for n in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                    if isinstance(n, ast.Name):
                        self.lists.pop(n.id, None)  # a name bound again holds its new value
            t = stmt.targets[0] if len(stmt.targets) == 1 else None
            if isinstance(t, ast.Subscript) and self._list_name(t.value):
                raise Unsupported("an item of a list set in place is not read: append items")
            if isinstance(t, ast.Name):
                value = self.substituted_expr(stmt.value)
                if self._is_tensor_list(value):
                    self._assign(t.id, value, stmt)
                    return True
        if isinstance(stmt, ast.AugAssign) and self._list_name(stmt.target):
            if not isinstance(stmt.op, ast.Add):
                raise Unsupported("a list is grown with += [items] or append() here")
            self._extend(stmt.target.id, stmt.value, stmt)
            return True
        return False

    def _method(self, stmt, call):
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return False
        name, attr = func.value.id, func.attr
        if name not in self.lists and not self._empty_constant(name, attr):
            return False
        if attr in _CHANGES:
            raise Unsupported(f"{attr}() of a list of tensors is not read: build it with append()")
        if attr not in ("append", "extend"):
            return False
        if len(call.args) != 1 or call.keywords:
            raise Unsupported(f"{attr}() takes one argument")
        self.lists.setdefault(name, [])
        self.imp.constants.forget([name])
        if attr == "append":
            self._append(name, call.args[0], stmt)
        else:
            self._extend(name, call.args[0], stmt)
        return True

    def _empty_constant(self, name, attr):
        """`outs = []` read as a constant: the list its first append() makes of tensors."""
        v = self.imp.constants.lookup(name)
        return attr in ("append", "extend") and isinstance(v, list) and not v

    def _assign(self, name, value, stmt):
        self.imp.constants.forget([name])
        self.imp.env.pop(name, None)
        self.lists[name] = []
        self._extend(name, value, stmt)

    def _extend(self, name, value, stmt):
        value = self.substituted_expr(value)
        if not isinstance(value, (ast.List, ast.Tuple)):
            raise Unsupported("extend a list with a list of tensors written out, or append()")
        for e in value.elts:
            self._append(name, e, stmt)

    def _append(self, name, value, stmt):
        items = self.lists[name]
        if len(items) >= _MAX_ITEMS:
            raise Unsupported(f"a list of more than {_MAX_ITEMS:,} tensors is not read")
        var = item(name, len(items))
        imp = self.imp
        # (the constants it reads written in, as in any line: torch.zeros((n, h)))
        value = imp.constants.substituted(self.substituted_expr(value))
        if self._is_tensor_list(value):  # [(inputs, labels)]: an item that is a list itself
            self.lists[var] = []
            self._extend(var, value, stmt)
            items.append(var)
            return
        if isinstance(value, ast.Name) and value.id in imp.env:
            imp.env[var] = imp.ref_name(value.id)  # the same node, another name
        else:
            imp.current_var = f"{name}_{len(items)}"
            try:
                imp.env[var] = imp.exprs.expr(value, imp.current_var)
            finally:
                imp.current_var = None
        items.append(var)

    def _is_tensor_list(self, value):
        """A list or tuple written out (a list of tensors or a comprehension over one, once
        read as their items) that is no constant: it holds a tensor. (A tuple is read as the
        list of its items: nothing here changes a list but append / extend / +=, which a
        tuple has not, so Python would stop there.)"""
        return isinstance(value, (ast.List, ast.Tuple)) and self.imp.constants.value(value) is NOT

    def _list_name(self, node):
        return isinstance(node, ast.Name) and node.id in self.lists

    # -- where a list is read -------------------------------------------------------------------
    def substituted(self, stmt):
        """A copy of `stmt` whose own expressions (not the lines of its bodies, read later)
        read each list as its items written out."""
        if not self.lists and not _has_comprehension(stmt):
            return stmt
        new = type(stmt)(**{f: getattr(stmt, f) for f in stmt._fields})
        for f in stmt._fields:
            v = getattr(stmt, f)
            if f in _BODIES or v is None:
                continue
            if isinstance(v, list):
                setattr(new, f, [self._visit(x) for x in v])
            elif isinstance(v, ast.AST):
                setattr(new, f, self._visit(v))
        return ast.copy_location(new, stmt)

    def substituted_expr(self, node):
        return self._visit(node)

    def _visit(self, node):
        if not isinstance(node, ast.AST):
            return node
        return _Items(self).visit(copy.deepcopy(node))


def _has_comprehension(stmt):
    return any(isinstance(n, (ast.ListComp, ast.GeneratorExp)) for n in ast.walk(stmt))


class _Items(ast.NodeTransformer):
    """Lists read as their items; comprehensions over known sequences written out."""

    def __init__(self, owner):
        self.owner = owner
        self.lists = owner.lists

    def visit_Name(self, node):
        if node.id in self.lists and isinstance(node.ctx, ast.Load):
            return self._written_out(node.id, node)
        return node

    def _written_out(self, name, where):
        elts = [self._item(v, where) for v in self.lists[name]]
        return ast.copy_location(ast.List(elts=elts, ctx=ast.Load()), where)

    def _item(self, var, where):
        """An item's variable, or the items of one that is a list itself."""
        if var in self.lists:
            return self._written_out(var, where)
        return ast.copy_location(ast.Name(id=var, ctx=ast.Load()), where)

    def visit_Subscript(self, node):
        base = node.value
        if isinstance(base, ast.Subscript) and isinstance(node.ctx, ast.Load):
            inner = self.visit(base)  # batches[0][1]: an item of an item that is a list
            index = self.owner.imp.constants.value(self.visit(node.slice))
            if isinstance(inner, ast.List) and type(index) is int:
                if not -len(inner.elts) <= index < len(inner.elts):
                    raise Unsupported(
                        f"index {index} is out of range: the list holds {len(inner.elts)}"
                    )
                return inner.elts[index]
            node.value = inner
            return self.generic_visit(node)
        if isinstance(base, ast.Name) and base.id in self.lists and isinstance(node.ctx, ast.Load):
            items = self.lists[base.id]
            index = self.owner.imp.constants.value(self.visit(node.slice))
            if isinstance(node.slice, ast.Slice):
                bounds = [
                    None if b is None else self.owner.imp.constants.value(self.visit(b))
                    for b in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
                if any(b is NOT or not (b is None or type(b) is int) for b in bounds):
                    raise Unsupported("slice a list of tensors with constant whole numbers")
                chosen = items[slice(*bounds)]
                elts = [self._item(v, node) for v in chosen]
                return ast.copy_location(ast.List(elts=elts, ctx=ast.Load()), node)
            if type(index) is not int:
                raise Unsupported(f"index the list {base.id} with a constant whole number")
            if not -len(items) <= index < len(items):
                raise Unsupported(f"index {index} is out of range: {base.id} holds {len(items)}")
            return self._item(items[index], node)
        return self.generic_visit(node)

    def visit_Call(self, node):
        # len(outs), len(batches[0]): its number of items
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id in self.lists:
                return literal_node(len(self.lists[arg.id]), node)
            if isinstance(arg, ast.Subscript) and _reads_list(arg, self.lists):
                items = self.visit(arg)
                if isinstance(items, ast.List):
                    return literal_node(len(items.elts), node)
                node.args = [items]
                return node
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        return self._comprehension(node)

    def visit_GeneratorExp(self, node):
        return self._comprehension(node)

    def _comprehension(self, node):
        """[f(h) for h in <items>]: the list of f(item) for each item, in order."""
        if len(node.generators) != 1:
            return self.generic_visit(node)
        gen = node.generators[0]
        if gen.is_async or not isinstance(gen.target, ast.Name):
            return self.generic_visit(node)
        steps = self._steps(gen.iter)
        if steps is None:
            return self.generic_visit(node)
        elts = []
        for step in steps:
            keep = True
            for cond in gen.ifs:
                test = self.owner.imp.constants.value(_put(cond, gen.target.id, step))
                if test is NOT:
                    raise Unsupported("the `if` of a list comprehension must be a constant test")
                keep = keep and bool(test)
            if keep:
                elts.append(self.visit(_put(node.elt, gen.target.id, step)))
        return ast.copy_location(ast.List(elts=elts, ctx=ast.Load()), node)

    def _steps(self, it):
        """The ast node each step of a comprehension reads its variable as; None where the
        sequence is not one known here (then the comprehension is left as written)."""
        imp = self.owner.imp
        modules = imp.lists.steps(it)  # a module list: its elements' names
        if modules is not None:
            return [ast.Name(id=m, ctx=ast.Load()) for m in modules]
        it = self.visit(it)
        if isinstance(it, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Name) and e.id in imp.env for e in it.elts
        ):
            return list(it.elts)
        v = imp.constants.value(it)
        if isinstance(v, (list, tuple, range)) and len(v) <= _MAX_ITEMS:
            return [literal_node(x, it) for x in v]
        return None


def _reads_list(node, lists):
    """Whether an index expression is rooted at a list of tensors (batches[0][1])."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id in lists


def _put(node, name, value):
    """A copy of `node` with the variable `name` read as `value` (an ast node)."""

    class _Put(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == name and isinstance(n.ctx, ast.Load):
                return ast.copy_location(copy.deepcopy(value), n)
            return n

    return _Put().visit(copy.deepcopy(node))
