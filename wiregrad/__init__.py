"""Wiregrad from Python: graphs as documents, run on Wiregrad's engine, in and out of PyTorch.

    import wiregrad as wg
    doc = wg.trace(model, x)                  # a live nn.Module (or any callable), traced
    doc = wg.from_code(open("net.py").read())  # PyTorch code, read without running it
    out = wg.run(doc, backward=True)           # values and gradients by name
    print(wg.to_code(doc, flavor="torch"))     # the script a colleague would write
    w = wg.show(doc)                           # the editor, in the notebook

A document is the JSON a graph file holds (docs/graph-format.md), as a dict. These are the
functions the `wiregrad` command uses; `trace` needs PyTorch (`pip install wiregrad[torch]`),
`show` needs anywidget (`pip install wiregrad[notebook]`).
"""

from .code import from_code, to_code, trace
from .documents import Document, DocumentError, as_document, load, save
from .running import RunOutput, run

__all__ = [
    "Document",
    "DocumentError",
    "RunOutput",
    "as_document",
    "from_code",
    "load",
    "run",
    "save",
    "show",
    "to_code",
    "trace",
]


def show(obj, *example_inputs, **options):
    """The editor in a notebook cell: `obj` is a document, a saved graph file's path, PyTorch
    code (read, never run), or a module or callable (traced on `example_inputs`). Returns the
    widget: `w.document`, `w.run("backward")`, `w.train(...)`, `w.to_code()`, `w.save(path)`,
    `w.export_html(path)`."""
    from .widget import Editor

    return Editor.of(obj, *example_inputs, **options)
