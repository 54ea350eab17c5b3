"""Graph documents: the format, the op registry, validation, execution with traces, export."""

from .document import GraphDocument, json_schema, parse
from .limits import DEFAULT as DEFAULT_LIMITS
from .limits import LimitExceeded, Limits
from .registry import all_ops
from .registry import get as get_op
from .running.executor import Cancelled, ForwardCache, LeafGrads, RunResult, run, run_records
from .running.snapshot import EditError, edit_nodes
from .validate import GraphInvalid, Problem, validate

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
