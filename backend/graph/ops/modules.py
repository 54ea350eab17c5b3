"""The two ops a module definition is made with (modules.py): its inputs and its outputs.

In the flat graph a run sees, both are identities that stay as nodes, so the edge into an
instance's port and the edges inside the module each carry their own value and gradient.
`composite` tells the executor that no engine node of their own stands between their input
and output: it reads their edges' gradients through alias nodes, as it does for `if`.

An input may say which input it takes (param `shape`: its last dims, -1 for any size), as
`nn.Linear(4, 8)` takes (*, 4): the module library's modules say so from their in_features,
in_channels, embed_dim or d_model, and an input of another shape is refused at the port in
PyTorch's words rather than running as a module of another size.
"""

from ..registry import OpSpec, Param, Port, register


def _expected(want):
    return "[*, " + ", ".join("any" if d == -1 else str(d) for d in want) + "]"


def _input_run(ctx, ins, p):
    x, want = ins[0], p.get("shape")
    if want:
        got = list(x.shape)
        tail = got[len(got) - len(want) :] if len(got) >= len(want) else None
        if tail is None or any(w not in (-1, g) for w, g in zip(want, tail, strict=True)):
            raise RuntimeError(
                f"expected input with shape {_expected(want)}, but got input of size {got}"
            )
    return x


_SHAPE = Param(
    "shape",
    "shape",
    None,
    nullable=True,
    doc="the last dims the input must have (-1: any size); empty: any input",
)

for _name, _doc, _run, _params in (
    (
        "module_input",
        "an input of the module: what is wired into the instance's port",
        _input_run,
        (_SHAPE,),
    ),
    (
        "module_output",
        "an output of the module: what the instance's port gives",
        lambda ctx, ins, p: ins[0],
        (),
    ),
):
    register(
        OpSpec(
            _name,
            "modules",
            _doc,
            (Port("input", derivative="1 (the module's port passes the value through)"),),
            run=_run,
            code=lambda lib, args, p: args[0],
            params=_params,
            # alias: the op is its input under another name, so a flat script writes it
            # `y = x` (an importer reads that as one variable: the node is not read back)
            extra={"composite": True, "alias": True},
        )
    )
