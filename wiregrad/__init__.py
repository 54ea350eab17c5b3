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


def trace(fn, *example_inputs, name=None):
    """The graph document of `fn` (an `nn.Module`, or a callable taking tensors such as
    `lambda x, y: F.cross_entropy(model(x), y)`) run once in PyTorch on `example_inputs`.

    Every call becomes the registry op it is, each `nn.Module` class you wrote a module
    definition (instances of one class with one configuration share it), the module's live
    parameters and buffers the values, the inputs leaves and the output the target. Run in the
    engine (`run(doc, backward=True)`), it gives `fn`'s output and every parameter's gradient as
    PyTorch computes them. Python control flow goes the way this run went (the document's
    description lists each decision). Raises `backend.graph.tracing.CaptureError` naming the
    module path (`model.blocks.3.attn: ...`) of a call the graph cannot draw."""
    from backend.graph.tracing import trace as _trace

    return _trace(fn, *example_inputs, name=name)


def from_code(text):
    """The document a PyTorch (or engine) script describes, read without running it. Raises
    `backend.graph.importing.problems.ImportFailed` with the problem at each line it could not
    read."""
    from backend.graph.importing.importer import from_python

    return from_python(text).model_dump(mode="json", exclude_none=False)


def to_code(doc, flavor="torch", training=None):
    """The document as a script: `flavor="torch"` (PyTorch) or `"engine"` (Wiregrad's engine)."""
    from backend.graph.export import to_python

    return to_python(as_document(doc), flavor=flavor, training=training)


def show(obj, *example_inputs, **options):
    """The editor in a notebook cell: `obj` is a document, a saved graph file's path, PyTorch
    code (read, never run), or a module or callable (traced on `example_inputs`). Returns the
    widget: `w.document`, `w.run("backward")`, `w.train(...)`, `w.to_code()`, `w.save(path)`,
    `w.export_html(path)`."""
    from .widget import Editor

    return Editor.of(obj, *example_inputs, **options)
