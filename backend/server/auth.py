"""Who may do what: the Host check, the teacher token, graph owners and share links.

Served on loopback (the default) the server is one person's: everyone who reaches it may do
everything, as before. Served beyond loopback (`--host 0.0.0.0`) it is a classroom's:

- the teacher holds a secret token (printed in a URL, as Jupyter does; `--token` or
  $WIREGRAD_TOKEN to choose it, so that several processes share one) and sees and manages
  every stored graph;
- every browser keeps a secret owner key (localStorage) and sends it with each API call
  (`X-Wiregrad-Owner`); a graph belongs to the key that created it, and only that key (or the
  teacher) lists it, saves it, restores and deletes it;
- anyone else opens a graph only through its share link (`?share=` beside the id), read-only,
  and forks it by saving a copy of their own.

The store keeps a SHA-256 of each owner key, never the key, so a copied database hands out no
credentials. A graph that is not yours answers 404, as a missing one does: ids are not a way to
probe the store.

The Host header is checked before any routing, for HTTP and the Socket.IO handshake alike: a
page on another name that resolves to this server (DNS rebinding) gets 403 and reads nothing.
"""

import hashlib
import hmac
import ipaddress
import re
import secrets
import socket

from flask import g, jsonify, request

OWNER_HEADER = "X-Wiregrad-Owner"
TOKEN_HEADER = "X-Wiregrad-Token"  # or Authorization: Bearer <token>
OWNER_KEY_RE = re.compile(r"^[A-Za-z0-9_-]{22,128}$")  # >= 128 bits as base64url
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost", "ip6-loopback"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})

# the API endpoints that read or change one stored graph, and what they need
_READS = {"api.get_graph", "api.revisions"}
_WRITES = {"api.save_graph", "api.delete_graph", "api.restore"}


def new_token():
    """A teacher token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def key_hash(key):
    return hashlib.sha256(key.encode()).hexdigest()


def is_loopback(host):
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header):
    """The name in a Host header, without its port, brackets or trailing dot, lower-cased."""
    header = (header or "").strip().lower()
    if header.startswith("["):  # [::1]:5000
        return header[1 : header.find("]")] if "]" in header else header
    if header.count(":") == 1:
        header = header.split(":", 1)[0]
    return header.rstrip(".")


def _is_ip(name):
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class HostCheck:
    """WSGI middleware in front of everything (Flask and Socket.IO): a request whose Host is
    not a name this server answers to gets 403. The names: the loopback names, the address it
    is bound to, `--allow-host` names; bound to every interface (0.0.0.0), also any IP address
    (an IP literal cannot be rebound: a page at http://10.0.0.5 is this server's own) and this
    machine's host names.

    Also where HTTP reads get their time limit: werkzeug's handler sets a timeout on every
    socket (Settings.request_timeout, against half-sent requests); a websocket that Engine.IO
    takes over is kept alive by its own pings instead, so its timeout is lifted here."""

    def __init__(self, wsgi_app, settings):
        self.wsgi_app = wsgi_app
        bound = host_name(settings.host)
        self.names = set(LOOPBACK_NAMES) | {host_name(h) for h in settings.allowed_hosts}
        self.any_ip = bound in WILDCARDS
        if self.any_ip:
            for name in (socket.gethostname(), socket.getfqdn()):
                self.names.add(name.lower())
        else:
            self.names.add(bound)

    def allowed(self, header):
        name = host_name(header)
        return bool(name) and (name in self.names or (self.any_ip and _is_ip(name)))

    def __call__(self, environ, start_response):
        header = environ.get("HTTP_HOST", "")
        if not self.allowed(header):
            body = (
                f"403: this server does not answer to the name {host_name(header)!r}; "
                "start it with --allow-host NAME to add it\n"
            ).encode()
            start_response(
                "403 FORBIDDEN",
                [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
            )
            return [body]
        if environ.get("HTTP_UPGRADE", "").lower() == "websocket":
            sock = environ.get("werkzeug.socket")
            if sock is not None:
                sock.settimeout(None)
        return self.wsgi_app(environ, start_response)


def origin_checker(settings):
    """Origins allowed for the API and Socket.IO: the page's own (the scheme and the Host it
    was served under, which HostCheck has vetted), the server's configured ones, and
    `--allow-origin` ones. A callable, as python-engineio's cors_allowed_origins accepts."""
    listed = set(settings.origins())

    def allowed(origin, environ=None):
        if origin in listed:
            return True
        if environ is None:
            return False
        own = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}"
        return origin == own

    return allowed


