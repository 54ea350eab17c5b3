"""The overlay's panel hides no node at the fit view: on `lenet-digits` at 1440x900, opening
More ▸ Overlay… over the graph's top-left nodes fits the graph beside the panel, and so does
Fit view while the panel is open; with the panel closed, Fit view uses the whole canvas again."""

from editor import open_editor, run_backward
from playwright.sync_api import expect
from test_layout_on_open import boxes, overlap
from test_overlays import close_lesson, open_overlay

ZOOM = (
    "new DOMMatrixReadOnly("
    "getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a"
)


def covered(page, panel):
    """The nodes drawn (partly) under the panel."""
    p = panel.bounding_box()
    box = [p["x"], p["y"], p["width"], p["height"]]
    return sorted(n for n, b in boxes(page).items() if overlap(b, box))


def all_in_canvas(page):
    c = page.get_by_label("graph canvas").bounding_box()
    return all(
        c["x"] <= x
        and x + w <= c["x"] + c["width"] + 1
        and c["y"] <= y
        and y + h <= c["y"] + c["height"] + 1
        for x, y, w, h in boxes(page).values()
    )


def test_the_overlay_panel_covers_no_node_at_the_fit_view(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    close_lesson(page)
    run_backward(page)
    fit = page.get_by_role("button", name="Fit view", exact=True)
    fit.click()
    page.wait_for_timeout(400)
    whole_zoom = page.evaluate(ZOOM)
    nodes = len(boxes(page))

    panel = open_overlay(page)
    panel.get_by_label("overlay statistic").select_option(label="gradient norm")
    page.wait_for_timeout(600)  # the refit's short animation
    assert covered(page, panel) == []
    assert len(boxes(page)) == nodes and all_in_canvas(page)
    assert page.evaluate(ZOOM) >= 0.5  # still readable
    page.screenshot(path="e2e/artifacts/overlay-panel-clear.png")

    # Fit view with the panel open keeps the graph beside it
    page.get_by_role("button", name="zoom in").click()
    fit.click()
    page.wait_for_timeout(400)
    assert covered(page, panel) == []
    assert all_in_canvas(page)

    # closed: the whole canvas is the graph's again
    panel.get_by_role("button", name="close the overlay").click()
    expect(panel).to_be_hidden()
    fit.click()
    page.wait_for_timeout(400)
    assert abs(page.evaluate(ZOOM) - whole_zoom) < 1e-3
