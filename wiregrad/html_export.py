"""`w.export_html(path)`: one HTML file that opens offline and shows the graph with its last run.

The file holds the widget's page (wiregrad/static/widget.js), the document and the packets of
the last run, as the kernel sent them. Opened from disk, the page plays that run back on its
canvas; its channel (below, in JavaScript) answers the registry from the file and runs nothing, for
there is no kernel behind it: the page opens read-only (api/host.ts `readOnly`), a view of the
graph as it was."""

import re
from pathlib import Path

from backend.graph import all_ops
from backend.server import fastjson

from .page_script import built

# the page: the widget's module loaded from a blob, a channel with no kernel behind it
_PAGE = Path(__file__).with_name("view.html")


def _script_text(value):
    """JSON that is safe inside a <script> element."""
    return fastjson.dumps(value).replace("</", "<\\/").replace("<!--", "<\\!--")


def export_html(editor, path):
    source = built().read_text(encoding="utf-8")
    run = [
        {"event": e, "data": {**d, "adopt": True} if e == "run_started" else d}
        for e, d in editor.last_run
    ]
    data = {"document": editor.document, "ops": [op.describe() for op in all_ops()], "run": run}
    title = str(editor.document.get("name") or "graph").replace("<", "&lt;").replace(">", "&gt;")
    parts = {"TITLE": title, "DATA": _script_text(data), "SOURCE": _script_text(source)}
    # one pass: a document that holds the text `__SOURCE__` is not filled in again
    html = re.sub(r"__(TITLE|DATA|SOURCE)__", lambda m: parts[m[1]], _PAGE.read_text("utf-8"))
    Path(path).write_text(html, encoding="utf-8")
    return Path(path)
