"""Tensors of images drawn as images: scikit-learn's digits feed a node; the edge out of it,
opened in the tensor viewer, is a grid of small maps (a row per sample, a column per channel),
values on a sequential scale and the gradient on a diverging one, paged through by samples."""

from pathlib import Path

import requests
from editor import (
    click_wire,
    drag_op,
    open_editor,
    run_backward,
    run_forward,
    select_node,
    set_param,
)
from playwright.sync_api import expect

SHOTS = Path(__file__).resolve().parent / "artifacts"  # beside conftest's own screenshots

DOC = {
    "format": "wiregrad.graph",
    "version": 1,
    "name": "digits as images",
    "nodes": [
        {"id": "data", "op": "dataset", "params": {"kind": "digits", "n": 40, "seed": 0}},
        {"id": "y", "op": "labels", "params": {}},
        # three channels: each digit times a mask of (1, 3, 8, 8), broadcast over the batch
        {
            "id": "mask",
            "op": "parameter",
            "params": {"shape": [1, 3, 8, 8], "init": "randn", "seed": 1},
        },
        {"id": "m", "op": "mul", "params": {}},
        {"id": "f", "op": "flatten", "params": {"start_dim": 1}},
        {"id": "fc", "op": "linear", "params": {"out_features": 10, "seed": 2}},
        {"id": "loss", "op": "cross_entropy", "params": {}},
    ],
    "edges": [
        {"id": "d-m", "source": "data", "target": "m", "targetPort": "input"},
        {"id": "k-m", "source": "mask", "target": "m", "targetPort": "other"},
        {"id": "m-f", "source": "m", "target": "f", "targetPort": "input"},
        {"id": "f-fc", "source": "f", "target": "fc", "targetPort": "input"},
        {"id": "fc-l", "source": "fc", "target": "loss", "targetPort": "input"},
        {"id": "d-y", "source": "data", "target": "y", "targetPort": "dataset"},
        {"id": "y-l", "source": "y", "target": "loss", "targetPort": "target"},
    ],
    "target": "loss",
}

# the distinct colours a canvas holds (its pixels read back from the page)
COLOURS = """canvas => {
  const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
  const seen = new Set();
  for (let k = 0; k < data.length; k += 4) seen.add(`${data[k]},${data[k + 1]},${data[k + 2]}`);
  return [...seen];
}"""


def open_edge_tensor(page, edge, which):
    """Select the wire, then 'view value' / 'view gradient' in its chain-rule panel."""
    page.get_by_role("tab", name="chain rule").click()
    click_wire(page, edge)
    panel = page.get_by_role("region", name="chain rule")
    panel.get_by_role("button", name=f"view {which}", exact=True).click()
    return page.get_by_role("region", name="tensor viewer")


