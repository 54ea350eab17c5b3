"""Overlays (issue 34): after Backward on `lenet-digits`, More ▸ Overlay… colours the graph by
gradient norm, with a legend and the ten worst nodes and edges sorted by it; clicking the first
selects that node. On a graph whose log meets a negative number, the value-range overlay puts
the NaN first and draws it in the alarm colour. Dead ReLUs count the zeros of `mlp-mse`'s
relu, checked against the engine's own forward run of the template."""

import json
import re

import numpy as np
from editor import open_editor, run_backward, run_forward
from playwright.sync_api import expect

from backend.graph.document.templates import load_template
from backend.graph.running.executor import run_records

BAD_COLOUR = "rgb(192, 38, 211)"  # overlayScores.ts BAD_COLOUR


def open_overlay(page):
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Overlay…").click()
    panel = page.get_by_role("region", name="overlay")
    expect(panel).to_be_visible()
    return panel


def close_lesson(page):
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()


def worst_values(panel):
    return (
        panel.get_by_role("list", name="worst 10")
        .get_by_role("button")
        .evaluate_all("els => els.map(e => e.dataset.overlayValue)")
    )


def test_gradient_norm_overlay_on_lenet(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    close_lesson(page)
    run_backward(page)
    panel = open_overlay(page)
    panel.get_by_label("overlay statistic").select_option(label="gradient norm")
    legend = panel.get_by_label("overlay legend")
    expect(legend).to_contain_text("‖∇‖₂")
    expect(legend).to_contain_text("log scale")
    entries = panel.get_by_role("list", name="worst 10").get_by_role("listitem")
    expect(entries).to_have_count(10)
    values = [float(v) for v in worst_values(panel)]
    assert values == sorted(values, reverse=True) and values[0] > 0, values
    # the canvas is coloured: nodes outlined and wires stroked in the overlay's colours
    assert page.locator(".op-node.overlay-on").count() > 3
    assert page.locator(".react-flow__edge-path.wire.overlay-on").count() > 3
    page.screenshot(path="e2e/artifacts/overlay-grad-lenet.png")

    # the first entry that is a node: clicking it selects that node
    items = entries.all()
    first_node = next(i for i in items if "→" not in i.inner_text())
    name = first_node.locator(".overlay-name").inner_text()
    first_node.get_by_role("button").click()
    heading = page.get_by_label("inspector").get_by_role("heading", level=2)
    expect(heading).to_contain_text(name)
    expect(page.locator(".react-flow__node.selected")).to_have_count(1)
    # and the view is centred on it (after the short pan)
    page.wait_for_timeout(600)
    canvas = page.get_by_label("graph canvas").bounding_box()
    node = page.locator(".react-flow__node.selected").bounding_box()
    dx = node["x"] + node["width"] / 2 - (canvas["x"] + canvas["width"] / 2)
    dy = node["y"] + node["height"] / 2 - (canvas["y"] + canvas["height"] / 2)
    assert abs(dx) < 0.1 * canvas["width"] and abs(dy) < 0.1 * canvas["height"], (dx, dy)
    page.screenshot(path="e2e/artifacts/overlay-grad-lenet-selected.png")

    # closing it gives the usual colours back
    panel.get_by_role("button", name="close the overlay").click()
    expect(panel).to_be_hidden()
    expect(page.locator(".overlay-on")).to_have_count(0)


NAN_GRAPH = {
    "format": "wiregrad.graph",
    "version": 1,
    "name": "log of a negative",
    "target": "s",
    "nodes": [
        {
            "id": "x",
            "op": "tensor",
            "params": {"value": [-1.0, 2.0, 3.0], "requires_grad": True, "name": "x"},
            "position": {"x": 0, "y": 0},
        },
        {"id": "lg", "op": "log", "params": {}, "position": {"x": 240, "y": 0}},
        {"id": "s", "op": "sum", "params": {}, "position": {"x": 480, "y": 0}},
    ],
    "edges": [
        {"id": "x-lg", "source": "x", "sourcePort": "out", "target": "lg", "targetPort": "input"},
        {"id": "lg-s", "source": "lg", "sourcePort": "out", "target": "s", "targetPort": "input"},
    ],
}


def test_nan_overlay_on_log_of_a_negative(page, tmp_path):
    page.set_viewport_size({"width": 1024, "height": 768})
    open_editor(page)
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(NAN_GRAPH))
    page.get_by_label("upload a graph document").set_input_files(str(path))
    expect(page.get_by_test_id("node-lg")).to_be_visible()
    run_forward(page)
    panel = open_overlay(page)
    panel.get_by_label("overlay statistic").select_option(label="value range / NaN-Inf")
    entries = panel.get_by_role("list", name="worst 10").get_by_role("listitem")
    expect(entries).to_have_count(3)
    # log(-1) is NaN, and the sum of it too: both first, then x's range
    texts = [e.inner_text() for e in entries.all()]
    assert "1 NaN" in texts[0] and "1 NaN" in texts[1], texts
    assert "[-1, 3]" in texts[2], texts
    expect(panel.get_by_label("overlay legend")).to_contain_text("holds NaN or Inf")
    outline = page.get_by_test_id("node-lg").evaluate("el => getComputedStyle(el).outlineColor")
    assert outline == BAD_COLOUR, outline
    page.screenshot(path="e2e/artifacts/overlay-nan.png")


