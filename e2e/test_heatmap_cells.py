"""The tensor viewer's heatmap keeps its cells square and big enough to see: a 300 x 8 value is
a column of 12-px cells that scrolls, not a 5-px strip (panels/analysis/heatmapLayout.ts)."""

import os
from pathlib import Path

import requests
from editor import run_forward, select_node
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def test_a_tall_thin_tensor_has_visible_square_cells_and_scrolls(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    doc = {
        "format": "wiregrad.graph",
        "version": 1,
        "name": "tall thin",
        "nodes": [
            {"id": "x", "op": "tensor", "params": {"shape": [300, 8], "init": "randn"}},
            {"id": "y", "op": "neg", "params": {}},
        ],
        "edges": [{"id": "e", "source": "x", "target": "y", "targetPort": "input"}],
    }
    saved = requests.post(page.server.url + "/api/graphs", json=doc, timeout=10)
    assert saved.status_code == 201, saved.text
    page.goto(f"{page.server.url}/?graph={saved.json()['id']}")
    expect(page.get_by_label("graph name")).to_contain_text("tall thin")
    run_forward(page)
    select_node(page, "y")
    page.get_by_role("button", name="view value").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    heat = viewer.get_by_role("img", name="heatmap 300×8")
    expect(heat).to_be_visible()
    box = heat.bounding_box()
    cell_w, cell_h = box["width"] / 8, box["height"] / 300
    assert cell_w >= 10 and abs(cell_w - cell_h) < 0.5, (cell_w, cell_h)
    # taller than the panel: its box scrolls, and scrolling shows the last rows
    scroller = viewer.get_by_label("heatmap 300×8, scrollable")
    dims = scroller.evaluate("el => [el.scrollHeight, el.clientHeight]")
    assert dims[0] > dims[1] + 1000, dims
    scroller.hover()
    page.mouse.wheel(0, 5000)
    page.wait_for_function(
        "el => el.scrollTop + el.clientHeight >= el.scrollHeight - 1", arg=scroller.element_handle()
    )
    # pointing at a cell near the end reads its index and value
    sbox = scroller.bounding_box()
    page.mouse.move(sbox["x"] + cell_w * 2.5, sbox["y"] + sbox["height"] - cell_h * 0.5 - 2)
    readout = viewer.locator(".tv-hover")
    expect(readout).to_contain_text("[299, 2] = ")
    # the readout and the panel's tabs stay in the panel: only the cells' box scrolled
    panel = page.locator(".analysis").bounding_box()
    rb = readout.bounding_box()
    assert rb["y"] + rb["height"] <= panel["y"] + panel["height"], (rb, panel)
    assert page.locator(".analysis").evaluate("el => el.scrollTop") == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "heatmap-300x8.png"))
