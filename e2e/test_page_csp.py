"""The editor works under the server's Content-Security-Policy (backend/server/security_headers.py):
scripts and styles only from its own origin, no inline style or script, the Socket.IO
websocket to its own host. Loading it, building a node, a backward run (the websocket), the
autograd view (elkjs's layout) and a training (the uPlot chart) report no violation, neither
as a `securitypolicyviolation` event nor as Chromium's console error."""

from editor import drag_op, open_editor, run_backward
from playwright.sync_api import expect

# every violation the page sees, recorded from the first script on
RECORD = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  `${e.effectiveDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`));
"""


def test_the_editor_runs_and_trains_under_its_policy(page):
    refused = []
    page.on(
        "console",
        lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.add_init_script(RECORD)
    sockets = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    answer = page.goto(page.server.url + "/?template=mlp-xor")
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self';" in policy
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-frame-options"] == "DENY"
    open_editor(page, "mlp-xor")

    drag_op(page, "tensor", 300, 600)  # an edit: React Flow draws a new node
    run_backward(page)  # over the websocket
    page.get_by_role("tab", name="autograd graph").click()
    autograd = page.get_by_role("region", name="autograd graph")
    expect(autograd.locator(".ag-node").first).to_be_visible()

    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=60_000
    )
    expect(panel.get_by_role("img", name="loss chart")).to_be_visible()

    assert any("/socket.io/" in url and "transport=websocket" in url for url in sockets), sockets
    assert page.evaluate("() => window.__csp") == []
    assert refused == []
