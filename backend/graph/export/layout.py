"""Round-trip metadata out of the way: the `# node`, `# ports` and `# training` comments the
exporter writes on its lines (what the importer needs to read a node back with its id, place,
label and params) moved into one layout block at the end of the script
(importing/layout_block.py), so that the code reads as code.

What the import gives without an entry is left out: an id that is the variable's name, a
position the import's own layout gives (found by reading the script back: an entry loses its
place where the document read back stays the same), a statement with nothing else to say. The
script with the block must read back as the script with the comments does; where it would not,
the comments stay on their lines (the importer reads both).
"""

import ast
import json

from ..importing.importer import ImportFailed, from_python
from ..importing.layout_block import block_text, default_id, head_lines, statements
from ..importing.syntax import COMMENT, comments
from .style import EXEMPT, styled

_KINDS = ("# node ", "# ports ", "# training ")


def out_of_the_way(source, weights=None):
    """`source` (styled) with its node, ports and training comments in a layout block; `source`
    itself where the block would not read back the same. `weights`: the tensors of the file the
    script loads (export/sidecar.py)."""
    try:
        tree = ast.parse(source)
        reference = _read(source, weights)
    except (SyntaxError, ValueError, ImportFailed):
        return source
    found = comments(source)
    scopes, moved = {}, []
    for scope, key, stmt in statements(tree):
        ours = [ln for ln in head_lines(stmt) if found.get(ln, "").startswith(_KINDS)]
        if len(ours) != 1:
            continue
        entry = _entry(key, found[ours[0]])
        if entry is None:
            continue
        scopes.setdefault(scope, {})[key] = entry
        moved.append(ours[0])
    if not moved:
        return source
    code = _without(source, {ln: found[ln] for ln in moved})
    full = _with_block(code, _compact(scopes))
    if _read(full, weights) != reference:
        return source
    return _placed_by_layout(code, scopes, reference, weights) or full


def _entry(key, text):
    """A statement's entry from its comment: a node's `[x, y]` or object, `{"ports": ...}`,
    `{"training": ...}`; None where the comment cannot be read."""
    for kind in ("ports", "training"):
        if text.startswith(f"# {kind} "):
            try:
                return {kind: json.loads(text[len(kind) + 3 :])}
            except ValueError:
                return None
    m = COMMENT.match(text)
    if m is None:
        return None
    try:
        extra = json.loads(m["extra"]) if m["extra"] else {}
        at = [_num(m["x"]), _num(m["y"])]
    except ValueError:
        return None
    if not isinstance(extra, dict) or not set(extra) <= {"label", "op", "params"}:
        return None
    entry = {} if m["id"] == default_id(key) else {"id": m["id"]}
    entry["at"] = at
    entry.update(extra)
    return entry


def _num(text):
    v = float(text)
    return int(v) if v.is_integer() and abs(v) < 1e15 else v


def _placed_by_layout(code, scopes, reference, weights=None):
    """The script whose entries keep a position only where the import's own layout would not
    give it (and lose an entry with nothing else to say); None where no such script reads back
    as `reference`."""
    want = _positions(reference)
    dropped = {s: {k: dict(e) for k, e in keys.items()} for s, keys in scopes.items()}
    for keys in dropped.values():
        for e in keys.values():
            e.pop("at", None)
    for _ in range(4):
        script = _with_block(code, _compact(dropped))
        try:
            back = _read(script, weights)
        except ImportFailed:
            return None
        if back == reference:
            return script
        got = _positions(back)
        wrong = {nid for nid, at in want.items() if got.get(nid) != at}
        restored = False
        for scope, keys in dropped.items():
            for key, e in keys.items():
                nid = e.get("id", default_id(key))
                full = scopes[scope][key]
                if nid in wrong and "at" not in e and "at" in full:
                    keys[key] = {k: v for k, v in full.items() if k == "at" or k in e}
                    restored = True
        if not restored:
            return None
    return None


def _compact(scopes):
    """The entries as written: a node's position alone as `[x, y]`, none where nothing is
    left to say."""
    out = {}
    for scope, keys in scopes.items():
        kept = {}
        for key, e in keys.items():
            if e:
                kept[key] = e["at"] if set(e) == {"at"} else e
        if kept:
            out[scope] = kept
    return out


def _positions(doc):
    """{node id: (x, y)} of the document's nodes and its definitions' nodes (an id of two
    levels: both, which tells a change of either)."""
    out = {}
    for graph in (doc, *doc.get("modules", [])):
        for n in graph["nodes"]:
            out.setdefault(n["id"], set()).add((n["position"]["x"], n["position"]["y"]))
    return out


def _read(source, weights=None):
    """The document `source` reads back as, its edges without their ids (an import names
    the edges after the nodes they join: no document keeps an exported edge's id)."""
    doc = from_python(source, weights=weights).model_dump(mode="json")
    for graph in (doc, *doc.get("modules", [])):
        ends = ("source", "sourcePort", "target", "targetPort")
        graph["edges"] = sorted(tuple(e[k] for k in ends) for e in graph["edges"])
    return doc


def _without(source, moved):
    """`source` without the comments of `moved` ({line: the comment, which ends it})."""
    out = source.split("\n")
    for ln, comment in moved.items():
        text = out[ln - 1]
        out[ln - 1] = text[: text.rindex(comment)].rstrip()
    return "\n".join(out)


def _with_block(code, scopes):
    """The script `code` ending with the block of `scopes`, styled again (the lines that lost
    their comments joined, the line-length exemption only where a line still needs it)."""
    lines = code.rstrip("\n").split("\n")
    if EXEMPT[0] in lines:  # (styled() says it again where a line still needs it)
        at = lines.index(EXEMPT[0])
        del lines[at - 1 : at + len(EXEMPT)]
    text = "\n".join(lines) + "\n"
    if scopes:
        text += "\n\n" + "\n".join(block_text(scopes)) + "\n"
    return styled(text)
