"""Help that explains the canvas (issue 34): `?` lists every colour and mark the canvas uses,
each sample drawn in the same colour as the canvas draws it; and New starts at zoom 1, not at
the last graph's zoom."""

import re

from editor import open_editor, run_backward
from playwright.sync_api import expect

ROWS = [
    "grey wire",
    "red wire",
    "faded dashed wire",
    "red dashed wire",
    "yellow wire",
    "purple node",
    "red node",
    "amber node",
    "dashed brown node",
    "param badge",
    "grad badge",
    "blue text",
    "μ",
    "∇",
    ".grad",
    "◎",
    "⚠",
    "other?",
    "2×3",
]

STROKE = "e => getComputedStyle(e).stroke"
BORDER = "e => getComputedStyle(e).borderTopColor"
COLOR = "e => getComputedStyle(e).color"


def test_the_help_explains_every_mark_in_the_canvas_colours(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "square-of-a-sum")
    run_backward(page)
    # the canvas's own colours, after a backward
    canvas_grad_wire = page.locator(".react-flow__edge-path.wire.has-grad").first.evaluate(STROKE)
    canvas_leaf = page.get_by_test_id("node-x").evaluate(BORDER)
    canvas_value = page.get_by_test_id("value-z").evaluate(COLOR)
    canvas_grad = page.get_by_test_id("grad-z").evaluate(COLOR)

    page.get_by_role("button", name="Help", exact=True).click()
    legend = page.get_by_role("region", name="canvas legend")
    expect(legend).to_be_visible()
    for name in ROWS:
        expect(legend.get_by_role("row", name=name, exact=True)).to_have_count(1)
    row = lambda name: legend.get_by_role("row", name=name, exact=True)  # noqa: E731
    assert row("red wire").locator("path").evaluate(STROKE) == canvas_grad_wire
    assert row("grey wire").locator("path").evaluate(STROKE) != canvas_grad_wire
    assert row("purple node").locator(".op-node").evaluate(BORDER) == canvas_leaf
    assert row("blue text").locator(".legend-mark").evaluate(COLOR) == canvas_value
    assert row("∇").locator(".legend-mark").evaluate(COLOR) == canvas_grad
    expect(row("∇")).to_contain_text("gradient")
    expect(row("◎")).to_contain_text("Backward starts here")
    # the whole legend can be read: scrolled to, its last row is on screen
    row("2×3").scroll_into_view_if_needed()
    expect(row("2×3")).to_be_in_viewport()
    page.get_by_role("dialog").screenshot(path="e2e/artifacts/canvas-legend.png")


def test_new_starts_at_zoom_1(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    zoom = (
        "() => new DOMMatrixReadOnly(getComputedStyle("
        "document.querySelector('.react-flow__viewport')).transform).a"
    )
    page.wait_for_timeout(300)
    assert page.evaluate(zoom) < 0.9  # a model is fitted zoomed out
    page.get_by_role("button", name="New", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(0)
    page.wait_for_function(f"({zoom})() === 1")
    expect(page.locator(".react-flow__viewport")).to_have_attribute(
        "style", re.compile(r"translate\(0px, 0px\) scale\(1\)")
    )
