"""Documents from code and code from documents: a live PyTorch module traced, a script read
without running it, a document written as a script. Each loads its part of the graph layer
when called, so `import wiregrad` needs neither PyTorch nor the importer's readers."""

from pathlib import Path

from .documents import as_document


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


def from_code(text, weights=None):
    """The document a PyTorch (or engine) script describes, read without running it.
    `weights`: the `.safetensors` file a script exported with its weights beside it loads (a
    path, the file's bytes, or {name: array}). Raises
    `backend.graph.importing.problems.ImportFailed` with the problem at each line it could not
    read (a script that loads weights not given: at the line that loads them)."""
    from backend.graph.importing.importer import from_python

    if isinstance(weights, (str, Path)):
        weights = Path(weights).read_bytes()
    return from_python(text, weights=weights).model_dump(mode="json", exclude_none=False)


def to_code(doc, flavor="torch", training=None, trace=False, path=None):
    """The document as a script: `flavor="torch"` (PyTorch) or `"engine"` (Wiregrad's engine).
    It prints what a person prints (the loss, the accuracy, a training's curve); with
    `trace=True`, every value and gradient, one `value <node> <json>` / `grad <node> <json>`
    line each. Without `path`, one text with every value in it. With `path` ("net.py") the
    script is written there and a trained graph's many values to "net.safetensors" beside it,
    which the script loads (docs/code-export.md); the script's text is returned."""
    from backend.graph.export import export_python

    out = export_python(
        as_document(doc), flavor=flavor, training=training, trace=trace, inline=path is None
    )
    if path is not None:
        out.write(path)
    return out.text
