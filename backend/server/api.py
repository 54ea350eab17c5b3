"""The JSON API under /api: ops, templates, stored graphs with revisions, validation, export and
import, health. Errors are JSON: {"error": message} and, for graphs, {"node_errors": [...]}."""

import base64
import binascii

from flask import Blueprint, current_app, jsonify, request

from ..graph import all_ops, parse, validate
from ..graph.document.format import invalid_text
from ..graph.document.templates import list_templates, load_template
from ..graph.document.validate import inferred_shapes
from . import auth
from .fastjson import strict_loads
from .store import BadId, Conflict, NotFound
from .store_errors import StoreUnavailable

api = Blueprint("api", __name__, url_prefix="/api")
REVISION_HEADER = "X-Wiregrad-Revision"  # on a stored graph: which revision the body is


class ApiError(Exception):
    def __init__(self, message, status=400, **extra):
        super().__init__(message)
        self.message, self.status, self.extra = message, status, extra


@api.errorhandler(ApiError)
def _api_error(exc):
    return jsonify({"error": exc.message, **exc.extra}), exc.status


@api.errorhandler(NotFound)
def _not_found(exc):
    return jsonify({"error": f"not found: {exc.args[0]}"}), 404


@api.errorhandler(Conflict)
def _conflict(exc):
    """A save based on a revision that is no longer the head (docs/protocol.md): the head's
    number, so that the page can save again based on it or open it."""
    return jsonify({"error": str(exc), "code": "conflict", "revision": exc.head}), 409


@api.errorhandler(BadId)
def _bad_id(exc):
    return jsonify({"error": str(exc)}), 400


@api.errorhandler(StoreUnavailable)
def _store_unavailable(exc):
    """A write the disk refused: what happened, what was kept, what to do (store_errors)."""
    graph_id = (request.view_args or {}).get("graph_id")
    last = None
    if graph_id is not None:
        try:
            last = _store().info(graph_id)["revision"]
        except Exception:  # the graph may not exist, or not be readable either
            last = None
    return jsonify({"error": exc.message(last), "code": f"store_{exc.reason}"}), exc.status


def _store():
    return current_app.extensions["wiregrad.store"]


def _json_body():
    """The request's JSON, strictly: no NaN, Infinity or numbers past a double's range (they
    would come back as null), and nesting too deep for the parser is a 400, not a crash."""
    if not request.is_json:
        raise ApiError("expected a JSON body (Content-Type: application/json)")
    try:
        return strict_loads(request.get_data(cache=True))
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, too deep, bad UTF-8
        raise ApiError(f"the body is not valid JSON: {exc}") from None


def _document(data):
    """A validated document as a dict, or an ApiError naming each problem at its node."""
    try:
        doc = parse(data)
    except Exception as exc:  # pydantic's ValidationError
        raise ApiError(
            f"invalid graph document: {invalid_text(exc)}",
            node_errors=[],
            problems=_structure_problems(exc),
        ) from None
    return doc


