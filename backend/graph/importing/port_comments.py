"""A module definition's input and output nodes as code export writes them: forward's arguments
and return values have no line of their own to carry a `# node` comment, so the `def forward`
line and the `return` line carry one `# ports {json}` comment each, in forward's order:

    def forward(self, x, mask):  # ports {"x": {"at": [0, 40]}, "mask": {"at": [0, 120]}}
    return h  # ports {"y": {"at": [720, 40]}}

Each port: its node id, its position (`at`), and where the code cannot say them its `params`
(a module_input's `shape`) and `label`. Without the comment the ports are named as the importer
names them (the argument's name; `out`, `out0`, `out1` ...).
"""

import json
import math
import re

from ..document.format import ID_PATTERN
from .problems import Unsupported

PREFIX = "# ports "
_ID = re.compile(ID_PATTERN)


def ports_of(graph, line, defaults):
    """Per port the `meta` ImportedGraph.add_node takes: (id, position, extra) from the
    `# ports` comment on `line`, else the default name."""
    text = graph.comments.get(line, "")
    if not text.startswith(PREFIX):
        return list(defaults)
    try:
        data = json.loads(text[len(PREFIX) :])
    except (ValueError, RecursionError):
        raise Unsupported("the JSON after '# ports' cannot be read") from None
    if not isinstance(data, dict) or len(data) != len(defaults):
        raise Unsupported(f"'# ports' must name {len(defaults)} port(s) here, in order")
    return [_meta(pid, d) for pid, d in data.items()]


def meta_id(meta):
    return meta[0] if isinstance(meta, tuple) else meta


def _meta(pid, d):
    if not _ID.match(pid) or not isinstance(d, dict):
        raise Unsupported(f"'# ports': {pid!r} is no node id with its details")
    at = d.get("at", [0, 0])
    if not (
        isinstance(at, list)
        and len(at) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in at)
        and all(math.isfinite(v) for v in at)
    ):
        raise Unsupported(f"'# ports': the position of {pid!r} must be [x, y]")
    extra = {k: d[k] for k in ("params", "label") if k in d}
    if not isinstance(extra.get("params", {}), dict):
        raise Unsupported(f"'# ports': the params of {pid!r} must be an object")
    return pid, {"x": float(at[0]), "y": float(at[1])}, extra


def ports_comment(nodes, resolved):
    """The comment code export writes for port nodes (`nodes`, in forward's order);
    `resolved(node)`: the node's params that differ from the op's defaults."""
    data = {}
    for n in nodes:
        d = {"at": [_num(n.position.x), _num(n.position.y)]}
        params = resolved(n)
        if params:
            d["params"] = params
        if n.label is not None:
            d["label"] = n.label
        data[n.id] = d
    return PREFIX + json.dumps(data, separators=(", ", ": "))


def _num(v):
    v = float(v)
    return int(v) if v.is_integer() and abs(v) < 1e15 else v
