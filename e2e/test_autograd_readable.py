"""The autograd view is readable where it sits: a 10-node graph opens in its panel with text of
at least 11 px on screen, the output's grad_fn in view; it zooms, and pops out to full screen
(Escape brings it back)."""

import os
import re
from pathlib import Path

from editor import open_editor, run_backward
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _smallest_text_px(graph):
    """The smallest drawn text among the nodes: font size x the view's zoom."""
    return graph.evaluate(
        """(g) => {
          const t = getComputedStyle(g.querySelector('.react-flow__viewport')).transform;
          const zoom = new DOMMatrix(t).a;
          let px = Infinity;
          for (const el of g.querySelectorAll('.ag-name, .ag-line'))
            px = Math.min(px, parseFloat(getComputedStyle(el).fontSize) * zoom);
          return px; }"""
    )


def _inside(inner, outer):
    return (
        inner["x"] >= outer["x"] - 1
        and inner["y"] >= outer["y"] - 1
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )


def _shown(graph):
    """How many autograd nodes are wholly in view."""
    flow = graph.locator(".ag-flow").bounding_box()
    return sum(_inside(n.bounding_box(), flow) for n in graph.locator(".react-flow__node").all())


def test_the_autograd_view_opens_readable_zooms_and_pops_out(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_editor(page, "mlp-mse")
    run_backward(page)
    page.get_by_role("tab", name="autograd graph").click()
    graph = page.get_by_role("region", name="autograd graph")
    expect(graph.locator(".ag-node")).to_have_count(10)
    expect(graph.locator(".ag-flow-box")).to_have_attribute("data-fitted", re.compile("."))
    assert _smallest_text_px(graph) >= 11, _smallest_text_px(graph)
    # it opens on the output's grad_fn, where the gradients start
    flow = graph.locator(".ag-flow").bounding_box()
    root = graph.get_by_label("MeanBackward0 of", exact=False)
    assert _inside(root.bounding_box(), flow), (root.bounding_box(), flow)
    in_panel = _shown(graph)
    assert in_panel >= 4, in_panel
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "autograd-panel.png"))

    before = _smallest_text_px(graph)
    graph.get_by_role("button", name="zoom in").click()
    page.wait_for_timeout(300)
    assert _smallest_text_px(graph) > before

    graph.get_by_role("button", name="full screen").click()
    box = graph.bounding_box()
    assert box["width"] >= 1279 and box["height"] >= 799, box
    expect(graph.locator(".ag-node")).to_have_count(10)
    page.wait_for_timeout(300)
    assert _smallest_text_px(graph) >= 11
    # the whole window: all of it in view (laid out whichever way shows it larger), readable
    assert _shown(graph) == 10
    assert _inside(root.bounding_box(), graph.locator(".ag-flow").bounding_box())
    page.screenshot(path=str(SHOTS / "autograd-full.png"))
    page.keyboard.press("Escape")
    expect(graph.get_by_role("button", name="full screen")).to_be_visible()
    assert graph.bounding_box()["width"] < 400