def _structure_problems(exc, limit=20):
    """Each of a document's structure errors as one line, where it is first (`nodes[2].op:
    field required`), for the page to list; at most `limit`, then how many more."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    lines = []
    for e in errors[:limit]:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.get("loc", ()))
        msg = str(e.get("msg", "invalid")).replace(" or instance of GraphDocument", "")
        msg = msg.removeprefix("Value error, ")
        msg = msg[:1].lower() + msg[1:]
        lines.append(f"{where.lstrip('.') or 'the document'}: {msg}")
    if len(errors) > limit:
        lines.append(f"and {len(errors) - limit} more")
    return lines or [invalid_text(exc)]


@api.get("/health")
def health():
    return jsonify({"status": "ok", "device": current_app.config["WIREGRAD"].device})


@api.get("/ops")
def ops():
    return jsonify({"ops": [op.describe() for op in all_ops()]})


@api.get("/templates")
def templates():
    return jsonify({"templates": list_templates()})


@api.get("/templates/<template_id>")
def template(template_id):
    try:
        return jsonify(load_template(template_id).model_dump(mode="json"))
    except KeyError:
        raise ApiError(f"no template {template_id!r}", 404) from None


@api.get("/module-library")
def module_library():
    from ..graph.document.module_library import describe

    return jsonify({"modules": describe()})


@api.post("/module-library/<name>")
def module_from_library(name):
    """The definition of library entry `name` built from the body's argument values; a 400
    naming each bad argument (`field_errors`), a 404 for no such entry."""
    from ..graph.document.module_library import BY_NAME, LibraryArgsError, build

    if name not in BY_NAME:
        raise ApiError(f"no module {name!r} in the library (it has {', '.join(BY_NAME)})", 404)
    values = _json_body()
    try:
        return jsonify({"module": build(name, values)})
    except LibraryArgsError as bad:
        raise ApiError(str(bad), field_errors=bad.errors) from None


@api.post("/validate")
def validate_graph():
    doc = _document(_json_body())
    limits = current_app.config["WIREGRAD"].limits
    problems = validate(doc, limits)
    body = {"ok": not problems, "node_errors": [p.to_dict() for p in problems]}
    if request.args.get("shapes"):  # ?shapes=1: each node's inferred output shape too
        body["shapes"] = inferred_shapes(doc, limits)
    return jsonify(body)


# -- stored graphs ----------------------------------------------------------------------------
@api.get("/graphs")
def list_graphs():
    owner = auth.listing_owner(current_app.config["WIREGRAD"])  # None: all (auth.py)
    return jsonify({"graphs": _store().list(owner=owner)})


@api.post("/graphs")
def create_graph():
    doc = _document(_json_body())
    owner = auth.creating_owner(current_app.config["WIREGRAD"])
    return jsonify(_store().create(doc.model_dump(mode="json"), owner=owner)), 201


@api.get("/graphs/<graph_id>")
def get_graph(graph_id):
    rev = request.args.get("revision")
    if rev is not None:
        try:
            rev = int(rev)
        except ValueError:
            raise ApiError("revision must be a whole number") from None
    document, rev = _store().get_revision(graph_id, rev)
    answer = jsonify(document)
    # which revision this is, so that a save of it can name its base (base_revision)
    answer.headers[REVISION_HEADER] = str(rev)
    return answer


@api.put("/graphs/<graph_id>")
def save_graph(graph_id):
    """A new revision; with ?base_revision=N only if N is still the head (else 409)."""
    doc = _document(_json_body())
    base = request.args.get("base_revision")
    if base is not None:
        if not (base.isascii() and base.isdecimal() and len(base) < 19 and int(base) >= 1):
            raise ApiError("base_revision must be a revision number: a whole number from 1")
        base = int(base)
    return jsonify(_store().save(graph_id, doc.model_dump(mode="json"), base=base))


@api.delete("/graphs/<graph_id>")
def delete_graph(graph_id):
    _store().delete(graph_id)
    return jsonify({"deleted": graph_id})


@api.get("/graphs/<graph_id>/revisions")
def revisions(graph_id):
    return jsonify({"revisions": _store().revisions(graph_id)})


@api.post("/graphs/<graph_id>/revisions/<int:rev>/restore")
def restore(graph_id, rev):
    return jsonify(_store().restore(graph_id, rev))


# -- code ---------------------------------------------------------------------------------------
@api.post("/export")
def export_code():
    from ..graph.export import export_python

    data = _json_body()
    flavor = data.get("flavor", "engine") if isinstance(data, dict) else None
    if flavor not in ("engine", "torch"):
        raise ApiError("flavor must be 'engine' or 'torch'")
    # which weights the script says it starts from (the page sends the graph as it was before
    # its training for "initial"); none: told from the graph
    weights = data.get("weights")
    if weights not in (None, "initial", "trained"):
        raise ApiError("weights must be 'initial' or 'trained'")
    # every value and gradient printed, one parseable line each (export/printout.py)
    trace = data.get("trace", False)
    if not isinstance(trace, bool):
        raise ApiError("trace must be true or false")
    doc = _document(data.get("graph"))
    problems = validate(doc, current_app.config["WIREGRAD"].limits)
    if problems:
        raise ApiError("the graph has problems", node_errors=[p.to_dict() for p in problems])
    # the values no seed gives, where they are many, in a .safetensors file the script loads
    # from beside itself: sent as base64 (export/sidecar.py); `inline`: all in the code
    inline = data.get("inline", False)
    if not isinstance(inline, bool):
        raise ApiError("inline must be true or false")
    out = export_python(doc, flavor, weights=weights, trace=trace, inline=inline)
    body = {"flavor": flavor, "code": out.text}
    data = out.weights
    if data is not None:
        body["weights"] = base64.b64encode(data).decode("ascii")
    return jsonify(body)


def _weights_field(text):
    """The bytes of an import's `weights` (the .safetensors file the script loads, base64);
    None where not given. Its length is checked before it is decoded (the body's own limit
    bounds it too); what the file holds is checked where the script is read."""
    if text is None:
        return None
    from ..graph.importing.weights_file import MAX_WEIGHTS_BYTES

    if not isinstance(text, str) or len(text) > (MAX_WEIGHTS_BYTES + 2) // 3 * 4:
        raise ApiError("weights must be the .safetensors file as base64")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError("weights must be the .safetensors file as base64") from None


@api.post("/import")
def import_code():
    from .import_worker import ImportBusy, read_script

    data = _json_body()
    code = data.get("code") if isinstance(data, dict) else None
    if not isinstance(code, str):
        raise ApiError('expected {"code": "..."}')
    weights = _weights_field(data.get("weights"))
    settings = current_app.config["WIREGRAD"]
    try:
        # parsed with ast, never executed; in a child process within its own time and memory
        # budget, so that no script can hold this process's GIL (import_worker)
        outcome = read_script(
            code,
            settings.limits.max_import_seconds,
            settings.max_import_bytes,
            settings.max_imports,
            weights,
        )
    except ImportBusy as busy:
        raise ApiError(str(busy), 503, code="busy", retry_after=busy.retry_after) from None
    if outcome[0] == "failed":
        # with the document of the lines that could be read, where it is a valid one: the
        # page offers to open it (the rest of the script still imports)
        _, problems, partial = outcome
        raise ApiError(
            "the script has lines that cannot be imported", problems=problems, document=partial
        )
    return jsonify(outcome[1])
