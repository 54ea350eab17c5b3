"""A researcher's LeNet session in the browser: the template's first conv layer drawn as feature
maps, the network trained on the 8x8 digits in the training tab, and the same edge drawn again
from the trained weights, with the gradient the loss sends back along it."""

from pathlib import Path

from editor import open_editor, run_backward
from playwright.sync_api import expect

SHOTS = Path(__file__).resolve().parent / "artifacts"
CHANNELS = 8  # the template's conv1: 8 output channels, 3x3 kernels, padding 1


def conv1_images(page, which):
    """The grid of maps of conv1's value or gradient (the inspector's 'view value' / 'view
    gradient'; conv1 feeds relu1 alone, so these are the value and the gradient on that
    edge)."""
    page.keyboard.press("Escape")
    page.get_by_test_id("node-conv1").click()  # zoomed out as LeNet opens: the whole node
    expect(page.get_by_label("inspector").get_by_role("heading", level=2)).to_contain_text("conv1")
    page.get_by_label("inspector").get_by_role("button", name=f"view {which}").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    expect(viewer.get_by_role("heading", level=2)).to_contain_text("conv1")
    grid = viewer.get_by_role("figure", name="images")
    expect(grid).to_contain_text(f"samples 0–15 of 1797 · channels 0–7 of {CHANNELS} · 8×8")
    expect(grid.get_by_role("img", name="sample")).to_have_count(16 * CHANNELS)
    return viewer, grid


def pixels(grid, sample, channel):
    """The map's pixels as a data URL: equal URLs, equal pictures."""
    name = f"sample {sample}, channel {channel}"
    return grid.get_by_role("img", name=name, exact=True).evaluate("c => c.toDataURL()")


def test_lenet_feature_maps_before_and_after_training(page):
    open_editor(page, "lenet-digits")
    page.get_by_role("button", name="close lesson").click()
    run_backward(page)
    viewer, grid = conv1_images(page, "value")
    untrained = [pixels(grid, 0, c) for c in range(CHANNELS)]
    assert len(set(untrained)) == CHANNELS  # eight filters, eight different maps
    viewer.screenshot(path=str(SHOTS / "lenet-untrained-maps.png"))

    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=90_000
    )

    # the trained weights were written back: the next run draws other maps on the same edge
    run_backward(page)
    viewer, grid = conv1_images(page, "value")
    trained = [pixels(grid, 0, c) for c in range(CHANNELS)]
    assert sum(a != b for a, b in zip(untrained, trained)) == CHANNELS
    first = grid.get_by_role("img", name="sample 0, channel 0", exact=True)
    assert first.bounding_box()["width"] >= 40  # 8x8 maps scaled up to be seen
    viewer.screenshot(path=str(SHOTS / "lenet-trained-maps.png"))

    # where the loss pushes each map: both signs, on a scale centred on 0
    viewer, grid = conv1_images(page, "gradient")
    expect(viewer.get_by_role("heading", level=2)).to_contain_text("gradient")
    expect(grid.get_by_label("colour scale from")).to_contain_text("blue negative, white 0")
    viewer.screenshot(path=str(SHOTS / "lenet-trained-gradients.png"))
