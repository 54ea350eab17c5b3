"""Every answer carries the security headers (backend/server/security_headers.py): the page, its
assets, the placeholder page, the API and its errors (400, 404, 405, 413, 500), the Host
check's 403 and Socket.IO's long-polling answers, which pass through neither Flask's routing
nor its hooks."""

import pytest
import requests
from _server_helpers import graph, tensor

from backend.server import Settings, create_app
from backend.server.security_headers import content_security_policy
from conftest import start_server

EXPECTED = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}
DIRECTIVES = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
}


def assert_secured(r, host):
    for name, value in EXPECTED.items():
        assert r.headers.get(name) == value, (r.url, r.status_code, name, r.headers.get(name))
    policy = r.headers.get("Content-Security-Policy", "")
    directives = {d.strip() for d in policy.split(";")}
    assert directives >= DIRECTIVES, (r.url, r.status_code, policy)
    assert f"connect-src 'self' ws://{host} wss://{host}" in directives, policy
    assert "unsafe" not in policy


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server with a small built editor of its own (index.html and one asset) and a small
    body limit, so that a 413 is cheap."""
    dist = tmp_path_factory.mktemp("dist")
    (dist / "index.html").write_text('<!doctype html><script src="/assets/app.js"></script>')
    (dist / "assets").mkdir()
    (dist / "assets" / "app.js").write_text("console.log('hi')")
    return start_server(
        tmp_path_factory.mktemp("data"), frontend_dir=dist, max_message_bytes=64 * 1024
    )


def test_every_kind_of_answer_has_the_headers(site):
    host = f"127.0.0.1:{site.port}"
    gid = requests.post(site.api("/graphs"), json=graph([tensor("x", 1.0)]), timeout=10)
    assert gid.status_code == 201
    answers = [
        requests.get(f"{site.url}/", timeout=10),  # the page
        requests.get(f"{site.url}/some/editor/route", timeout=10),  # the page again
        requests.get(f"{site.url}/assets/app.js", timeout=10),  # a static asset
        requests.get(site.api("/health"), timeout=10),
        gid,
        requests.get(site.api(f"/graphs/{gid.json()['id']}"), timeout=10),
        requests.post(site.api("/validate"), data="{", timeout=10),  # 400
        requests.get(site.api("/graphs/nope"), timeout=10),  # 404 (a missing graph)
        requests.get(site.api("/no-such-endpoint"), timeout=10),  # 404 (routing)
        requests.delete(site.api("/health"), timeout=10),  # 405
        requests.post(site.api("/validate"), json={"pad": "x" * 100_000}, timeout=10),  # 413
        # Socket.IO's long-polling handshake, and one it refuses (a foreign origin)
        requests.get(f"{site.url}/socket.io/?EIO=4&transport=polling", timeout=10),
        requests.get(
            f"{site.url}/socket.io/?EIO=4&transport=polling",
            headers={"Origin": "http://evil.example"},
            timeout=10,
        ),
        requests.get(site.api("/graphs"), headers={"Origin": "http://evil.example"}, timeout=10),
    ]
    statuses = [r.status_code for r in answers]
    assert statuses == [200, 200, 200, 200, 201, 200, 400, 404, 404, 405, 413, 200, 400, 403]
    assert answers[0].headers["Content-Type"].startswith("text/html")
    assert answers[11].text.startswith("0{")  # an Engine.IO open packet
    for r in answers:
        assert_secured(r, host)


def test_the_host_checks_refusal_has_them(site):
    host = f"rebound.example:{site.port}"
    r = requests.get(site.api("/health"), headers={"Host": host}, timeout=10)
    assert r.status_code == 403
    assert_secured(r, host)


def test_the_placeholder_page_has_them(tmp_path):
    server = start_server(tmp_path / "data", frontend_dir=tmp_path / "no-build")
    r = requests.get(f"{server.url}/", timeout=10)
    assert r.status_code == 200 and "Wiregrad server" in r.text
    assert_secured(r, f"127.0.0.1:{server.port}")


def test_an_internal_error_has_them(tmp_path):
    """A 500 (a bug) goes through the same wrapper; the route is added for the test."""
    app, _ = create_app(Settings(data_dir=tmp_path))

    @app.get("/api/boom")
    def boom():
        raise RuntimeError("a bug")

    r = app.test_client().get("/api/boom", headers={"Host": "127.0.0.1:5000"})
    assert r.status_code == 500 and r.get_json() == {"error": "internal error"}
    for name, value in EXPECTED.items():
        assert r.headers[name] == value
    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]


def test_only_a_plain_host_is_written_into_the_policy():
    """The Host header's name is vetted by the Host check, the rest of it is not: anything but
    a name or address and a port leaves connect-src at 'self'."""
    assert "ws://[::1]:5000 wss://[::1]:5000" in content_security_policy("[::1]:5000")
    for bad in ("10.0.0.5:5000; script-src *", "a b", "", "x:1:2", "host\r\nX: y"):
        policy = content_security_policy(bad)
        assert policy.endswith("connect-src 'self'"), bad
        assert policy.count(";") == len(DIRECTIVES), bad
