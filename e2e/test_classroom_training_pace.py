"""Training a class can watch: a speed control in steps per second (the server holds the pace),
and the loss chart and the decision boundary on screen together at 1280x800."""

import os
import re
from pathlib import Path

from editor import open_editor
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _step(status):
    m = re.search(r"step (\d+)", status.inner_text())
    return int(m.group(1)) if m else 0


def test_a_paced_training_shows_loss_and_boundary_together(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    speed = panel.get_by_label("training speed")
    expect(speed).to_have_value("max")  # not presenting, not leading: the machine's speed
    speed.select_option(label="5 /s")
    panel.get_by_label("steps", exact=True).fill("40")
    panel.get_by_label("steps", exact=True).press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    status = panel.get_by_label("training status")
    expect(status).to_have_attribute("data-status", "running")
    page.wait_for_timeout(1500)
    # five steps a second: after 1.5 s a handful, not all 40 (unpaced, xor takes a blink)
    assert 2 <= _step(status) <= 12, status.inner_text()
    boundary = panel.get_by_role("img", name=re.compile("decision boundary"))
    expect(boundary).to_be_visible()
    chart = panel.get_by_role("img", name="loss chart")
    # both in the window at once, without scrolling the panel or the page
    analysis = page.locator(".analysis")
    scroll = analysis.evaluate("el => el.scrollHeight - el.clientHeight")
    assert scroll <= 1, f"the training panel scrolls by {scroll} px"
    box = analysis.bounding_box()
    for view in (chart, boundary):
        b = view.bounding_box()
        assert b["y"] >= box["y"] and b["y"] + b["height"] <= box["y"] + box["height"] + 1, b
        assert b["y"] + b["height"] <= 800
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "training-pace-1280x800.png"))
    # max speed mid-training: the rest goes at once
    speed.select_option("max")
    expect(status).to_have_attribute("data-status", "ok", timeout=20_000)
    assert _step(status) == 40


def test_leading_a_room_defaults_to_classroom_pace(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    expect(panel.get_by_label("training speed")).to_have_value("max")
    page.get_by_role("button", name="Classroom", exact=True).click()
    page.get_by_role("button", name="Start a room").click()
    expect(page.get_by_label("room code to share")).to_have_text(re.compile("^[A-Z2-9]{6}$"))
    page.keyboard.press("Escape")
    page.get_by_role("tab", name="training").click()
    expect(panel.get_by_label("training speed")).to_have_value("20")
    expect(panel.get_by_text("classroom pace while leading a room")).to_be_visible()
