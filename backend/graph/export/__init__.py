"""Code out: a graph document as the Python script a person would write, in engine Python
(`import engine as eg`) or PyTorch (docs/code-export.md).

`script.py` is the entry point, `to_python`: the docstring, the imports, one line per node, and
the self-check that reads the script back and keeps in node comments what the code cannot say.
It hands a document with modules to `classes.py` (one `nn.Module` class per definition), a
flat network with a loss to `model.py` (one model class), a document the classes cannot say to
`flat.py` (its flat graph with plain ids), its training settings to `training_loop.py`, each
layer's declaration to `layers.py`, the values no seed gives to `sidecar.py` (a `.safetensors`
file beside the script, where they are many: `export_python` returns both), the finished text
to `style.py` (ruff's layout), and then to `layout.py`, which moves the node comments into one
layout block at its end.

May import the graph layer's documents, registry, validation and executor; the importer only
inside the self-check (it reads back what was written)."""

from .script import FLAVORS, Exported, export_python, stores_weights, to_python

__all__ = ["FLAVORS", "Exported", "export_python", "stores_weights", "to_python"]
