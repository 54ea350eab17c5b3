"""Step mode as a class uses it: it opens paused at the start, its buttons are drawn icons (no
missing glyphs), a scrubber jumps anywhere in the run, and its texts name nodes by label."""

import os
import re
from pathlib import Path

from editor import last_run, open_editor, wait_finished
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def test_step_mode_opens_paused_with_icons_and_a_scrubber(page):
    open_editor(page, "five-weight-network")
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before)
    page.get_by_role("button", name="step mode").click()
    steps = page.get_by_role("group", name="step mode")
    position = steps.get_by_label("step position")
    total = int(re.search(r"/ (\d+)", position.inner_text()).group(1))
    expect(position).to_have_text(f"0 / {total}")
    page.wait_for_timeout(800)  # no autoplay: still at the start
    expect(position).to_have_text(f"0 / {total}")
    expect(steps.get_by_role("button", name="play")).to_be_visible()
    for name in ("step back", "play", "step forward"):
        icon = steps.get_by_role("button", name=name).locator("svg")
        box = icon.bounding_box()
        assert box and box["width"] >= 14 and box["height"] >= 14, (name, box)
        assert steps.get_by_role("button", name=name).inner_text().strip() == ""
    scrubber = steps.get_by_role("slider", name="replay position")
    scrubber.focus()
    page.keyboard.press("End")
    expect(position).to_have_text(f"{total} / {total}")
    # at the fit view (compact faces: canvas/detail.ts) a leaf's .grad is its gradient line
    expect(page.get_by_test_id("grad-w1")).to_be_visible()
    page.keyboard.press("Home")
    expect(position).to_have_text(f"0 / {total}")
    expect(page.get_by_test_id("value-L")).to_have_count(0)
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(position).to_have_text(f"3 / {total}")
    expect(steps.get_by_role("status")).to_have_text(re.compile(r"^forward: \S+ computed$"))
    # play runs on from here, pause stops it
    steps.get_by_role("button", name="play").click()
    expect(steps.get_by_role("button", name="pause")).to_be_visible()
    steps.get_by_role("button", name="pause").click()
    SHOTS.mkdir(parents=True, exist_ok=True)
    steps.screenshot(path=str(SHOTS / "step-mode.png"))
