"""A student who joins a room while the teacher trains sees the training so far: the loss
chart from the first step, the step reached, the decision boundary; then it goes on live. A
student who joins after it ended sees how it ended."""

import os
import re
from pathlib import Path

from editor import join_room, open_editor, start_room
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def status_step(panel):
    text = panel.get_by_label("training status").inner_text()
    return int(re.search(r"step (\d+)", text).group(1))


def test_a_late_joiner_sees_the_teachers_training_so_far(page, student_page, browser):
    teacher = page
    open_editor(teacher, "mlp-xor")
    teacher.get_by_role("button", name="close lesson").click()
    code = start_room(teacher)
    teacher.get_by_role("tab", name="training").click()
    panel = teacher.get_by_role("region", name="training")
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("300")
    steps.press("Enter")
    # leading a room: classroom pace (20 steps a second), so 300 steps take 15 s
    expect(panel.get_by_label("training speed")).to_have_value("20")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_contain_text(
        re.compile(r"step (2\d|[3-9]\d)\b")
    )

    student = student_page
    open_editor(student, "quadratic")
    join_room(student, code)
    # the training tab comes up with the chart so far, from step 1, and the boundary
    theirs = student.get_by_role("region", name="training")
    expect(theirs).to_be_visible()
    expect(theirs.get_by_label("training status")).to_have_attribute("data-status", "running")
    chart = theirs.get_by_role("img", name="loss chart")
    expect(chart).to_have_attribute("data-first", "1")
    assert int(chart.get_attribute("data-points")) >= 20
    assert status_step(theirs) >= 20
    expect(
        theirs.get_by_role("img", name=re.compile("decision boundary over 120 points"))
    ).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    student.screenshot(path=str(SHOTS / "late-joiner-training.png"))
    # and it goes on live, no step twice or missing: the chart has a point per step
    joined_at = status_step(theirs)
    expect(theirs.get_by_label("training status")).not_to_contain_text(f"step {joined_at} ")
    panel.get_by_role("button", name="Stop", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute("data-status", "stopped")
    expect(theirs.get_by_label("training status")).to_have_attribute("data-status", "stopped")
    last = status_step(panel)
    assert status_step(theirs) == last
    expect(chart).to_have_attribute("data-points", str(last))

    # a third page joining after the end gets the end: status, step, chart and boundary
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        late = context.new_page()
        late.server = teacher.server
        open_editor(late, "quadratic")
        join_room(late, code)
        region = late.get_by_role("region", name="training")
        expect(region.get_by_label("training status")).to_have_attribute("data-status", "stopped")
        assert status_step(region) == last
        expect(region.get_by_role("img", name="loss chart")).to_have_attribute(
            "data-points", str(last)
        )
        expect(region.get_by_role("img", name=re.compile("decision boundary"))).to_be_visible()
        late.screenshot(path=str(SHOTS / "after-joiner-training.png"))
    finally:
        context.close()
