"""wg.show in a real Jupyter Notebook 7 (the `notebook` package from PyPI, built of JupyterLab's
components; started on a free loopback port with a token), driven as a person would in
Debian's Chromium: run a cell that traces a model and shows it, see the graph fit the cell's
width, click Backward and read a gradient on a wire, type a new input into the inspector, then
run a cell that prints what `w.document` holds now and `w.run("backward")`'s new loss. The
numbers are checked against `wg.run` of the same model traced here.

Notebook 7 opens in command mode, where single letters are its shortcuts (`a` inserts a cell,
`1` makes a heading, `d d` deletes): keys typed in the widget must reach the widget only."""

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from harness import Jupyter, notebook_file, run_cell, run_first_cell
from playwright.sync_api import expect

import wiregrad as wg
from wiregrad.documents import to_dict

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# the model, built in the notebook's kernel and here alike
MODEL = """\
import torch, torch.nn as nn
import wiregrad as wg
model = nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5, -2.0]]))
    model.bias.fill_(0.25)
fn, x = lambda x: (model(x) ** 2).sum(), torch.tensor([2.0, 1.0], requires_grad=True)
"""
SETUP = MODEL + "w = wg.show(fn, x, height=520)\nw"
NEW_X = [1, 3]

AFTER_EDIT = """\
x = next(n for n in w.document["nodes"] if n["id"] == "x")
print("X", json.dumps(x["params"]["value"]))
print("LOSS", w.run("backward").loss)"""

NUMBER = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def notebooks_own(exc):
    """Notebook 7's own error on start, a race in its settings (jupyter/notebook issue 7862):
    it reads the shortcuts plugin's schema before that plugin is loaded, with or without any
    extension installed. Every frame of it is in Notebook 7's bundle."""
    frames = re.findall(r"\bat .*?(https?://\S+)", exc.stack or "")
    return (
        "reading 'schema'" in str(exc) and frames and all("/static/notebook/" in f for f in frames)
    )


def numbers(text):
    return np.array([float(v) for v in re.findall(NUMBER, text)])


@pytest.fixture(scope="module")
def reference():
    """The traced document, its backward run, and the run after x is set to NEW_X: what the
    canvas and the kernel must show."""
    space = {}
    exec(MODEL, space)
    doc = to_dict(wg.trace(space["fn"], space["x"]))
    edited = json.loads(json.dumps(doc))
    next(n for n in edited["nodes"] if n["id"] == "x")["params"]["value"] = NEW_X
    return doc, wg.run(doc, backward=True), wg.run(edited, backward=True)


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    if not (ROOT / "wiregrad" / "static" / "widget.js").is_file():
        pytest.fail("wiregrad/static/widget.js is missing: `make test` builds it (make widget)")
    root = tmp_path_factory.mktemp("nb7")
    notebook_file(root / "widget.ipynb", ["import json", SETUP, AFTER_EDIT])
    server = Jupyter(root, "notebook")
    yield server.url("widget.ipynb")
    server.stop()


