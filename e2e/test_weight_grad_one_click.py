"""Every tensor one click away: on `lenet-digits` after Backward, conv1's `weight.grad` line on
the node opens that gradient, whole (8x1x3x3), in the tensor view; the inspector offers the
layer's weight and bias and their gradients."""

from editor import open_editor, run_backward, select_node
from playwright.sync_api import expect


def test_a_weights_grad_opens_from_its_node_line(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    run_backward(page)
    # zoomed in on conv1 to full detail, where a node draws its .grad lines
    box = page.get_by_test_id("node-conv1").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(4):
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(150)
    line = page.get_by_test_id("leafgrad-conv1.weight")
    expect(line).to_be_visible()
    expect(line).to_contain_text("weight.grad")
    line.click()
    viewer = page.get_by_role("region", name="tensor viewer")
    expect(viewer).to_be_visible()
    expect(viewer).to_contain_text("conv1.weight .grad")
    expect(viewer).to_contain_text("8×1×3×3")
    page.screenshot(path="e2e/artifacts/weight-grad-one-click.png")

    # the inspector: the layer's parameters and their gradients, beside its output (the whole
    # graph in view again: zoomed in on its middle, conv1's title lies above the canvas)
    page.get_by_role("button", name="Fit view", exact=True).click()
    select_node(page, "conv1")
    inspector = page.get_by_label("inspector")
    inspector.get_by_role("button", name="view bias.grad").click()
    expect(viewer).to_contain_text("conv1.bias .grad")
    expect(inspector.get_by_role("button", name="view weight", exact=True)).to_be_visible()
