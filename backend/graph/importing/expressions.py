"""Expressions read from code: a variable, `+ - * / ** @`, unary minus, a comparison,
`a if c else b`, a call (calls.py), `x[...]` (inplace_lines.py; by tensors: tensor_index.py);
numbers as operands (a constant arithmetic expression such as 1 / 3 is folded into one)."""

import ast
import math

from .. import registry
from .layer_forms import is_attention_output
from .problems import Unsupported
from .syntax import is_literal, is_number, literal, num_name, strip_bool
from .tensor_index import TensorIndex

# Python's operators by their symbols; the op each writes is the registry's (CallForm.operator)
_SYMBOLS = {
    **{ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@"},
    **{ast.Gt: ">", ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="},
}
_FOLDED = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y if y else None,
}


class ExpressionReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.index = TensorIndex(imp)  # C[ids], x[range(n), target]

    def expr(self, node, meta):
        """The node that computes `node`; `meta` names it (see ImportedGraph.add_node)."""
        imp = self.imp
        if isinstance(node, ast.Name):
            return imp.ref_name(node.id)
        if imp.weights_file.loaded and isinstance(node, (ast.Subscript, ast.Call)):
            found = imp.weights_file.source(node, meta)  # state_dict["w"] (weights_file.py)
            if found is not None:
                return found
        if isinstance(node, ast.BinOp):
            return self.binop(node, meta)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if is_literal(node):
                return imp.add_node("scalar", {"value": float(literal(node))}, [], meta)
            return imp.add_node("neg", {}, [("input", self.operand_node(node.operand))], meta)
        if isinstance(node, ast.Compare):
            return self.compare(node, meta)
        if isinstance(node, ast.IfExp):
            cond = self.operand_node(strip_bool(node.test))
            a, b = self.operand_node(node.body), self.operand_node(node.orelse)
            return imp.add_node("if", {}, [("condition", cond), ("then", a), ("else", b)], meta)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, meta)
        if isinstance(node, ast.Call) and imp.writes.is_write_call(node):
            nid = imp.writes.write_call(node, meta)  # y = x.add_(1): x is written too
            imp.writes.bind(node.func.value, nid)
            return nid
        if isinstance(node, ast.Call):
            return imp.calls.call(node, meta)
        if isinstance(node, ast.Subscript) and is_attention_output(node, imp.nn.declared):
            return imp.calls.call(node.value, meta)  # attn(x, x, x, need_weights=False)[0]
        if isinstance(node, ast.Subscript) and self.index.has_tensor(node):
            return self.index.index(node, self.operand_node(node.value), meta)
        if isinstance(node, ast.Subscript):
            return imp.writes.getitem(node, meta)
        if is_literal(node):
            raise Unsupported("a literal must be wrapped in eg.tensor(...)")
        raise Unsupported(f"{type(node).__name__} expressions are not supported")

    def attribute(self, node, meta):
        """`<call>.values` (max/min along a dim), or an attribute that is an op (`x.T`)."""
        if node.attr == "values" and isinstance(node.value, ast.Call):
            return self.imp.calls.call(node.value, meta, values=True)
        spec = registry.by_attribute(node.attr)
        if spec is None:
            raise Unsupported(f"the attribute .{node.attr} is not read (.T and .mT are)")
        return self.imp.calls.make_op(spec.name, node.attr, {"input": node.value}, meta, False)

    def compare(self, node, meta):
        if len(node.ops) != 1:
            raise Unsupported("chained comparisons are not supported")
        op = _operator_op(node.ops[0])
        if op is None:
            raise Unsupported(f"the comparison {type(node.ops[0]).__name__} is not supported")
        a = self.operand_node(node.left)
        b = self.operand_node(node.comparators[0])
        return self.imp.add_node(op, {}, [("input", a), ("other", b)], meta)

    def binop(self, node, meta):
        op = _operator_op(node.op)
        if op is None:
            raise Unsupported(f"the operator {type(node.op).__name__} is not supported")
        if registry.get(op).extra.get("scalar_for") != "other":  # a @ b: both are tensors
            a, b = self.operand_node(node.left), self.operand_node(node.right)
            return self.imp.add_node(op, {}, [("input", a), ("other", b)], meta)
        if self.fold(node) is not None:
            raise Unsupported("a constant must be wrapped in eg.tensor(...)")
        lk, lv = self.operand(node.left)
        rk, rv = self.operand(node.right)
        if lk == "number" and op in ("add", "mul"):
            (lk, lv), (rk, rv) = (rk, rv), (lk, lv)
        if lk == "number":
            lv = self.scalar(lv)
        if rk == "number":
            return self.imp.add_node(op, {"scalar": rv}, [("input", lv)], meta)
        return self.imp.add_node(op, {}, [("input", lv), ("other", rv)], meta)

    # -- operands -------------------------------------------------------------------------------
    def operand(self, node):
        """('node', id) or ('number', value)."""
        if isinstance(node, ast.Name):
            return "node", self.imp.ref_name(node.id)
        if is_literal(node):
            v = literal(node)
            if is_number(v):
                return "number", v
            raise Unsupported("expected a tensor or a number")
        folded = self.fold(node)
        if folded is not None:
            return "number", folded
        return "node", self.expr(node, None)

    def fold(self, node):
        """A constant arithmetic expression (1 / 3) as a number, else None."""
        if isinstance(node, ast.BinOp) and type(node.op) in _FOLDED:
            a, b = node.left, node.right
            if is_literal(a) and is_literal(b):
                x, y = literal(a), literal(b)
                if is_number(x) and is_number(y):
                    try:
                        # all four are worked out, as they always were: one that overflows
                        # (a huge int / 3) leaves the expression unfolded, whichever op it is
                        results = {op: f(x, y) for op, f in _FOLDED.items()}
                    except (OverflowError, TypeError):
                        return None
                    return results[type(node.op)]
        return None

    def operand_node(self, node):
        """A node id for `node`; a number becomes a scalar source."""
        kind, v = self.operand(node)
        if kind == "node":
            return v
        if not math.isfinite(float(v)):  # 1e999: JSON has no infinity to store it as
            raise OverflowError(v)
        return self.scalar(v)

    def scalar(self, v):
        """An unnamed scalar source holding the number v."""
        return self.imp.add_node("scalar", {"value": float(v), "name": num_name(v)}, [], None)


def _operator_op(node_op):
    """The name of the op an `ast` operator writes (registry.by_operator); None for none."""
    symbol = _SYMBOLS.get(type(node_op))
    spec = registry.by_operator(symbol) if symbol else None
    return spec.name if spec else None
