"""w.export_html: one file that opens in Chromium from a file:// URL with the network cut off
and shows the graph with its last run's values and gradients."""

from pathlib import Path

import torch
from playwright.sync_api import expect
from torch import nn

import wiregrad as wg

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def test_exported_html_opens_offline_with_its_last_run(tmp_path, browser):
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -2.0]]))
        model.bias.fill_(0.25)
    w = wg.show(lambda x: model(x).sum(), torch.tensor([1.0, 3.0]), data_dir=tmp_path / "data")
    w.send = lambda *a, **k: None  # no page in this test: the kernel's side alone
    out = w.run("backward")
    assert out.loss == -5.25
    path = w.export_html(tmp_path / "graph.html")
    assert path.stat().st_size < 6_000_000

    # (the session's browser: a second sync_playwright in one worker is refused)
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 800})
    requested = []
    context.on("request", lambda r: requested.append(r.url))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(path.as_uri())
        expect(page.locator(".app.ready")).to_be_visible(timeout=20_000)
        expect(page.locator(".react-flow__node")).to_have_count(3)
        # the last run, played back: the loss and the layer's weight gradient
        expect(page.get_by_test_id("value-sum")).to_have_text("-5.25")
        expect(page.get_by_label("run status")).to_have_attribute("data-status", "ok")
        # a view: nothing to run it with, and nothing says it is trying to connect
        forward = page.get_by_role("button", name="Forward", exact=True)
        expect(forward).to_have_count(0)  # (a follower's toolbar has no run buttons)
        expect(page.get_by_role("alert").filter(has_text="Connecting")).to_have_count(0)
        assert not errors, errors
        # nothing was fetched from anywhere but the file (and the page's own blob)
        assert all(u.startswith(("file:", "blob:", "data:")) for u in requested), requested
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook_html.png"))
        context.close()
