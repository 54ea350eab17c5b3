"""Indexing by tensors read from code, as the `index` op (ops/inplace.py), never run:

    emb = C[Xb]                        Xb an integer tensor: rows of C looked up (an embedding)
    p = logp[range(n), target]         one element per row: range(n) and [0, 2] are int64
    y = x[:, idx]   y = x[x > 0]       tensor nodes of their numbers; any tensor expression
                                       (a mask too) is its node

Each part of the index that is a tensor (or a Python sequence of integers) is an edge into
`indices`, written `#` in the op's index param; the other parts (ints, slices, ..., None) are
written as they are. An index without a tensor is getitem's (inplace_lines.py)."""

import ast

from .constants import NOT
from .inplace_lines import index_text
from .problems import Unsupported
from .random_draws import MAX_VALUES

_TENSOR = "#"


def parts_of(node):
    """The parts of a subscript's index (`x[a, b]`: a and b)."""
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def is_basic(part):
    """Whether a part of an index is one getitem takes: an int, a slice, ... or None."""
    if isinstance(part, ast.Slice):
        return True
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
        part = part.operand
    return isinstance(part, ast.Constant) and (
        part.value is None or part.value is Ellipsis or type(part.value) is int
    )


class TensorIndex:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def has_tensor(self, node):
        """Whether the subscript `node` indexes by a tensor (then it is `index`'s)."""
        return not all(is_basic(p) for p in parts_of(node.slice))

    def index(self, node, src, meta):
        """`x[...]` with tensor parts: the index node of source `src`."""
        parts = parts_of(node.slice)
        texts, inputs = [], [("input", src)]
        for part in parts:
            if is_basic(part):
                texts.append(index_text(part, Unsupported))
                continue
            texts.append(_TENSOR)
            inputs.append(("indices", self.tensor_part(part)))
        text = ", ".join(texts) + (
            "," if isinstance(node.slice, ast.Tuple) and len(parts) == 1 else ""
        )
        if text == ", ".join([_TENSOR] * (len(inputs) - 1)):
            text = ""  # the tensors in order: the op's default
        return self.imp.add_node("index", {"index": text}, inputs, meta)

    def tensor_part(self, part):
        """A part of an index that is a tensor: a sequence of integers (range(n), [0, 2]) as
        an int64 tensor node, any other expression as its node."""
        v = self.imp.constants.value(part)
        if isinstance(v, (range, list, tuple)):
            values = list(v)
            if not values or not all(type(i) is int or type(i) is bool for i in values):
                raise Unsupported("a sequence in an index holds integers (or bools) only")
            if len(values) > MAX_VALUES:
                raise Unsupported(f"an index of more than {MAX_VALUES:,} integers")
            dtype = "bool" if all(type(i) is bool for i in values) else "int64"
            return self.imp.add_node("tensor", {"value": values, "dtype": dtype}, [], None)
        if v is not NOT:
            raise Unsupported(
                "an index here takes integers, slices, ..., None, tensors and sequences of "
                "integers (x[0], x[0:2], x[:, 1], C[ids], x[range(n), target])"
            )
        return self.imp.exprs.operand_node(part)
