"""The two ops a module definition is made with (modules.py): its inputs and its outputs.

In the flat graph a run sees, both are identities that stay as nodes, so the edge into an
instance's port and the edges inside the module each carry their own value and gradient.
`composite` tells the executor that no engine node of their own stands between their input
and output: it reads their edges' gradients through alias nodes, as it does for `if`.
"""

from ..registry import OpSpec, Port, register

for _name, _doc in (
    ("module_input", "an input of the module: what is wired into the instance's port"),
    ("module_output", "an output of the module: what the instance's port gives"),
):
    register(
        OpSpec(
            _name,
            "modules",
            _doc,
            (Port("input"),),
            run=lambda ctx, ins, p: ins[0],
            code=lambda lib, args, p: args[0],
            # alias: the op is its input under another name, so a flat script writes it
            # `y = x` (an importer reads that as one variable: the node is not read back)
            extra={"composite": True, "alias": True},
        )
    )
