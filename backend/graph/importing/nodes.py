"""The graph an import builds: nodes and edges in the order their lines are read, node ids
(given by a `# node` comment, or made from the variable's name), and the finished document,
laid out and validated."""

import copy
import json
import math
import re
import time

from .. import registry
from ..document.format import ID_PATTERN, parse
from ..limits import DEFAULT
from .layout_block import placed
from .problems import GraphTooBig, ImportFailed, ImportProblem, Unsupported
from .syntax import COMMENT, comments, split_lines

_ID = re.compile(ID_PATTERN)
# a variable bound to one output of a node with several (`a, b = net(x)`: a module's outputs)
# names it `<node id>#<port>`; no node id holds a `#`, and each edge from it takes its port
PORT = "#"


def port_ref(nid, port):
    return f"{nid}{PORT}{port}"


def split_ref(src):
    """(node id, output port) of an edge's source: a node id, or a port_ref."""
    nid, _, port = src.partition(PORT)
    return nid, port or "out"


class ImportedGraph:
    def __init__(self, source):
        self.lines = split_lines(source)
        self.comments = comments(source)
        # the layout block's entries (layout_block.py), read where the comments they stand
        # for would be: nodes' (id, position, extra) by line, `# ports` / `# training` texts
        self.placed, texts = placed(source)
        for line, text in texts.items():
            self.comments.setdefault(line, text)
        # ids that node comments give: an id made from a name must not take one of them
        self.reserved = {meta[0] for meta in self.placed.values()}
        for text in self.comments.values():
            m = COMMENT.match(text)
            if m:
                self.reserved.add(m["id"])
        self.nodes = {}  # id -> dict(id, op, params, position, label, line, auto)
        self.edges = []  # (source id, target id, port)
        self.next_suffix = {}  # fresh_id's next suffix per base name
        # the walker's time budget, also checked here: one line can make thousands of nodes
        # (`torch.stack([x, x, ...])`), and the walker checks the clock between lines only
        self.deadline, self.max_seconds = math.inf, None

    def code_at(self, line):
        """The text of a line, for a problem (at most 200 characters)."""
        code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        return code[:200]

    # -- ids ------------------------------------------------------------------------------------
    def node_comment(self, first, last):
        """(id, position, extra) of the first `# node` comment (or layout block entry) on lines
        first..last, or None."""
        for ln in range(first, last + 1):
            if ln in self.placed:
                nid, position, extra = copy.deepcopy(self.placed[ln])  # (a cached reading)
                return nid, position, extra
            text = self.comments.get(ln)
            m = COMMENT.match(text) if text else None
            if m:
                extra = _extra(m)  # (read before the position: its problem is reported first)
                return m["id"], _position(m), extra
        return None

    def fresh_id(self, base):
        base = re.sub(r"[^A-Za-z0-9_.:-]", "_", base)[:56] or "node"
        # the next suffix to try for each base, so that n lines assigning one name cost O(n)
        # in all, not a scan of every suffix taken so far per line (12,000 lines: 23 s)
        nid = base
        if nid in self.nodes or nid in self.reserved:  # (the base itself may be free again)
            k = self.next_suffix.get(base, 2)
            nid = f"{base}_{k}"
            while nid in self.nodes or nid in self.reserved:
                k += 1
                nid = f"{base}_{k}"
            self.next_suffix[base] = k + 1
        return nid

    def port(self, nid, port):
        """What a variable bound to output `port` of node `nid` holds (see PORT)."""
        return port_ref(nid, port)

    def rename(self, old, new):
        n = self.nodes.pop(old)
        n["id"] = new
        self.nodes[new] = n
        self.reserved.discard(old)
        self.reserved.add(new)
        self.edges = [
            (renamed_ref(s, old, new), new if d == old else d, p) for s, d, p in self.edges
        ]

    # -- nodes ----------------------------------------------------------------------------------
    def add_node(self, op, params, inputs, meta, line, var):
        """A node of `op` read on `line`; inputs are [(port, node id)]; meta: (id, position,
        extra) or a variable name to derive the id from (None: an inner expression); `var`:
        the variable being assigned, which names a source node without a name param."""
        spec = registry.get(op)
        position, label = None, None
        if isinstance(meta, tuple):
            nid, position, extra = meta
            if nid in self.nodes:
                raise Unsupported(f"node id '{nid}' is used twice")
            op, spec, params = _op_of_comment(op, spec, params, extra)
            if isinstance(extra.get("params"), dict):
                params.update(extra["params"])
            label = extra.get("label")
            if label is not None and not isinstance(label, str):
                raise Unsupported("the label in the node comment must be text")
        else:
            nid = self.fresh_id(meta if meta else op)
            self.reserved.add(nid)
        if (
            spec is not None  # (a module instance's op is no registry op)
            and spec.source
            and spec.param("name") is not None
            and "name" not in params
            and meta is not None
            and var
        ):
            params["name"] = var  # a source node is named after its variable
        self.nodes[nid] = {
            "id": nid,
            "op": op,
            "params": params,
            "position": position,
            "label": label,
            "line": line,
            "auto": not isinstance(meta, tuple),
        }
        for port, src in inputs:
            self.edges.append((src, nid, port))
        self._check_size(line)
        return nid

    def _check_size(self, line):
        """ImportFailed as soon as the graph read so far is past a document's limits or the
        import's time budget: no script gets the importer to build what no run could take."""
        limit = None
        if len(self.nodes) > DEFAULT.max_nodes:
            limit = f"{DEFAULT.max_nodes:,} nodes"
        elif len(self.edges) > DEFAULT.max_edges:
            limit = f"{DEFAULT.max_edges:,} edges"
        if limit:
            problem = f"the script makes more than {limit}, the limit of a graph"
            raise GraphTooBig([ImportProblem(line, problem, self.code_at(line))])
        if time.perf_counter() > self.deadline:
            problem = (
                f"reading the script took longer than {self.max_seconds:g} s, the limit; it "
                "stopped at this line (import a shorter script)"
            )
            raise ImportFailed([ImportProblem(line, problem, self.code_at(line))])

    # -- the document ---------------------------------------------------------------------------
    def document(self, name, description, target, lesson=(), modules=()):
        """The document of the nodes read (with `modules`, definitions of version 2: a
        script's nn.Module classes); ImportFailed where it is not a valid one."""
        data = {
            "name": name,
            "description": description,
            "nodes": self.laid_out(),
            "edges": self.edge_list(),
            "target": target,
            "lesson": list(lesson),
        }
        if modules:
            data.update(version=2, modules=list(modules))
        try:
            doc = parse(data)
        except Exception as exc:  # pydantic's ValidationError: an id or a value out of range
            problem = ImportProblem(0, f"the graph is not a valid document: {exc}")
            raise ImportFailed([problem]) from None
        self._check(doc)
        return doc

    def laid_out(self):
        """The nodes as document dicts; one without a position goes in a column by its depth."""
        depth, incoming, column, nodes = {}, {}, {}, []
        for src, dst, _ in self.edges:
            incoming.setdefault(dst, []).append(split_ref(src)[0])
        for nid in self.nodes:
            depth[nid] = 1 + max((depth.get(s, 0) for s in incoming.get(nid, [])), default=-1)
        for nid, n in self.nodes.items():
            pos = n["position"]
            if pos is None:
                row = column.get(depth[nid], 0)
                column[depth[nid]] = row + 1
                pos = {"x": 220.0 * depth[nid], "y": 110.0 * row}
            out = {"id": nid, "op": n["op"], "params": n["params"], "position": pos}
            if n["label"] is not None:
                out["label"] = n["label"]
            nodes.append(out)
        return nodes

    def edge_list(self):
        """The edges as document dicts, each with an id that is valid and not taken."""
        edges, seen = [], set()
        next_k = {}  # the next number to try per stem: n edges between two nodes cost O(n)

        def taken(eid):
            return eid in seen or len(eid) > 64 or not _ID.match(eid)

        for ref, dst, port in self.edges:
            src, source_port = split_ref(ref)
            eid = f"{src}-{dst}"
            if taken(eid):
                eid = f"{src}-{dst}-{port}"
            # numbered after a valid stem: ids that cannot be valid (too long, a `/` of a path
            # inside a module) get the stem `e`, so the loop always ends
            base = eid if len(eid) <= 60 and _ID.match(eid) else "e"
            k = next_k.get(base, 2)
            while taken(eid):
                eid = f"{base}-{k}"
                k += 1
            next_k[base] = k
            seen.add(eid)
            edges.append(
                {
                    "id": eid,
                    "source": src,
                    "sourcePort": source_port,
                    "target": dst,
                    "targetPort": port,
                }
            )
        return edges

    def _check(self, doc):
        """Structural problems of the document (of its flat form, modules unpacked), each at
        the line of its node (of the instance holding it)."""
        from ..document.modules import ModuleProblems, flatten, instance_of
        from ..document.validate import structural_problems

        try:
            flat = flatten(doc)
        except ModuleProblems as bad:
            raise ImportFailed([ImportProblem(0, p.message) for p in bad.problems]) from None
        problems = []
        for p in structural_problems(flat):
            head, _ = instance_of(p.node or "")
            n = self.nodes.get(head or p.node)
            line = n["line"] if n else 0
            problems.append(ImportProblem(line, p.message, self.code_at(line)))
        if problems:
            raise ImportFailed(problems)