def test_digits_on_an_edge_are_drawn_as_a_grid_of_maps(page):
    saved = requests.post(page.server.url + "/api/graphs", json=DOC, timeout=10)
    assert saved.status_code == 201, saved.text
    page.goto(f"{page.server.url}/?graph={saved.json()['id']}")
    expect(page.get_by_label("graph name")).to_contain_text("digits as images")
    run_backward(page)

    viewer = open_edge_tensor(page, "m-f", "value")
    expect(viewer.get_by_role("heading", level=2)).to_have_text(
        "value of m"
    )  # the edge's producer's
    # a 4-D batch of 8x8 maps opens as images: 16 samples of 3 channels on the first page
    expect(viewer.get_by_role("button", name="images")).to_have_attribute("aria-pressed", "true")
    grid = viewer.get_by_role("figure", name="images")
    expect(grid).to_contain_text("samples 0–15 of 40 · channels 0–2 of 3 · 8×8")
    maps = grid.get_by_role("img", name="sample")
    expect(maps).to_have_count(48)
    first = grid.get_by_role("img", name="sample 0, channel 0", exact=True)
    assert first.evaluate("c => [c.width, c.height]") == [8, 8]
    assert first.bounding_box()["width"] >= 40  # scaled up: 6 px an element
    # the digit is drawn: its ink and its background differ (many colours, not one)
    assert len(first.evaluate(COLOURS)) > 4
    for k in (1, 2):
        assert len(grid.get_by_role("img", name=f"sample 5, channel {k}").evaluate(COLOURS)) > 4
    legend = grid.get_by_label("colour scale from")
    expect(legend).to_contain_text("value")
    first.hover()
    expect(grid.locator(".tv-hover")).to_contain_text("sample 0, channel 0, [")
    viewer.screenshot(path=str(SHOTS / "image-grid-values.png"))

    # paging: the next samples, the last page shorter
    grid.get_by_role("button", name="next samples").click()
    expect(grid).to_contain_text("samples 16–31 of 40")
    grid.get_by_role("button", name="next samples").click()
    expect(grid).to_contain_text("samples 32–39 of 40")
    expect(maps).to_have_count(24)
    expect(grid.get_by_role("button", name="next samples")).to_be_disabled()

    # the first slice is still there, one click away
    viewer.get_by_role("button", name="first slice").click()
    expect(viewer.get_by_role("img", name="heatmap 8×8")).to_be_visible()
    viewer.get_by_role("button", name="images").click()
    expect(maps).to_have_count(48)

    # the gradient the loss sends back along the edge: white at 0, blue and red around it
    viewer = open_edge_tensor(page, "m-f", "gradient")
    expect(viewer.get_by_role("heading", level=2)).to_have_text("gradient on edge m-f")
    grid = viewer.get_by_role("figure", name="images")
    expect(grid.get_by_role("img", name="sample")).to_have_count(48)
    expect(grid.get_by_label("colour scale from")).to_contain_text("blue negative, white 0")
    colours = set()
    for k in range(3):
        colours |= set(grid.get_by_role("img", name=f"sample 0, channel {k}").evaluate(COLOURS))
    reds = [c for c in colours if int(c.split(",")[0]) > int(c.split(",")[2])]
    blues = [c for c in colours if int(c.split(",")[0]) < int(c.split(",")[2])]
    assert reds and blues, colours  # both signs are drawn, on one scale centred on 0
    viewer.screenshot(path=str(SHOTS / "image-grid-gradients.png"))

    # the digits themselves, from the dataset node's inspector: one channel, 16 to a page
    page.keyboard.press("Escape")
    select_node(page, "data")
    page.get_by_label("inspector").get_by_role("button", name="view value").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    expect(viewer.get_by_role("heading", level=2)).to_have_text("value of data")
    grid = viewer.get_by_role("figure", name="images")
    expect(grid).to_contain_text("samples 0–15 of 40 · 1 channel · 8×8")
    expect(grid.get_by_role("img", name="sample")).to_have_count(16)
    expect(grid.get_by_label("colour scale from 0 to 1")).to_be_visible()  # scaled to [0, 1]
    viewer.screenshot(path=str(SHOTS / "image-grid-digits.png"))
    page.screenshot(path=str(SHOTS / "image-grid-page.png"))


def test_a_dataset_node_made_digits_in_the_inspector(page):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    data = drag_op(page, "dataset", 250, 200)
    inspector = page.get_by_label("inspector")
    inspector.get_by_label("kind", exact=True).select_option("digits")
    # what digits do not use is not offered: noise, the labels choice, the CSV fields
    expect(inspector.get_by_label("noise", exact=True)).to_have_count(0)
    expect(inspector.get_by_label("csv", exact=True)).to_have_count(0)
    set_param(page, "n", "100")
    run_forward(page)
    expect(inspector.locator(".inspector-result")).to_contain_text("100×1×8×8 float32")
    inspector.get_by_role("button", name="view value").click()
    grid = page.get_by_role("region", name="tensor viewer").get_by_role("figure", name="images")
    expect(grid).to_contain_text("samples 0–15 of 100 · 1 channel · 8×8")
    assert len(grid.get_by_role("img", name="sample 3, channel 0").evaluate(COLOURS)) > 4
    # over the 1,797 images scikit-learn has: said at the field
    set_param(page, "n", "5000")
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_test_id(f"node-{data}").get_by_role("alert")).to_contain_text(
        "digits has 1,797 images: n must be at most 1,797"
    )
