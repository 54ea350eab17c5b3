"""The layout block code export ends a script with: the node ids, positions and labels (and what
else the code cannot say) of the statements above it, in one comment block instead of a comment
on every line (docs/code-export.md):

    # wiregrad layout (node ids, places and labels, read back by Wiregrad's import):
    # {"": {"data": [0, 0], "labels": [2200, 110], "loss": {"at": [2420, 0], "label": "loss"}},
    # "LeNet.forward": {"conv1": {"label": "conv1"}, "pool1": {"id": "p1", "at": [660, 0]}}}

A JSON object per scope ("" the script's top level, "LeNet.forward" a method), and in it an
entry per statement, keyed by what the statement assigns or does (`conv1`, `self.pos`,
`if c1`, `def forward`, `return`, `x.add_()`; `conv1#2` the second statement of that key in its
scope). A node's entry is its position `[x, y]` (its id being the key's name) or an object of
`id` (where it is not the key's name), `at` (where the import's own layout would not place
it), `label`, `op` and `params` (as a `# node` comment's JSON has them); a statement without an
entry makes its node as a script without comments does. `{"ports": ...}` and
`{"training": ...}` are the `# ports` (port_comments.py) and `# training` comments of the
statement.

`placed(source)` gives each entry at the line where the readers look for the comment it
replaces, so the import reads a script with the block as it reads one with comments on its
lines (which it still reads: older exported scripts). The exporter writes the block with the
same keys (export/layout.py)."""

import ast
import functools
import json
import math
import re

from ..document.format import ID_PATTERN
from .problems import ImportFailed, ImportProblem
from .syntax import COMMENT, comments, dotted

MARK = "# wiregrad layout"
HEADER = MARK + " (node ids, places and labels, read back by Wiregrad's import):"
_ID = re.compile(ID_PATTERN)
_NODE_KEYS = {"id", "at", "label", "op", "params"}
_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.FunctionDef, ast.ClassDef)


def statements(tree):
    """[(scope, key, stmt)] of every statement of the module `tree`, in source order."""
    out, seen = [], {}

    def walk(body, scope, cls):
        for stmt in body:
            name = _name(stmt)
            k = seen.get((scope, name), 0) + 1
            seen[(scope, name)] = k
            out.append((scope, name if k == 1 else f"{name}#{k}", stmt))
            if isinstance(stmt, ast.ClassDef):
                walk(stmt.body, stmt.name, stmt.name)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(stmt.body, f"{cls}.{stmt.name}" if cls else stmt.name, None)
            else:
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, field, None) or [], scope, cls)
                for handler in getattr(stmt, "handlers", None) or []:
                    walk(handler.body, scope, cls)

    walk(tree.body, "", None)
    return out


def _name(stmt):
    if isinstance(stmt, ast.Assign):
        return " = ".join(ast.unparse(t) for t in stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return ast.unparse(stmt.target)
    if isinstance(stmt, ast.Expr):
        if isinstance(stmt.value, ast.Call):
            return (dotted(stmt.value.func) or "call") + "()"
        return "expr"
    if isinstance(stmt, ast.If):
        return "if " + ast.unparse(stmt.test)
    if isinstance(stmt, ast.For):
        return "for " + ast.unparse(stmt.target)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ("class " if isinstance(stmt, ast.ClassDef) else "def ") + stmt.name
    return type(stmt).__name__.lower()


def comment_line(stmt):
    """The line where the readers look for the statement's comment: its first line (a return's:
    its value's last line, port_comments.py)."""
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        return stmt.value.end_lineno
    return stmt.lineno


def head_lines(stmt):
    """The lines of the statement itself (of a compound one: its head, not its body)."""
    if isinstance(stmt, _COMPOUND) and stmt.body:
        return range(stmt.lineno, max(stmt.lineno, stmt.body[0].lineno - 1) + 1)
    return range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)


def default_id(key):
    """The node id an entry without `id` has: the key's name (`conv1`; `self.conv1`: conv1);
    None where the key names no variable."""
    name = key.split("#", 1)[0]
    if name.startswith("self."):
        name = name[5:]
    return name if name.isidentifier() and _ID.match(name) else None