def renamed_ref(ref, old, new):
    """An edge source `ref` (a node id or a port_ref) after node `old` is renamed `new`."""
    nid, sep, port = ref.partition(PORT)
    return (new + sep + port) if nid == old else ref


def _extra(m):
    """The JSON object after a `# node` comment's position ({} where there is none)."""
    if not m["extra"]:
        return {}
    try:
        extra = json.loads(m["extra"])
    except ValueError:
        raise Unsupported("the JSON after '# node' cannot be read") from None
    if not isinstance(extra, dict):
        raise Unsupported("the JSON after '# node' must be an object")
    return extra


def _position(m):
    try:
        pos = {"x": float(m["x"]), "y": float(m["y"])}
        if not all(math.isfinite(v) for v in pos.values()):
            raise ValueError
    except ValueError:
        raise Unsupported("the position in '# node' cannot be read") from None
    return pos


def _op_of_comment(op, spec, params, extra):
    """(op, spec, params) where a node comment names another op with the same required
    inputs (e.g. a loss written as code the same way): its params only are kept."""
    hop = extra.get("op")
    if hop is not None and not isinstance(hop, str):
        raise Unsupported("the op in the node comment must be text")
    if hop is None or hop == op:
        return op, spec, params
    hspec = registry.get(hop)
    if hspec is None:
        raise Unsupported(f"unknown op '{hop}' in the node comment")
    if [p.name for p in hspec.inputs if not p.optional] != [
        p.name for p in spec.inputs if not p.optional
    ]:
        raise Unsupported(f"the code does not fit op '{hop}' of the node comment")
    return hop, hspec, {k: v for k, v in params.items() if hspec.param(k) is not None}