def expected_relu_share(template, node):
    """The share of zeros in `node`'s value, from the engine's own forward run."""
    _, records = run_records(load_template(template), "forward")
    (value,) = [r["summary"] for r in records if r.get("kind") == "value" and r.get("node") == node]
    xs = np.asarray(value["preview"], dtype=float)
    return float((xs == 0).mean())


def test_dead_relu_overlay_counts_zeros(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "mlp-mse")
    close_lesson(page)
    run_backward(page)
    panel = open_overlay(page)
    panel.get_by_label("overlay statistic").select_option(label="dead ReLUs")
    entries = panel.get_by_role("list", name="worst 10").get_by_role("listitem")
    expect(entries).to_have_count(1)  # the template's one relu
    # the relu node "activation", named h on the canvas
    expect(entries.first.locator(".overlay-name")).to_have_text("h")
    share = float(worst_values(panel)[0])
    expected = expected_relu_share("mlp-mse", "activation")
    assert 0 < expected < 1
    assert abs(share - expected) < 1e-12, (share, expected)
    expect(entries.first).to_contain_text(f"{expected * 100:.1f}% zeros")
    legend = panel.get_by_label("overlay legend")
    expect(legend).to_contain_text("0%")
    expect(legend).to_contain_text("100%")
    page.screenshot(path="e2e/artifacts/overlay-dead-relu.png")


def test_update_size_overlay_after_training_lenet(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    close_lesson(page)
    page.get_by_role("tab", name="training").click()
    training = page.get_by_role("region", name="training")
    training.get_by_role("button", name="Train", exact=True).click()
    expect(training.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=90_000
    )
    panel = open_overlay(page)
    panel.get_by_label("overlay statistic").select_option(label="update size |Δw|/|w|")
    legend = panel.get_by_label("overlay legend")
    # between the training's last two snapshots; the layers whose snapshots carry every
    # element (up to 1,024) are scored, the others said to be unknown
    expect(legend).to_contain_text(re.compile(r"steps \d+ → \d+"))
    expect(legend).to_contain_text("over 1,024 elements not known")
    entries = panel.get_by_role("list", name="worst 10").get_by_role("listitem")
    expect(entries.first).to_be_visible()
    names = [e.locator(".overlay-name").inner_text() for e in entries.all()]
    assert "conv1" in names, names
    values = [float(v) for v in worst_values(panel)]
    assert values == sorted(values, reverse=True) and all(0 < v < 1 for v in values), values
    page.screenshot(path="e2e/artifacts/overlay-update-lenet.png")
