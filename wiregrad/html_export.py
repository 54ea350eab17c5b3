"""`w.export_html(path)`: one HTML file that opens offline and shows the graph with its last run.

The file holds the widget's page (wiregrad/static/widget.js), the document and the packets of
the last run, as the kernel sent them. Opened from disk, the page plays that run back on its
canvas; its channel (below, in JavaScript) answers the registry from the file and runs nothing, for
there is no kernel behind it: the page opens read-only (api/host.ts `readOnly`), a view of the
graph as it was."""

from pathlib import Path

from backend.graph import all_ops
from backend.server import fastjson

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Wiregrad</title>
<style>html, body {{ margin: 0; height: 100%; }}</style>
</head><body>
<div id="wiregrad"></div>
<script type="module">
const data = {data};
const source = {source};
const listeners = [];
const reply = (id, payload) => listeners.forEach((h) => h({{ type: "reply", id, data: payload }}));
const refused = "this file is a view of the graph and its last run; open it in Wiregrad to run it";
function answer(event, payload) {{
  if (event === "api") {{
    const ok = (d) => ({{ status: 200, data: d, headers: {{}} }});
    if (payload.method === "GET" && payload.path === "/ops") return ok({{ ops: data.ops }});
    if (payload.method === "GET" && payload.path === "/templates") return ok({{ templates: [] }});
    if (payload.method === "GET" && payload.path === "/module-library") return ok({{ modules: [] }});
    if (payload.method === "POST" && payload.path === "/validate") return ok({{ ok: true, node_errors: [] }});
    return {{ status: 503, data: {{ error: refused }}, headers: {{}} }};
  }}
  return {{ error: refused }};
}}
const model = {{
  get: (k) =>
    k === "document" ? data.document
    : k === "height" ? Math.max(window.innerHeight, 480)
    : k === "read_only",
  set() {{}},
  save_changes() {{}},
  send(msg) {{ if (msg && msg.type === "request") setTimeout(() => reply(msg.id, answer(msg.event, msg.payload))); }},
  on(event, h) {{ if (event === "msg:custom") listeners.push(h); }},
  off() {{}},
}};
const url = URL.createObjectURL(new Blob([source], {{ type: "text/javascript" }}));
const widget = (await import(url)).default;
widget.render({{ model, el: document.getElementById("wiregrad") }});
// the last run, played back once the editor has opened the graph
setTimeout(() => {{
  for (const p of data.run) listeners.forEach((h) => h({{ type: "event", event: p.event, data: p.data }}));
}}, 800);
</script></body></html>
"""


def _script_text(value):
    """JSON that is safe inside a <script> element."""
    return fastjson.dumps(value).replace("</", "<\\/").replace("<!--", "<\\!--")


def export_html(editor, path):
    from .widget import STATIC

    source = (STATIC / "widget.js").read_text(encoding="utf-8")
    run = [
        {"event": e, "data": {**d, "adopt": True} if e == "run_started" else d}
        for e, d in editor.last_run
    ]
    data = {"document": editor.document, "ops": [op.describe() for op in all_ops()], "run": run}
    title = str(editor.document.get("name") or "graph").replace("<", "&lt;").replace(">", "&gt;")
    html = _PAGE.format(title=title, data=_script_text(data), source=_script_text(source))
    Path(path).write_text(html, encoding="utf-8")
    return Path(path)
