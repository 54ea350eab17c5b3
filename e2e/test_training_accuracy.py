"""A classifier's training accuracy in the training tab: the LeNet template learns the 8x8
digits, and the tab shows its accuracy on the whole dataset beside the loss while it trains
and after it ends."""

import os
import re
from pathlib import Path

from editor import open_editor
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
ACCURACY = re.compile(r"^accuracy (\d{1,3}\.\d)%$")


def test_lenet_on_digits_shows_its_training_accuracy(page):
    open_editor(page, "lenet-digits")
    page.get_by_role("button", name="close lesson").click()
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    accuracy = panel.get_by_role("status", name="training accuracy")
    expect(accuracy).to_have_count(0)  # nothing trained yet: nothing to show

    panel.get_by_role("button", name="Train", exact=True).click()
    status = panel.get_by_label("training status")
    expect(status).to_have_attribute("data-status", "ok", timeout=90_000)
    expect(accuracy).to_have_text(ACCURACY)
    shown = float(ACCURACY.match(accuracy.inner_text()).group(1))
    # the template reaches 99% in its 300 steps (docs/training.md); a generous floor
    assert 90.0 <= shown <= 100.0, accuracy.inner_text()
    # next to the loss (beside it, or just under it in a narrow column), inside the panel
    loss_box = status.bounding_box()
    acc_box = accuracy.bounding_box()
    assert 0 <= acc_box["y"] - loss_box["y"] <= 2 * loss_box["height"] + 8, (loss_box, acc_box)
    box = panel.bounding_box()
    assert box["x"] <= acc_box["x"] and acc_box["x"] + acc_box["width"] <= box["x"] + box["width"]
    assert acc_box["height"] >= 12, acc_box  # a readable size
    # the note at the end says it too
    note = re.compile(r"training finished after 300 steps, loss [\d.e-]+, accuracy")
    expect(page.get_by_text(note)).to_have_count(1)
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "training-accuracy.png"))

    # from the untrained weights again (one undo), 20 steps: a lower accuracy of its own
    page.get_by_label("graph canvas").click(position={"x": 300, "y": 700})
    page.keyboard.press("Control+z")
    panel.get_by_label("steps", exact=True).fill("20")
    panel.get_by_label("steps", exact=True).press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(status).to_have_attribute("data-status", "ok", timeout=60_000)
    expect(accuracy).to_have_text(ACCURACY)
    assert float(ACCURACY.match(accuracy.inner_text()).group(1)) < shown, accuracy.inner_text()
