"""The ops: each module pairs forwards with their backward nodes (see engine/_methods.py for
how they become Tensor methods).

Op families added after the first five declare what they export instead of being listed by hand
in three places. A family module may define:

- ``__all__``: functions exported as ``engine.<name>`` (PyTorch's ``torch.<name>``);
- ``METHODS``: ``{name: fn}`` bound onto Tensor as methods (``fn(self, ...)``);
- ``PROPERTIES``: ``{name: fn}`` bound onto Tensor as read-only properties;
- ``INPLACE``: ``{name: fn}`` out-of-place ops whose ``name_`` method writes the result into the
  tensor (checked and versioned as every in-place op is);
- ``FUNCTIONAL``: ``{name: fn}`` exported in ``engine.nn.functional``.

``FAMILIES`` lists them; engine/__init__.py, engine/_methods.py and engine/nn/functional.py read
it, so a new family is one module and one line here.
"""

FAMILIES = (
    "writes",
    "view_ops",
    "pointwise",
    "binary",
    "activations",
    "losses",
    "scans",
    "gather",
    "reorder",
    "conv",
    "pool",
    "normalization",
    "attention",
)


def family_modules():
    """The family modules, imported (in FAMILIES order)."""
    import importlib

    return [importlib.import_module(f"{__name__}.{name}") for name in FAMILIES]
