"""The op context: what an op's `run(ctx, inputs, params)` may ask of whoever runs it.

Four callers run ops, each with its own answers: validation (a dry run on stand-ins), the
executor (a traced run), a training (layers made once, kept across steps) and export (a dry
run for shapes). Each passes a subclass of OpContext; the element limit is checked here, once,
with one wording of its error.
"""

from .limits import DEFAULT, LimitExceeded, Limits


def limit_message(n, limits):
    return (
        f"a tensor of {n:,} elements is over the limit of "
        f"{limits.max_elements:,} elements per tensor"
    )


def check_numel(n, limits):
    """LimitExceeded when a tensor of `n` elements would pass the per-tensor limit (checked
    before the tensor is allocated)."""
    if n > limits.max_elements:
        raise LimitExceeded(limit_message(n, limits))


class OpContext:
    """The base of every op context. A subclass sets `device` and `limits` (as attributes or
    slots; this class has no slots of its own, so a subclass may declare `__slots__`) and
    overrides `add_parameters` / `module` where it keeps layers."""

    __slots__ = ()
    device: str = "cpu"
    limits: Limits = DEFAULT

    def check_numel(self, n):
        """Refuse a tensor of `n` elements over the limit (before it is made)."""
        check_numel(n, self.limits)

    def add_parameters(self, named):
        """The (name, tensor) pairs of a layer the op made: leaves of the run. Ignored here."""

    def module(self, key, factory):
        """The node's layer: `factory()` makes it; `key` (its input features) says whether a
        kept one still fits. Made anew here."""
        return factory()
