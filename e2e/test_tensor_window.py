"""Every tensor one click away, in a window of its own: on `lenet-digits` after Backward at
1440x900, conv1's weight.grad opens from its node line and pops out whole (its 8 kernels as
maps); conv1's feature maps pop out with every channel in view, many samples a page, in a
window that resizes from its corner; an AccumulateGrad of the autograd view opens its .grad;
another graph opened takes the window away and the side panel back to the chain rule."""

import re
from pathlib import Path

from editor import open_editor, run_backward
from playwright.sync_api import expect

SHOTS = Path(__file__).resolve().parent / "artifacts"
CHANNELS = 8  # the template's conv1


def inside(inner, outer):
    return (
        inner["x"] >= outer["x"] - 1
        and inner["y"] >= outer["y"] - 1
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )


def test_tensors_pop_out_whole_and_go_with_their_graph(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    page.get_by_role("button", name="close lesson").click()
    run_backward(page)

    # the weight's .grad line on conv1, zoomed in to where a node draws it
    box = page.get_by_test_id("node-conv1").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(4):
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(150)
    page.get_by_test_id("leafgrad-conv1.weight").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    expect(viewer).to_contain_text("conv1.weight .grad")
    expect(viewer).to_contain_text("8×1×3×3")
    # whole: each of its eight 3x3 kernels, every number
    slices = viewer.get_by_role("figure", name=re.compile(r"^slice "))
    expect(slices).to_have_count(8)
    expect(slices.last).to_contain_text("[7, 0, :, :]")
    expect(viewer.locator(".tv-table td")).to_have_count(72)
    viewer.screenshot(path=str(SHOTS / "tensor-weight-grad-whole.png"))

    # popped out: the whole tensor, its eight 3x3 kernels as maps, each inside the window
    viewer.get_by_role("button", name="pop out").click()
    window = page.get_by_role("dialog", name="tensor window")
    expect(window).to_be_visible()
    expect(viewer).to_contain_text("Shown in its own window.")
    expect(window).to_contain_text("conv1.weight .grad")
    kernels = window.get_by_role("img", name="sample")
    expect(kernels).to_have_count(8)
    frame = window.bounding_box()
    for k in range(8):
        assert inside(kernels.nth(k).bounding_box(), frame), k
    window.screenshot(path=str(SHOTS / "tensor-window-weight-grad.png"))
    window.get_by_role("button", name="close tensor window").click()
    expect(window).to_have_count(0)

    # conv1's feature maps: in the side panel a few channels show before it scrolls; popped
    # out, every channel of each sample is in view and a page holds far more samples
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.get_by_test_id("node-conv1").click()
    page.get_by_label("inspector").get_by_role("button", name="view value").click()
    grid = viewer.get_by_role("figure", name="images")
    expect(grid).to_contain_text(f"samples 0–15 of 1797 · channels 0–7 of {CHANNELS}")
    scroll = grid.get_by_label("image grid, scrollable").bounding_box()
    in_panel = sum(
        inside(m, scroll)
        for m in grid.get_by_role("img", name="sample 0,").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })"
        )
    )
    viewer.get_by_role("button", name="pop out").click()
    grid = window.get_by_role("figure", name="images")
    expect(grid).to_contain_text(f"samples 0–127 of 1797 · channels 0–7 of {CHANNELS}")
    expect(grid.get_by_role("img", name="sample")).to_have_count(128 * CHANNELS)
    frame = window.bounding_box()
    assert frame["width"] >= 900 and frame["height"] >= 600, frame
    first_row = [grid.get_by_role("img", name=f"sample 0, channel {c}") for c in range(CHANNELS)]
    assert all(inside(m.bounding_box(), frame) for m in first_row)
    assert in_panel < CHANNELS, in_panel  # what the side panel could not show at once
    window.screenshot(path=str(SHOTS / "tensor-window-feature-maps.png"))

    # resized from its corner
    corner = (frame["x"] + frame["width"] - 3, frame["y"] + frame["height"] - 3)
    page.mouse.move(*corner)
    page.mouse.down()
    page.mouse.move(corner[0] - 300, corner[1] - 200, steps=8)
    page.mouse.up()
    smaller = window.bounding_box()
    assert smaller["width"] < frame["width"] - 200, (frame, smaller)
    assert smaller["height"] < frame["height"] - 100, (frame, smaller)
    # moved by its title bar
    title = window.locator(".float-title").bounding_box()
    grab = (title["x"] + 40, title["y"] + title["height"] / 2)
    page.mouse.move(*grab)
    page.mouse.down()
    page.mouse.move(grab[0] - 100, grab[1] + 80, steps=6)
    page.mouse.up()
    moved = window.bounding_box()
    assert abs(moved["x"] - (smaller["x"] - 100)) < 3 and abs(moved["y"] - (smaller["y"] + 80)) < 3
    page.screenshot(path=str(SHOTS / "tensor-window-page.png"))

    # the autograd view: a weight's AccumulateGrad opens that weight's .grad
    page.get_by_role("tab", name="autograd graph").click()
    leaf = page.locator(".ag-leaf[title*='conv2.weight']")
    expect(leaf).to_have_count(1, timeout=30_000)
    # (the narrow panel's view may have it out of sight: the click is sent to the node itself)
    leaf.dispatch_event("click")
    # (shown in the window, which stays over the page: the autograd tab stays too)
    expect(window).to_contain_text("conv2.weight .grad")
    expect(window).to_contain_text("16×8×3×3")
    expect(page.get_by_role("tab", name="autograd graph")).to_have_attribute(
        "aria-selected", "true"
    )

    # another graph: the window goes with its tensor, the panel is back on the chain rule
    page.get_by_role("button", name="Templates", exact=True).click()
    page.get_by_role("button", name="template Learn XOR with a small MLP", exact=True).click()
    expect(page.get_by_label("graph name")).to_contain_text("XOR")
    expect(window).to_have_count(0)
    expect(viewer).to_have_count(0)
    expect(page.get_by_role("tab", name="chain rule")).to_have_attribute("aria-selected", "true")
