"""Ready-made graph documents: the teaching texts' examples and a few more.

Each template is a JSON file in `templates/` (package data) whose name is its id. The examples
of the texts come first, in the texts' order; any file not listed in ORDER follows, by id.
"""

import re
from pathlib import Path

from .format import GraphDocument, parse

FOLDER = Path(__file__).resolve().parent / "templates"
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_ID_LENGTH = 64

ORDER = (
    # text 000
    "mean-of-3a",
    # text 001
    "five-weight-network",
    "vector-backward",
    # text 002
    "quadratic",
    "doubling-loop",
    "branch-on-sign",
    "classifier-cross-entropy",
    "detach-stops-gradient",
    "no-grad-inference",
    "inplace-leaf",
    # text 003
    "square-of-a-sum",
    "branch-square-or-negate",
    "mlp-mse",
    "detached-encoder",
    # more
    "two-paths-add-up",
    "shared-weight",
    "broadcast-sum-back",
    "softmax-expected-value",
    "inplace-saved-overwritten",
    "inplace-relu-safe",
    "inplace-slice-write",
)


def _path(template_id):
    """The file of a template id; KeyError for anything that is not a known, well-formed id."""
    if (
        not isinstance(template_id, str)
        or len(template_id) > MAX_ID_LENGTH
        or not ID_RE.fullmatch(template_id)
    ):
        raise KeyError(template_id)
    path = FOLDER / f"{template_id}.json"
    if not path.is_file():
        raise KeyError(template_id)
    return path


def _ids():
    found = {p.stem for p in FOLDER.glob("*.json") if ID_RE.fullmatch(p.stem)}
    return [i for i in ORDER if i in found] + sorted(found.difference(ORDER))


def load_template(template_id) -> GraphDocument:
    """The template's document; KeyError for an unknown id."""
    return parse(_path(template_id).read_text(encoding="utf-8"))


def list_templates():
    """[{"id", "name", "description"}] of every template, the texts' examples first."""
    out = []
    for template_id in _ids():
        doc = load_template(template_id)
        out.append({"id": template_id, "name": doc.name, "description": doc.description})
    return out
