"""wg.show in a real marimo (from PyPI), served as an app by `marimo run` on a free loopback
port, driven as a person would in Debian's Chromium: open the notebook, see the traced graph
with its shapes (asked of the kernel before any run), click Backward in the widget and read
the gradient on a wire, equal to what the engine computes for the same graph."""

import re
from pathlib import Path

import pytest
import torch
from editor import zoom_to_labels
from harness import Marimo
from playwright.sync_api import expect

import wiregrad as wg

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# a marimo notebook: a .py file of cells, each a function of the names it uses
NOTEBOOK = """\
import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import marimo as mo
    import torch
    import torch.nn as nn
    import wiregrad as wg
    return mo, nn, torch, wg


@app.cell
def _(mo, nn, torch, wg):
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -2.0]]))
        model.bias.fill_(0.25)
    x = torch.tensor([2.0, 1.0], requires_grad=True)
    w = wg.show(lambda x: model(x).sum(), x, height=520)
    mo.ui.anywidget(w)
    return


if __name__ == "__main__":
    app.run()
"""


def engine_gradient_of_x():
    """The same graph traced here and run on the engine: d loss / d x, as a wire shows it."""
    model = torch.nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -2.0]]))
        model.bias.fill_(0.25)
    doc = wg.trace(lambda x: model(x).sum(), torch.tensor([2.0, 1.0], requires_grad=True))
    out = wg.run(doc, backward=True)
    assert out.status == "ok", out.error
    return out.grads["x"]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not (ROOT / "wiregrad" / "static" / "widget.js").is_file():
        pytest.fail("wiregrad/static/widget.js is missing: `make test` builds it (make widget)")
    root = tmp_path_factory.mktemp("marimo")
    (root / "widget_app.py").write_text(NOTEBOOK)
    server = Marimo(root / "widget_app.py")
    yield server.url
    server.stop()


def test_the_editor_in_marimo(app, browser):
    expected = engine_gradient_of_x()
    assert expected.tolist() == [0.5, -2.0]  # PyTorch's: the layer's weight row
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors, refused = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # every request the widget makes goes to the kernel, none to marimo's server (which
    # answers an /api path of ours with 401)
    page.on("response", lambda r: r.status >= 400 and refused.append(f"{r.status} {r.url}"))
    try:
        page.goto(app)
        # the editor, in the cell's output (marimo renders it in a shadow root)
        widget = page.locator(".app.ready")
        expect(widget).to_be_visible(timeout=60_000)
        nodes = widget.locator(".react-flow__node")
        expect(nodes).to_have_count(3)
        ids = sorted(nodes.evaluate_all("els => els.map(e => e.getAttribute('data-id'))"))
        assert ids == ["model", "sum", "x"]
        # the shapes before any run: the kernel's validation, over the widget's channel
        expect(widget.get_by_test_id("shape-model-out")).to_have_text(re.compile(r"^\s*1\s*$"))
        status = widget.get_by_label("run status")
        expect(status).not_to_have_attribute("data-status", "ok")

        widget.get_by_role("button", name="Backward", exact=True).click()
        expect(status).to_have_attribute("data-status", "ok", timeout=30_000)
        zoom_to_labels(page)  # (the page's one canvas: the widget's)
        grad = widget.get_by_test_id("edge-grad-e1")
        expect(grad).to_have_text(re.compile(r"\[0\.5,\s*-2\]"))
        shown = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", grad.inner_text())]
        assert shown == expected.tolist()
        # and on x's node, where it shows in the screenshot (the wire's label is short and
        # may lie under the run's notice)
        on_x = widget.get_by_test_id("grad-x")
        expect(on_x).to_be_visible()
        shown = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", on_x.inner_text())]
        assert shown == expected.tolist()
        # the loss on the canvas: 0.5 * 2 - 2 * 1 + 0.25
        expect(widget.get_by_test_id("value-sum")).to_have_text("-0.75")
        assert not errors, errors
        assert not refused, refused
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook_marimo.png"))
        context.close()
