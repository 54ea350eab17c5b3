"""wg.show in a real JupyterLab (from PyPI, started on a free loopback port with a token),
driven as a person would in Debian's Chromium: run a cell that traces a model and shows it,
see the graph, click Backward and read a gradient on a wire, change an input on the canvas,
then run a cell that prints what `w.document` holds now and `w.run("backward")`'s new loss."""

import re
import time
from pathlib import Path

import pytest
from harness import Jupyter, notebook_file, run_cell, run_first_cell
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

SETUP = """\
import torch, torch.nn as nn
import wiregrad as wg
model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -2.0]]))
    model.bias.fill_(0.25)
w = wg.show(lambda x: model(x).sum(), torch.tensor([2.0, 1.0], requires_grad=True), height=520)
w"""

AFTER_EDIT = """\
x = next(n for n in w.document["nodes"] if n["id"] == "x")
print("X", json.dumps(x["params"]["value"]))
print("LOSS", w.run("backward").loss)"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not (ROOT / "wiregrad" / "static" / "widget.js").is_file():
        pytest.fail("wiregrad/static/widget.js is missing: `make test` builds it (make widget)")
    root = tmp_path_factory.mktemp("lab")
    notebook_file(root / "widget.ipynb", ["import json", SETUP, AFTER_EDIT])
    server = Jupyter(root, "jupyterlab")
    yield server.url("widget.ipynb")
    server.stop()


def test_the_editor_in_jupyterlab(lab, browser):
    # (the session's browser: a second sync_playwright in one worker is refused)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(lab)
        expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(3, timeout=60_000)
        # a cell run before the kernel is connected is dropped: wait for it to be idle
        expect(page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle"))).to_be_visible(
            timeout=60_000
        )
        # the kernel is up when the first cell has run
        run_first_cell(page)
        cell = run_cell(page, 1)
        widget = cell.locator(".jp-OutputArea-output")
        # the editor, in the cell's output: its canvas and the traced graph's nodes
        expect(widget.locator(".app.ready")).to_be_visible(timeout=60_000)
        nodes = widget.locator(".react-flow__node")
        expect(nodes).to_have_count(3)
        ids = sorted(nodes.evaluate_all("els => els.map(e => e.getAttribute('data-id'))"))
        assert ids == ["model", "sum", "x"]

        # Backward on the canvas: the gradient of the loss on the wire x -> model (e1) is
        # the layer's weight row, [0.5, -2]; wires carry labels once zoomed in
        status = widget.get_by_label("run status")
        widget.get_by_role("button", name="Backward", exact=True).click()
        expect(status).to_have_attribute("data-status", "ok")
        canvas = widget.get_by_label("graph canvas")
        for _ in range(8):
            if widget.locator(".canvas.lod-full").count():
                break
            canvas.get_by_role("button", name="zoom in").click()
            page.wait_for_timeout(250)
        grad = widget.get_by_test_id("edge-grad-e1")
        expect(grad).to_have_text(re.compile(r"\[0\.5,\s*-2\]"))

        # change the input on the canvas, then read it and the new loss from Python
        widget.get_by_test_id("node-x").locator(".op-node-title").click()
        field = widget.get_by_label("inspector").get_by_label("value", exact=True)
        # typed key by key: in command mode JupyterLab takes `1` and `3` for "make this cell a
        # heading" if the keys reach it (widget.tsx keeps them in the editor)
        field.click()
        page.keyboard.press("Control+a")
        page.keyboard.type("[1, 3]")
        expect(field).to_have_value("[1, 3]")
        field.press("Enter")
        expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(3)
        time.sleep(0.5)  # (the edit reaches the kernel 150 ms after it is made)
        after = run_cell(page, 2)
        out = after.locator(".jp-OutputArea-output")
        # 0.5 * 1 - 2 * 3 + 0.25
        expect(out).to_contain_text("LOSS -5.25", timeout=30_000)
        expect(out).to_contain_text("X [1, 3]")
        # the run from Python shows on the canvas too: the loss node's new value
        expect(widget.get_by_test_id("value-sum")).to_have_text("-5.25")
        assert not errors, errors
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook_widget.png"))
        context.close()
