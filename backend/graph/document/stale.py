"""Trained values that no longer fit their node.

Training writes its values back into the document (training.py `written_back`): a layer node's
state (the params its op's LayerForm names: `linear`'s and `conv2d`'s `weight` and
`bias_value`, batch_norm's running statistics ...). Change the layer's size afterwards
(`out_features`, or the width of what feeds it) and
those values are of the old size: the engine's copy into the new layer then fails with a
broadcasting message, or, worse, broadcasts (a (1, 8) weight fills a (3, 8) layer with three
equal rows). Validation asks this module first, reports each such value as a problem with the
code `stale_values` (so the editor can offer to reset them), in the words PyTorch's
`load_state_dict` uses for the same mistake, and goes on with fresh values in their place, so
the shapes after the node are still checked.
"""

from dataclasses import dataclass

from .. import registry

STALE_VALUES = "stale_values"


@dataclass(frozen=True)
class Stale:
    param: str  # the stored param of the old size
    stored: tuple
    expected: tuple
    name: str  # the parameter's name in the model: "layer1.weight", "w"

    @property
    def message(self):
        return (
            f"size mismatch for {self.name}: copying a param with shape "
            f"{_size(self.stored)} from checkpoint, the shape in current model is "
            f"{_size(self.expected)}."
        )


def _size(shape):
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"


def shape_of(value):
    """The shape of a number or of nested lists of numbers; None when ragged."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    inner = [shape_of(v) for v in value]
    if any(s is None or s != inner[0] for s in inner):
        return None
    return (len(value), *inner[0])


def find(node_id, op, params, inputs):
    """The stored values of node `node_id` that do not fit the node as it is now. `params` are
    the node's params with the registry's defaults filled in; `inputs` its inputs' stand-ins."""
    found = []
    spec = registry.get(op)
    form = spec.layer if spec is not None else None
    if form is not None and form.shapes is not None:
        # a layer op (linear, conv2d, batch_norm ...): the shapes its LayerForm makes
        x = inputs[0] if inputs else None
        if x is None:
            return found
        wanted = form.shapes(form.args(x, params))
        keys = dict(form.state)
        # named as in the model's state_dict: `block1.layer1.weight` inside an instance
        path = node_id.replace("/", ".")
        for param, expected in wanted.items():
            _check(found, params, param, tuple(expected), f"{path}.{keys[param]}")
    # A source's `value`, trained or typed, wins over its `shape` (the shape is used only when
    # there is no value), so a source never holds a stale value: a person who set a shape and
    # then typed values of another size meant those values.
    return found


def _check(found, params, param, expected, name):
    value = params.get(param)
    if value is None:
        return
    stored = shape_of(value)
    if stored is not None and stored != expected:
        found.append(Stale(param, stored, expected, name))


def without(params, stale):
    """`params` with the stale values taken out: what a reset leaves (fresh values, made from
    the node's seed and size)."""
    fresh = dict(params)
    for s in stale:
        fresh[s.param] = None
    return fresh