def test_the_editor_in_notebook7(notebook7, reference, browser):
    doc, before, after_edit = reference
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on(
        "pageerror",
        lambda exc: None if notebooks_own(exc) else errors.append(f"{exc}\n{exc.stack}"),
    )
    cells = page.locator(".jp-Notebook .jp-Cell")
    try:
        page.goto(notebook7)
        expect(cells).to_have_count(3, timeout=60_000)
        # a cell run before the kernel is connected is dropped: wait for it to be idle
        expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]")).to_have_count(
            1, timeout=60_000
        )
        run_first_cell(page)
        cell = run_cell(page, 1)
        widget = cell.locator(".jp-OutputArea-output")
        expect(widget.locator(".app.ready")).to_be_visible(timeout=60_000)
        nodes = widget.locator(".react-flow__node")
        expect(nodes).to_have_count(len(doc["nodes"]))
        ids = sorted(nodes.evaluate_all("els => els.map(e => e.getAttribute('data-id'))"))
        assert ids == sorted(n["id"] for n in doc["nodes"])

        # the editor fits the cell: inside the output area, nothing of it cut off to the right
        out_box = widget.bounding_box()
        app_box = widget.locator(".app").bounding_box()
        assert app_box["x"] >= out_box["x"] - 1
        assert app_box["x"] + app_box["width"] <= out_box["x"] + out_box["width"] + 1
        assert app_box["x"] + app_box["width"] <= page.viewport_size["width"]
        wide = widget.locator(".app").evaluate("e => e.scrollWidth - e.clientWidth")
        assert wide <= 1, f"the editor is {wide} px wider than its cell"
        backward = widget.get_by_role("button", name="Backward", exact=True)
        b_box = backward.bounding_box()
        assert b_box["x"] + b_box["width"] <= app_box["x"] + app_box["width"]

        # keys on the canvas are the editor's, not the notebook's command mode: no cell added
        # (a, b), turned to Markdown (m) or deleted (d d)
        widget.locator(".react-flow__pane").click(position={"x": 20, "y": 20})
        for key in ["a", "b", "m", "d", "d"]:
            page.keyboard.press(key)
        page.wait_for_timeout(300)
        expect(cells).to_have_count(3)
        expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(3)
        # ... and reach the editor: Delete removes the picked node, Ctrl+Z brings it back
        widget.get_by_test_id("node-sum").locator(".op-node-title").click()
        page.keyboard.press("Delete")
        expect(nodes).to_have_count(len(doc["nodes"]) - 1)
        page.keyboard.press("Control+z")
        expect(nodes).to_have_count(len(doc["nodes"]))
        expect(cells).to_have_count(3)
        # x in the inspector, picked while the whole graph is in view
        widget.get_by_test_id("node-x").locator(".op-node-title").click()
        field = widget.get_by_label("inspector").get_by_label("value", exact=True)
        expect(field).to_have_value(re.compile(r"^\[2,\s*1\]$"))  # (MODEL's x)

        # Backward on the canvas: the gradient of the loss on the wire out of x, as wg.run
        # computes it here; wires carry labels once zoomed in
        status = widget.get_by_label("run status")
        backward.click()
        expect(status).to_have_attribute("data-status", "ok")
        canvas = widget.get_by_label("graph canvas")
        for _ in range(8):
            if widget.locator(".canvas.lod-full").count():
                break
            canvas.get_by_role("button", name="zoom in").click()
            page.wait_for_timeout(250)
        wire = next(e["id"] for e in doc["edges"] if e["source"] == "x")
        grad = widget.get_by_test_id(f"edge-grad-{wire}")
        expect(grad).to_have_text(re.compile(r"\[.*\]"))
        shown = numbers(grad.inner_text())
        assert np.allclose(shown, before.grads["x"], rtol=1e-3), (shown, before.grads["x"])

        # type the new input into the inspector, key by key: Notebook 7 would take `1` and
        # `3` for "make this cell a heading" if the keys reached it
        field.click()
        page.keyboard.press("Control+a")
        page.keyboard.type(json.dumps(NEW_X))
        expect(field).to_have_value(json.dumps(NEW_X))
        field.press("Enter")
        expect(cells).to_have_count(3)
        expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(3)
        time.sleep(0.5)  # (the edit reaches the kernel 150 ms after it is made)

        after = run_cell(page, 2)
        out = after.locator(".jp-OutputArea-output")
        expect(out).to_contain_text("LOSS", timeout=30_000)
        text = out.inner_text()
        assert f"X {json.dumps(NEW_X)}" in text, text
        loss = float(re.search(rf"LOSS ({NUMBER})", text).group(1))
        assert loss == pytest.approx(after_edit.loss, rel=1e-5), text
        assert after_edit.loss != pytest.approx(before.loss)  # (the edit changed the run)
        # the run from Python shows on the canvas too: the loss node's new value
        value = widget.get_by_test_id("value-sum")
        deadline = time.monotonic() + 15
        while not np.allclose(numbers(value.inner_text())[:1], after_edit.loss, rtol=1e-3):
            assert time.monotonic() < deadline, (value.inner_text(), after_edit.loss)
            page.wait_for_timeout(100)
        assert not errors, errors
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "notebook_jupyter7.png"))
        context.close()
