"""The ops: each module pairs forwards with their backward nodes, one concept per module.

Every op module is a family: it declares what it exports, and engine/__init__.py,
engine/_methods.py and engine/nn/functional.py read these declarations (no other list of op
names exists). A family module defines:

- ``__all__``: functions exported as ``engine.<name>`` (PyTorch's ``torch.<name>``);
- ``METHODS``: ``{name: fn}`` bound onto Tensor as methods (``fn(self, ...)``), operators
  (``__add__``, ``__radd__``, ...) included;
- ``PROPERTIES``: ``{name: fn}`` bound onto Tensor as read-only properties;
- ``INPLACE``: ``{name: fn}`` out-of-place ops whose ``name_`` method writes the result into the
  tensor (checked and versioned as every in-place op is);
- ``INPLACE_OPERATORS``: ``{"__iadd__": "add"}``: an in-place operator that is the ``name_``
  method INPLACE made;
- ``FUNCTIONAL``: ``{name: fn}`` exported in ``engine.nn.functional``.

All but ``__all__`` may be left out. ``FAMILIES`` lists them all; a name is declared by one
family only (tests/engine/test_op_families.py checks both). The private modules (``_common``,
``_binary``, ``_unary``, ``_special``, ...) are the machinery the families share.
"""

import importlib

FAMILIES = (
    # pointwise math
    "arithmetic",
    "division",
    "powers",
    "exp_log",
    "trig",
    "erf",
    "rounding",
    "compare",
    "bitwise",
    "select",
    "activations",
    # reductions and scans
    "reduce",
    "scans",
    "sorting",
    "softmax",
    # shapes, views, copies in another order, indexing, writes
    "shape",
    "view_ops",
    "reorder",
    "gather",
    "scatter",
    "writes",
    # linear algebra, layers, losses
    "linalg",
    "contract",
    "conv",
    "pool",
    "normalization",
    "attention",
    "regression_losses",
    "classification_losses",
    "similarity_losses",
)


def family_modules():
    """The family modules, imported (in FAMILIES order)."""
    return [importlib.import_module(f"{__name__}.{name}") for name in FAMILIES]
