"""`run(doc, backward=True)`: a document run on the engine, its values and gradients by name.

Names are the graph's node ids with PyTorch's dots for the document's `/` (an instance's inner
node `blocks.0/fc` is `blocks.0.fc`), and a layer's parameters `<node>.<name>`: so the
gradients of a traced model come back under `model.named_parameters()`'s names."""

from dataclasses import dataclass, field

import numpy as np

from backend.graph import run as run_graph
from engine.watch import array_of

from .documents import as_document


def _name(key):
    return key.replace("/", ".")


def _numpy(t):
    a = array_of(t)
    get = getattr(a, "get", None)  # a cupy array comes to the host
    return np.asarray(get() if callable(get) else a)


@dataclass
class RunOutput:
    status: str
    target: str | None
    values: dict = field(default_factory=dict)  # name -> numpy array (every node's output)
    grads: dict = field(default_factory=dict)  # name -> numpy array (leaves and parameters)
    error: dict | None = None
    timings: dict = field(default_factory=dict)

    @property
    def output(self):
        """The target's value (the loss), or None."""
        return None if self.target is None else self.values.get(_name(self.target))

    @property
    def loss(self):
        out = self.output
        return None if out is None or out.size != 1 else float(out.reshape(()))

    def __repr__(self):
        head = f"RunOutput(status={self.status!r}"
        if self.loss is not None:
            head += f", loss={self.loss:.6g}"
        return head + f", {len(self.values)} values, {len(self.grads)} gradients)"


def run(doc, backward=False, target=None, device=None):
    """Run `doc` (forward; with `backward`, from its target or `target`) on the engine."""
    d = as_document(doc)
    mode = "backward" if backward else "forward"
    kw = {"device": device} if device else {}
    return outputs_of(run_graph(d, mode, target if backward else None, **kw), d)


def outputs_of(result, doc):
    """A RunResult's values and gradients as numpy arrays by name."""
    values = {_name(k): _numpy(t) for k, t in result.values.items()}
    grads = {_name(k): _numpy(t) for k, t in result.leaf_grads.items()}
    return RunOutput(
        result.status, result.target or doc.target, values, grads, result.error, result.timings
    )