# -- the block --------------------------------------------------------------------------------
def block_text(scopes, width=100):
    """The block's lines for {scope: {key: entry}}: the header, then the JSON broken after its
    commas (never inside a string) into comment lines within `width`."""
    text = json.dumps(scopes, separators=(", ", ": "), ensure_ascii=True)
    lines, line = [HEADER], "#"
    for piece in _pieces(text):
        if len(line) + 1 + len(piece) > width and line != "#":
            lines.append(line)
            line = "#"
        line += " " + piece
    lines.append(line)
    return lines


def _pieces(text):
    """`text` cut after each `, ` outside a string (the space dropped)."""
    out, start, in_str, esc = [], 0, False, False
    for i, c in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "," and text[i + 1 : i + 2] == " " and not _in_pair(text, i):
            out.append(text[start : i + 1])
            start = i + 2
    out.append(text[start:])
    return out


def _in_pair(text, i):
    """Whether the comma at `i` is the one of a position `[x, y]` (kept on one line)."""
    return (
        text[i - 1 : i].isdigit()
        and text[i + 2 : i + 3] in "-0123456789"
        and (text.rfind("[", 0, i) > max(text.rfind(c, 0, i) for c in "]{},"))
    )


def read_block(lines):
    """(the line of the block's header, {scope: {key: entry}}) of the script's `lines`; None
    where it has no block."""
    at = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(MARK):
            at = i
            break
    if at is None:
        return None
    parts = []
    for line in lines[at + 1 :]:
        if not line.startswith("#"):
            break
        parts.append(line[1:].strip())
    try:
        data = json.loads(" ".join(parts))
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        _refuse(at + 1, "the JSON of the layout block cannot be read")
    return at + 1, data


@functools.lru_cache(maxsize=4)
def placed(source):
    """({line: (id, position or None, extra)}, {line: comment text}) of the layout block: the
    node entries at the lines the importer reads a node's comment at, the `# ports` and
    `# training` entries as those comments. Empty where the script has no block."""
    if MARK not in source:
        return {}, {}
    lines = re.split(r"\r\n|\r|\n", source)
    found = read_block(lines)
    if found is None:
        return {}, {}
    at, scopes = found
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, {}  # (the import reports it)
    metas, texts = {}, {}
    for scope, key, stmt in statements(tree):
        entry = scopes.get(scope, {}).get(key)
        if entry is None:
            continue
        line = comment_line(stmt)
        if isinstance(entry, dict) and set(entry) in ({"ports"}, {"training"}):
            (kind,) = entry
            texts[line] = f"# {kind} " + json.dumps(entry[kind], separators=(", ", ": "))
        else:
            metas[line] = _meta(at, key, entry)
    return metas, texts


def _meta(at, key, entry):
    """(id, position or None, extra) of a node's entry."""
    if isinstance(entry, list):
        entry = {"at": entry}
    if not isinstance(entry, dict) or not set(entry) <= _NODE_KEYS:
        _refuse(at, f"the layout entry of {key!r} is no node's (id, at, label, op, params)")
    nid = entry.get("id", default_id(key))
    if not isinstance(nid, str) or not _ID.match(nid):
        _refuse(at, f"the layout entry of {key!r} needs a node id")
    position = None
    if "at" in entry:
        xy = entry["at"]
        ok = isinstance(xy, list) and len(xy) == 2
        ok = ok and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xy)
        if not (ok and all(math.isfinite(v) for v in xy)):
            _refuse(at, f"the position of {key!r} in the layout block must be [x, y]")
        position = {"x": float(xy[0]), "y": float(xy[1])}
    extra = {k: v for k, v in entry.items() if k in ("label", "op", "params")}
    return nid, position, extra


def _refuse(line, message):
    raise ImportFailed([ImportProblem(line, message)])


def node_hints(source):
    """{node id: what the script says of it beyond its code and place (label, op, params)}, from
    the layout block and from `# node` comments on the lines: what the exporter had to add."""
    out = {nid: extra for nid, _, extra in placed(source)[0].values() if extra}
    for text in comments(source).values():
        m = COMMENT.match(text)
        if m and m["extra"]:
            out[m["id"]] = json.loads(m["extra"])
    return out
