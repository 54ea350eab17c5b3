"""What an exported script prints, in its two forms.

By default, what a person prints after writing the model: the loss (`print("loss",
loss.item())`), the gradients a lesson is about (a flat graph's leaves and layers), the
accuracy where the model classifies (its prediction's argmax against int64 labels), and, with a
training loop, the curve (`step <k> loss <value>`) and the accuracy after the training.

With the trace option (`to_python(..., trace=True)`, `wiregrad export --trace`, the export
dialog's "every value and gradient"), one parseable line per value and gradient, which the tests
and the round trip compare with the editor's run:

    value <node-id> <json of tolist()>
    grad <node-id> <json>

printed by a `show` helper written into the script.
"""

SHOW_HELPER = '''
def show(kind, key, t):
    """Print one result line: kind, node id and the values as JSON (nothing for None); past
    10,000 elements, the shape and the stats the editor's tensor view gives instead."""
    if t is None:
        return
    if t.numel() <= 10_000:
        print(kind, key, json.dumps(t.tolist()))
        return
    a = t.detach().double()
    stats = {"shape": list(a.shape), "min": a.min(), "max": a.max(), "mean": a.mean()}
    stats.update(std=a.std(), norm=a.norm())
    print(kind, key, json.dumps({k: v if k == "shape" else v.item() for k, v in stats.items()}))
'''

TRACE_SAYS = 'prints each value and gradient ("value <node> <json>", "grad <node> <json>")'
TRACE_HEADING = '# -- results: "value <node> <json>" and "grad <node> <json>" lines'


def value_line(var, meta):
    """`print("loss", loss.item())` for one number (`meta`: the dry run's value, None when
    unknown), else `print("y", y)`."""
    if meta is not None and meta.numel() == 1:
        return f'print("{var}", {var}.item())'
    return f'print("{var}", {var})'


def grad_line(name, expr):
    """`print("w.grad", w.grad)`: `name` as it reads, `expr` the tensor whose .grad it is."""
    return f'print("{name}.grad", {expr}.grad)'


def classifies(pred, labels):
    """Whether a prediction scores classes for int64 labels (one row of scores per label), as
    the editor's accuracy asks (running/trainer.py): the dry run's values, None when unknown."""
    if pred is None or labels is None or pred.ndim != 2:
        return False
    return "int64" in str(labels.dtype) and tuple(labels.shape) == tuple(pred.shape[:1])


def accuracy_line(pred, labels):
    """The fraction of rows whose highest score is their label."""
    return f'print("accuracy", ({pred}.argmax(dim=1) == {labels}).float().mean().item())'
