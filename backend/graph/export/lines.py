"""Lines every writer of a script shares: the `# node` comment the importer reads a node back
from, and the `retain_grad` lines."""

import json
import textwrap


def num(v):
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def node_comment(nid, position, hint):
    """`# node <id> (x, y)` and, where the code cannot say it, the hint's JSON: what the
    importer reads back a node's id, place, op and params from."""
    text = f"# node {nid} ({num(position.x)}, {num(position.y)})"
    if hint:
        text += " " + json.dumps(hint, separators=(", ", ": "))
    return text


def retain_lines(names, maybe=False, pad=""):
    """`x.retain_grad()` for each variable (`maybe`: those that require grad)."""
    if len(names) == 1 and not maybe:
        return [f"{pad}{names[0]}.retain_grad()"]
    out = []
    text = ", ".join(names) + ("," if len(names) == 1 else "")
    if len(pad) + len(text) + 12 <= 99:
        out.append(f"{pad}for t in ({text}):")
    else:
        wrapped = textwrap.wrap(text, 95 - len(pad), break_on_hyphens=False)
        out += [f"{pad}for t in ("] + [f"{pad}    {w}" for w in wrapped]
        out.append(f"{pad}):")
    if maybe:
        out.append(f"{pad}    if t.requires_grad:")
        out.append(f"{pad}        t.retain_grad()")
    else:
        out.append(f"{pad}    t.retain_grad()")
    return out
