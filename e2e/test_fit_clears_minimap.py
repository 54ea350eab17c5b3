"""The fit view leaves the minimap's corner free (issue 34): the minimap is drawn over the
canvas's bottom right, and a graph fitted whole could have a node under it (lenet-digits' loss
did: a layered layout's last nodes sit at the right, the bottom row of a wrapped one too).
Every template, on a laptop's page and a smaller one, fitted: no node's box meets the
minimap's box, measured in the page, wherever the fit put it (the top right where the bottom
right would cover a node; under both, the graph fitted beside or above it)."""

import pytest
import requests
from editor import open_editor
from playwright.sync_api import expect

MEASURED = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const map = document.querySelector('.react-flow__minimap');
  const zoom = new DOMMatrixReadOnly(
    getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
  return {zoom, map: map && box(map), pane: box(document.querySelector('.react-flow')),
          nodes: [...document.querySelectorAll('.react-flow__node')].map((n) =>
            ({id: n.getAttribute('data-id'), ...box(n)}))};
}"""


def meets(a, b):
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and (a["top"] < b["bottom"] and b["top"] < a["bottom"])
    )


@pytest.mark.parametrize("size", [(1500, 950), (1280, 720)])
def test_the_fit_view_leaves_the_minimaps_corner_free(page, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    templates = requests.get(f"{page.server.url}/api/templates", timeout=30).json()["templates"]
    ids = sorted(t["id"] for t in templates)
    assert len(ids) >= 20, ids
    fitted_whole = 0
    for template in ids:
        open_editor(page, template)
        if page.get_by_role("button", name="close lesson").count():
            page.get_by_role("button", name="close lesson").click()
        page.get_by_role("button", name="Fit view", exact=True).click()
        page.wait_for_timeout(350)  # (the fit's animation: 200 ms)
        m = page.evaluate(MEASURED)
        assert m["map"] and m["nodes"], (template, m)
        inside = all(
            n["left"] >= m["pane"]["left"] - 1
            and n["right"] <= m["pane"]["right"] + 1
            and n["top"] >= m["pane"]["top"] - 1
            and n["bottom"] <= m["pane"]["bottom"] + 1
            for n in m["nodes"]
        )
        if not inside:  # too big to read whole: shown from its start, the rest a pan away
            continue
        fitted_whole += 1
        under = [n["id"] for n in m["nodes"] if meets(n, m["map"])]
        assert not under, (template, size, under, m["map"], m["zoom"])
        if template == "lenet-digits":  # its loss lay under the minimap
            page.screenshot(path=f"e2e/artifacts/fit-clears-minimap-lenet-{size[0]}.png")
    assert fitted_whole >= 20, fitted_whole


def test_a_small_canvas_has_no_minimap(page):
    """A canvas smaller than 600 x 400 px (a narrow window, a notebook's widget) has no room for
    the minimap's 200 x 150 over its nodes: it is not drawn, and comes back when the window
    grows."""
    page.set_viewport_size({"width": 980, "height": 560})
    open_editor(page, "mlp-xor")
    pane = page.locator(".react-flow").bounding_box()
    assert pane["width"] < 600 or pane["height"] < 400, pane
    expect(page.get_by_label("minimap")).to_have_count(0)
    page.set_viewport_size({"width": 1400, "height": 900})
    expect(page.get_by_label("minimap")).to_have_count(1)
    pane = page.locator(".react-flow").bounding_box()
    assert pane["width"] >= 600 and pane["height"] >= 400, pane
