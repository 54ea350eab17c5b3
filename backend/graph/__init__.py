"""The graph layer: documents, the op registry, running with traces, code out and code in.

    registry.py     the op registry: OpSpec (ports, params, call forms, derivative texts)
    op_context.py   what an op's run may ask of whoever runs it
    limits.py       what one graph or message may ask for, each limit with its words
    ops/            the op families, one `register(OpSpec(...))` an op; importing it fills the
                    registry (done here first, so every import of the layer sees every op)
    document/       the document format, limits, validation, module definitions, templates
    running/        a run with a trace of every value and gradient; training (trainer.py)
    export/         a document as Python (engine or PyTorch): flat, as classes, with training
    importing/      a Python script read back into a document with `ast`, never run
    tracing/        a live PyTorch module or function traced into a document (torch.fx)

Layers, each importing only those above it: registry, op_context and limits; ops; document;
running; importing; export (which reads its script back through importing); tracing. Never Flask.
"""

from . import ops  # noqa: F401 - importing the op families is what fills the registry
from .document.format import GraphDocument, json_schema, parse
from .document.problems import GraphInvalid, Problem
from .document.snapshot import EditError, edit_nodes
from .document.validate import validate
from .limits import DEFAULT as DEFAULT_LIMITS
from .limits import LimitExceeded, Limits
from .registry import all_ops
from .registry import get as get_op
from .running.executor import Cancelled, ForwardCache, LeafGrads, RunResult, run, run_records

__all__ = [
    "Cancelled",
    "DEFAULT_LIMITS",
    "EditError",
    "ForwardCache",
    "GraphDocument",
    "GraphInvalid",
    "LeafGrads",
    "LimitExceeded",
    "Limits",
    "Problem",
    "RunResult",
    "all_ops",
    "edit_nodes",
    "get_op",
    "json_schema",
    "parse",
    "run",
    "run_records",
    "validate",
]
