"""The security headers every response carries: the page, its assets, the API, errors, 404s,
413s, the Host check's 403s and Socket.IO's long-polling answers alike.

A WSGI middleware rather than Flask's after_request: Flask-SocketIO puts Engine.IO's WSGI app
in front of Flask, so Socket.IO's HTTP answers never pass through Flask's hooks, and the Host
check (auth.HostCheck) answers before Flask too. This wrapper is outermost (app.py), so no
answer leaves without the headers. docs/deployment.md lists each one and why.
"""

import re

# The page is the built editor: its scripts and styles are files served from this origin
# (Vite emits no inline script or <style>). React, React Flow and uPlot set element styles
# through the CSSOM (`el.style.left = ...`), which CSP does not govern, so style-src needs no
# 'unsafe-inline' either (checked in Chromium: e2e/test_security_headers.py, and every e2e
# test fails on a CSP violation, e2e/conftest.py). elkjs runs its "worker" in the page, so no
# worker-src or blob: script is needed.
_POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)

# The Socket.IO client's websocket goes to the page's own host. CSP Level 3 counts ws:/wss: of
# the page's origin as 'self', but Safari does not, so the host is named; only a Host header
# that is a plain name or address with a port is written into the policy (HostCheck has vetted
# the name, not the rest of the header), otherwise 'self' stands alone.
_PLAIN_HOST = re.compile(r"^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$")

# Referrer-Policy: the page's URLs carry secrets (?token=, ?share=) that must not leak to any
# other site in a Referer header. X-Frame-Options is frame-ancestors for older browsers.
FIXED_HEADERS = (
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
)
NAMES = {name.lower() for name, _ in FIXED_HEADERS} | {"content-security-policy"}


def content_security_policy(host_header=""):
    """The policy for a request that came with `host_header` (its Host)."""
    connect = "connect-src 'self'"
    if _PLAIN_HOST.match(host_header or ""):
        connect += f" ws://{host_header} wss://{host_header}"
    return "; ".join(_POLICY + (connect,))


class SecurityHeaders:
    """WSGI middleware: adds the headers above to every response, replacing any the app set."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        added = list(FIXED_HEADERS) + [
            ("Content-Security-Policy", content_security_policy(environ.get("HTTP_HOST", "")))
        ]

        def with_headers(status, headers, exc_info=None):
            kept = [(k, v) for k, v in headers if k.lower() not in NAMES]
            return start_response(status, kept + added, exc_info)

        return self.wsgi_app(environ, with_headers)
