"""Graph documents as Python sees them: dicts of the JSON format (docs/graph-format.md), read
from and written to files, and checked by the same parser and validation the server uses."""

import json
from pathlib import Path

from pydantic import ValidationError

from backend.graph import GraphDocument, parse, validate

Document = dict


class DocumentError(ValueError):
    """A document that is not one, or cannot run: the message lists each problem where it is."""


def as_document(obj) -> GraphDocument:
    """A checked GraphDocument from a dict, a JSON string, a GraphDocument or a file path."""
    if isinstance(obj, GraphDocument):
        doc = obj
    else:
        if isinstance(obj, Path) or (isinstance(obj, str) and not obj.lstrip().startswith("{")):
            obj = Path(obj).read_text(encoding="utf-8")
        try:
            doc = parse(obj)
        except ValidationError as exc:
            lines = ["not a graph document:"]
            for err in exc.errors():
                where = ".".join(str(x) for x in err["loc"])
                lines.append(f"  {where}: {err['msg']}")
            raise DocumentError("\n".join(lines)) from None
    problems = validate(doc)
    if problems:
        lines = [f"the graph cannot run ({len(problems)} problems):"]
        for p in problems:
            where = f"node {p.node}" if p.node else f"edge {p.edge}" if p.edge else "graph"
            lines.append(f"  {where}: {p.message}")
        raise DocumentError("\n".join(lines))
    return doc


def to_dict(doc) -> dict:
    return json.loads(as_document(doc).model_dump_json())


def load(path) -> dict:
    """The document saved at `path` (a `.json` graph file), checked."""
    return to_dict(Path(path))


def save(doc, path):
    """Write `doc` to `path` as a graph file the editor opens."""
    text = as_document(doc).model_dump_json(indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")
    return Path(path)
