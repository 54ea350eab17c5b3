"""Datasets read from code: `X, y = circle(n=200, noise=0.1, seed=0)` (a generator of
backend/graph/ops/datasets.py, or from_csv) names a dataset's arrays; eg.tensor(X) is then the
`dataset` node and eg.tensor(y[:, None]) or eg.tensor(y, dtype=eg.int64) its `labels` node."""

import ast

from ..ops.datasets import GENERATORS, IMAGES
from .problems import Unsupported
from .syntax import is_new_axis, literal

# a dataset's functions (datasets.py, copied into exported scripts) and their arguments
DATA = {
    **{name: ("n", "noise", "seed") for name in GENERATORS},
    **{name: ("n", "seed") for name in IMAGES},  # scikit-learn's images: no noise
    "from_csv": ("text", "features", "target"),
}


class DatasetReader:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)
        self.arrays = {}  # variable -> ("features" | "labels", a dataset's params and node)

    def read_arrays(self, target, value):
        """`X, y = circle(n=200, noise=0.1, seed=0)` (or `from_csv(text, features=...,
        target=...)`): the arrays a dataset node and its labels are made from; False for any
        other assignment."""
        if not (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in DATA
        ):
            return False
        fn = value.func.id
        if len(target.elts) != 2 or not all(isinstance(e, ast.Name) for e in target.elts):
            raise Unsupported(f"{fn}() gives two arrays: write features, labels = {fn}(...)")
        params = {"kind": "csv" if fn == "from_csv" else fn}
        bound = _bound(fn, value)
        params.update({"csv" if k == "text" else k: literal(v) for k, v in bound.items()})
        made = {"params": params, "node": None}  # the node, once eg.tensor(X) makes it
        for name, part in zip(target.elts, ("features", "labels")):
            self.arrays[name.id] = (part, made)
            self.imp.env.pop(name.id, None)
        return True

    def tensor(self, arg, name, kwargs, meta):
        """eg.tensor(X) of a dataset's features: the dataset node. Of its labels:
        eg.tensor(y[:, None]) (a float column) or eg.tensor(y, dtype=eg.int64) (classes), a
        labels node."""
        part, made = self.arrays[name]
        dtype = self.imp.modules.dtype_in(kwargs) or "float32"
        kwargs.pop("device", None)
        if kwargs:
            raise Unsupported(f"tensor has no argument '{next(iter(kwargs))}' here")
        if part == "features":
            if isinstance(arg, ast.Subscript) or dtype != "float32":
                raise Unsupported(f"write eg.tensor({name}) for a dataset's features")
            made["node"] = self.imp.add_node("dataset", dict(made["params"]), [], meta)
            return made["node"]
        column = isinstance(arg, ast.Subscript)
        if (column and (dtype != "float32" or not is_new_axis(arg.slice))) or (
            not column and dtype != "int64"
        ):
            raise Unsupported(
                f"write eg.tensor({name}[:, None]) for labels in a column, or "
                f"eg.tensor({name}, dtype=eg.int64) for class indices"
            )
        if made["node"] is None:
            raise Unsupported("make the dataset's features tensor before its labels")
        self.imp.graph.nodes[made["node"]]["params"]["labels"] = "column" if column else "classes"
        return self.imp.add_node("labels", {}, [("dataset", made["node"])], meta)


def _bound(fn, call):
    """{argument name: value node} of a dataset function's call."""
    names = DATA[fn]
    if len(call.args) > len(names) or any(isinstance(a, ast.Starred) for a in call.args):
        raise Unsupported(f"{fn} takes at most {len(names)} positional arguments")
    bound = dict(zip(names, call.args))
    for k in call.keywords:
        if k.arg not in names or k.arg in bound:
            raise Unsupported(f"{fn} has no argument '{k.arg}' here")
        bound[k.arg] = k.value
    needed = names[:1] if fn == "from_csv" else names
    if not set(needed) <= set(bound):
        raise Unsupported(f"{fn} needs {', '.join(needed)}")
    return bound
