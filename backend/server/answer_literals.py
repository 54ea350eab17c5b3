"""A student's answer to a room's question, read as a number or a small tensor.

Students type what they would write in PyTorch, or copy what PyTorch prints: `-0.5`, `3`,
`[1, 2]`, `[[1., 2.], [3., 4.]]`, `torch.tensor([2., 2.])`, `tensor([0.2500, 0.2500])`,
`tensor(6., grad_fn=<MulBackward0>)`, `1/3`. The text is read by Python's parser into a syntax
tree and only that tree is walked: numbers, lists and tuples of them, signs, the four
arithmetic operators between numbers, and a `tensor(...)` / `torch.tensor(...)` wrapper whose
keyword arguments (dtype, requires_grad, grad_fn) are ignored. Nothing is evaluated as code:
a name, a call of anything else or an attribute is refused with where it is.
"""

import ast
import math
import operator
import re

import numpy as np

MAX_CHARS = 2_000
MAX_ELEMENTS = 1_000

# what PyTorch prints after a tensor's values, which is not Python: `grad_fn=<MulBackward0>`
_PRINTED_FN = re.compile(r"(grad_fn|device)\s*=\s*<[^<>]*>|device\s*=\s*'[^']*'")
_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_WRAPPERS = {"tensor", "torch.tensor", "np.array", "numpy.array", "array"}


class AnswerError(ValueError):
    """An answer that is not a number or a tensor literal; the text says where and why."""


def parse_answer(text):
    """The answer as a float64 array (0-d for a number), or AnswerError."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("the answer is empty: type a number such as -0.5, or a tensor: [1, 2]")
    if len(text) > MAX_CHARS:
        raise AnswerError(f"the answer is longer than {MAX_CHARS:,} characters")
    cleaned = _PRINTED_FN.sub("", text.strip())
    try:
        tree = ast.parse(cleaned, mode="eval")
    except SyntaxError as exc:
        where = f"at character {exc.offset}"
        raise AnswerError(f"not a number or a tensor: {exc.msg} {where}") from None
    value = _read(tree.body, top=True)
    try:
        array = np.array(value, dtype=np.float64)
    except ValueError:
        raise AnswerError("rows of different lengths: a tensor's rows are all as long") from None
    if array.size > MAX_ELEMENTS:
        raise AnswerError(f"the answer has {array.size:,} numbers; at most {MAX_ELEMENTS:,}")
    return array


def _read(node, top=False):
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise AnswerError(f"{node.value!r} at character {node.col_offset + 1} is not a number")
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _read(node.operand)
        if isinstance(inner, list):
            at = node.col_offset + 1
            raise AnswerError(f"a sign before a list at character {at}: put it on each number")
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _read(node.left), _read(node.right)
        if isinstance(left, list) or isinstance(right, list):
            at = node.col_offset + 1
            raise AnswerError(f"arithmetic on a list at character {at}: only between numbers")
        if isinstance(node.op, ast.Div) and right == 0:
            raise AnswerError(f"division by zero at character {node.col_offset + 1}")
        return _OPS[type(node.op)](left, right)
    if isinstance(node, ast.List | ast.Tuple):
        if len(node.elts) > MAX_ELEMENTS:
            raise AnswerError(f"a list of {len(node.elts):,} items; at most {MAX_ELEMENTS:,}")
        return [_read(e) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return math.inf if node.id == "inf" else math.nan
    if isinstance(node, ast.Call) and top and _dotted(node.func) in _WRAPPERS:
        if len(node.args) != 1:
            raise AnswerError(f"{_dotted(node.func)}(...) takes the values, once")
        return _read(node.args[0])
    where = getattr(node, "col_offset", 0) + 1
    if isinstance(node, ast.Call):
        what = f"a call of {_dotted(node.func) or 'something'}"
    elif isinstance(node, ast.Name | ast.Attribute):
        what = f"the name {_dotted(node)}"
    else:
        what = type(node).__name__.lower()
    raise AnswerError(
        "only numbers, lists of numbers and tensor(...) are read; "
        f"{what} at character {where} is not one"
    )


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base and f"{base}.{node.attr}"
    return None


def format_answer(array):
    """An array as a student would write it: `0.25`, `[1.0, -2.0]` (4 significant digits)."""

    def fmt(x):
        return [fmt(v) for v in x] if isinstance(x, list) else f"{x:.4g}"

    value = fmt(np.asarray(array).tolist())
    return value if isinstance(value, str) else str(value).replace("'", "")
