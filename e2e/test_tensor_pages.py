"""The tensor viewer asks for what it shows: of a 600 x 1000 value, the first rows that fit in
one page, with the whole tensor's stats from the server (docs/protocol.md, "tensor")."""

import requests
from editor import run_forward, select_node
from playwright.sync_api import expect


def test_the_viewer_shows_a_page_of_a_big_tensor_with_the_whole_tensors_stats(page):
    doc = {
        "format": "wiregrad.graph",
        "version": 1,
        "name": "big value",
        "nodes": [
            {"id": "x", "op": "tensor", "params": {"shape": [600, 1000], "init": "arange"}},
            {"id": "y", "op": "neg", "params": {}},
        ],
        "edges": [{"id": "e", "source": "x", "target": "y", "targetPort": "input"}],
    }
    saved = requests.post(page.server.url + "/api/graphs", json=doc, timeout=10)
    assert saved.status_code == 201, saved.text
    page.goto(f"{page.server.url}/?graph={saved.json()['id']}")
    expect(page.get_by_label("graph name")).to_contain_text("big value")
    run_forward(page)
    select_node(page, "y")
    page.get_by_role("button", name="view value").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    # 262 rows of 1,000 are one page of 262,144 elements at most
    expect(viewer).to_contain_text("The first 262 of 600 rows.")
    expect(viewer.get_by_role("img", name="heatmap 262×1000")).to_be_visible()
    # the whole tensor's mean, -299,999.5 (the rows shown average -130,999.5)
    mean = viewer.locator(".tv-stat").filter(has_text="mean").locator("dd")
    expect(mean).to_have_text("-3e5")