# -- per request: who is asking -------------------------------------------------------------------
class Access:
    """What the request proves: the teacher token (or loopback, where everyone is the teacher)
    and an owner key's hash."""

    def __init__(self, teacher, owner):
        self.teacher, self.owner = teacher, owner

    def may_write(self, graph_owner):
        return self.teacher or (self.owner is not None and graph_owner == self.owner)

    def may_read(self, graph_owner, share, given_share):
        if self.may_write(graph_owner):
            return True
        return bool(given_share) and share is not None and hmac.compare_digest(given_share, share)


class BadCredential(ValueError):
    pass


def request_access(settings):
    """The current request's Access (cached on flask.g)."""
    if "wiregrad_access" in g:
        return g.wiregrad_access
    key = request.headers.get(OWNER_HEADER)
    if key is not None and not OWNER_KEY_RE.match(key):
        raise BadCredential(
            f"the {OWNER_HEADER} header must be 22-128 letters, digits, _ or - (a random key "
            "the page makes and keeps)"
        )
    owner = key_hash(key) if key else None
    teacher = settings.teacher_token is None  # open: one person's server
    if not teacher:
        given = request.headers.get(TOKEN_HEADER) or ""
        auth = request.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        teacher = bool(given) and hmac.compare_digest(given, settings.teacher_token)
    g.wiregrad_access = Access(teacher, owner)
    return g.wiregrad_access


def install(app, settings, store):
    """The graph guard: before a stored-graph endpoint runs, check that the caller may read or
    change that graph. Listing and creating ask request_access themselves (api.py)."""

    @app.before_request
    def guard_graphs():
        endpoint = request.endpoint or ""
        if not endpoint.startswith("api."):
            return None
        try:
            access = request_access(settings)
        except BadCredential as exc:
            return jsonify({"error": str(exc)}), 400
        if endpoint == "api.create_graph" and not (access.teacher or access.owner):
            return jsonify(
                {"error": f"saving needs an owner key: send the {OWNER_HEADER} header"}
            ), 401
        if endpoint not in _READS and endpoint not in _WRITES:
            return None
        graph_id = (request.view_args or {}).get("graph_id")
        found = store.access(graph_id) if isinstance(graph_id, str) else None
        if found is None:
            return None  # the endpoint answers 404 (or 400 for a malformed id) itself
        graph_owner, share = found
        if access.may_write(graph_owner):
            return None
        if access.may_read(graph_owner, share, request.args.get("share")):
            if endpoint in _READS:
                return None
            return jsonify(
                {
                    "error": "this graph is shared with you read-only: save a copy of your "
                    "own (fork it) to change it",
                    "code": "read_only",
                }
            ), 403
        return jsonify({"error": f"not found: {graph_id}"}), 404


def listing_owner(settings):
    """Whose graphs GET /api/graphs lists: None for all (the teacher, or loopback), else the
    caller's owner hash ('' when it sent no key: nothing)."""
    access = request_access(settings)
    return None if access.teacher else (access.owner or "")


def creating_owner(settings):
    """The owner recorded for a graph being created: the caller's key hash (None when the
    teacher creates without a key)."""
    return request_access(settings).owner


def lan_address():
    """This machine's address on its default route, for the printed URLs (no packet is sent:
    connecting a UDP socket only picks the interface)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
    except OSError:
        return socket.gethostname()


def urls(settings):
    """(teacher URL, student URL) to print at start-up."""
    host = settings.host
    name = lan_address() if host_name(host) in WILDCARDS else host
    if ":" in name:
        name = f"[{name}]"
    base = f"http://{name}:{settings.port}/"
    if settings.teacher_token is None:
        return base, base
    return f"{base}?token={settings.teacher_token}", base
