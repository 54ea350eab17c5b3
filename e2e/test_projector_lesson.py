"""Issue 35, a lesson on a 1024x768 projector: the teacher leads a room in presenter mode, runs
the lesson's steps, steps through the run and trains; students follow at 1280x800.

- the toolbar stays one row with every control on screen (the rest in More ▾, by keyboard too)
  and the page never scrolls sideways, in every mode; one banner per event;
- a training shows its loss chart, boundary, progress and pace beside the graph, large;
- "train again" starts from the seeded weights unless the teacher continues from trained ones;
- a student who joins late sees the values, the lesson step and the teacher's pace.
"""

import os
import re
from pathlib import Path

from editor import join_room, open_editor, start_room
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
PROJECTOR = {"width": 1024, "height": 768}

# every toolbar control as drawn: one row, none outside the window, and the page as wide as it
MEASURE = """() => {
  const bar = document.querySelector('.toolbar').getBoundingClientRect();
  const shown = [...document.querySelectorAll(
      '.toolbar button, .toolbar .doc-name, .toolbar .run-status, .toolbar .room-chip')]
    .filter((b) => b.offsetParent !== null && b.getBoundingClientRect().width > 0);
  const boxes = shown.map((b) => b.getBoundingClientRect());
  return {
    rows: new Set(boxes.map((r) => Math.round((r.top + r.height / 2) / 4))).size,
    inside: boxes.every((r) => r.left >= 0 && r.right <= innerWidth && r.bottom <= bar.bottom + 1),
    scrollWidth: document.documentElement.scrollWidth, innerWidth,
    names: shown.map((b) => b.getAttribute('aria-label') || b.textContent.trim()),
  };
}"""


def fits(page, mode):
    m = page.evaluate(MEASURE)
    assert m["rows"] == 1 and m["inside"], (mode, m)
    assert m["scrollWidth"] <= m["innerWidth"], (mode, m)
    return m["names"]


def lesson_to(page, n, total=4):
    lesson = page.get_by_role("region", name="lesson")
    while f"step {n} of" not in lesson.inner_text():
        lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text(f"step {n} of {total}")


def test_the_toolbar_fits_a_1024_projector_in_every_mode(page):
    teacher = page
    teacher.set_viewport_size(PROJECTOR)
    open_editor(teacher, "mlp-xor")
    start_room(teacher)
    # (out of presenter mode a 1024 px toolbar may take two rows: test_toolbar_one_row.py)
    m = teacher.evaluate(MEASURE)
    assert m["inside"] and m["scrollWidth"] <= m["innerWidth"], m
    teacher.get_by_role("button", name="Presenter").click()
    names = fits(teacher, "presenting")
    for name in ("More", "Fit view", "Presenter", "Forward", "Backward", "step mode"):
        assert name in names, (name, names)
    # the lesson's forward and backward steps, then step mode through the run
    lesson_to(teacher, 3)
    # the step's backward has run (not only the forward before it): step mode walks its records
    expect(teacher.get_by_test_id("grad-layer1")).to_be_visible()
    expect(teacher.get_by_label("run status")).to_have_attribute("data-status", "ok")
    teacher.get_by_role("button", name="step mode").click()
    expect(teacher.get_by_role("group", name="step mode")).to_be_visible()
    fits(teacher, "presenting in step mode")
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "projector-toolbar-step-mode.png"))
    teacher.get_by_role("button", name="exit step mode").click()
    # the lesson's training step
    lesson_to(teacher, 4)
    expect(teacher.get_by_label("training status").first).to_have_attribute(
        "data-status", re.compile("running|ok")
    )
    fits(teacher, "presenting while training")
    teacher.screenshot(path=str(SHOTS / "projector-toolbar-training.png"))

    # More ▾ by keyboard: the first item takes the focus, ↓ moves, Enter acts, Escape closes
    more = teacher.get_by_role("button", name="More", exact=True)
    more.focus()
    teacher.keyboard.press("Enter")
    menu = teacher.get_by_role("menu", name="more commands")
    expect(menu.get_by_role("menuitem", name="Classroom…")).to_be_focused()
    teacher.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitemcheckbox", name="no_grad")).to_be_focused()
    teacher.screenshot(path=str(SHOTS / "projector-more-menu.png"))
    teacher.keyboard.press("Escape")
    expect(menu).to_have_count(0)
    expect(more).to_be_focused()
    teacher.keyboard.press("Enter")
    teacher.keyboard.press("Enter")  # Classroom…: the room's code, to share again
    expect(teacher.get_by_label("room code to share")).to_be_visible()
    teacher.keyboard.press("Escape")

    # out of presenter mode at 1024: still no sideways scroll, with step mode on
    teacher.get_by_role("button", name="Presenter").click()
    teacher.get_by_role("button", name="step mode").click()
    m = teacher.evaluate(MEASURE)
    assert m["inside"] and m["scrollWidth"] <= m["innerWidth"], m


BOX = """(el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
          width: r.width, height: r.height}; }"""


def test_a_training_on_the_projector_shows_its_chart_beside_the_graph(page):
    teacher = page
    teacher.set_viewport_size(PROJECTOR)
    open_editor(teacher, "mlp-xor")
    teacher.get_by_role("button", name="Presenter").click()
    lesson_to(teacher, 4)  # "train: watch the loss fall"
    shown = teacher.get_by_role("region", name="training on the projector")
    expect(shown).to_be_visible()
    expect(shown.get_by_label("training progress")).to_contain_text(re.compile(r"step \d+ / 300"))
    # presenting: classroom pace, and the control is here
    expect(shown.get_by_label("training speed")).to_have_value("20")
    chart = shown.get_by_role("img", name="loss chart")
    expect(chart).to_have_attribute("data-points", re.compile(r"[1-9]"))
    boundary = shown.get_by_role("img", name=re.compile("decision boundary"))
    expect(boundary).to_be_visible()
    # large, on screen, beside the graph (not over it)
    c, b = chart.evaluate(BOX), boundary.evaluate(BOX)
    pane = teacher.get_by_label("graph canvas").evaluate(BOX)
    assert c["width"] >= 340 and c["height"] >= 200, c
    assert b["width"] >= 240 and b["bottom"] <= PROJECTOR["height"], b
    assert pane["right"] <= c["left"] + 1, (pane, c)
    assert teacher.evaluate("document.documentElement.scrollWidth <= innerWidth")
    # the pace changes the training in progress
    shown.get_by_label("training speed").select_option("5")
    expect(shown.get_by_label("training speed")).to_have_value("5")
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "projector-training.png"))
    shown.get_by_role("button", name="Stop", exact=True).click()
    expect(shown.get_by_label("training progress")).to_have_attribute("data-status", "stopped")
    # it stays after the end, until the teacher closes it
    teacher.wait_for_timeout(500)
    expect(shown).to_be_visible()
    shown.get_by_role("button", name="close training chart").click()
    expect(shown).to_have_count(0)


def final_loss(page):
    status = page.get_by_role("region", name="training").get_by_label("training status")
    expect(status).to_have_attribute("data-status", "ok")
    return re.search(r"loss (\S+)", status.inner_text()).group(1)


def start_loss(page):
    chart = page.get_by_role("region", name="training").get_by_role("img", name="loss chart")
    return float(chart.get_attribute("data-start-loss"))


def test_train_again_starts_from_the_seeded_weights_unless_continued(page):
    teacher = page
    teacher.set_viewport_size({"width": 1280, "height": 800})
    open_editor(teacher, "mlp-xor")
    lesson_to(teacher, 4)  # the lesson's training: 300 steps, as fast as the machine goes
    first = final_loss(teacher)
    untrained = start_loss(teacher)
    assert untrained > 0.5  # about ln 2: the seeded network guesses
    lesson = teacher.get_by_role("region", name="lesson")
    # "train again" from the same seeded weights: the same 300 steps, the same end
    lesson.get_by_role("button", name="train again").click()
    expect(teacher.get_by_text("training again from the seeded initial weights")).to_be_visible()
    assert final_loss(teacher) == first
    assert start_loss(teacher) == untrained
    # the teacher chooses to go on from the trained weights: the loss goes on falling
    panel = teacher.get_by_role("region", name="training")
    panel.get_by_label("continue from trained weights").check()
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "train-again-choice.png"))
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("200")  # (a training of another length: its end cannot be the last one's)
    steps.press("Enter")
    lesson.get_by_role("button", name="train again").click()
    expect(panel.get_by_label("training status")).to_contain_text("step 200 / 200")
    final_loss(teacher)
    assert start_loss(teacher) < untrained / 2  # where the last training left off


def test_a_late_student_sees_the_values_the_lesson_step_and_the_pace(page, student_page):
    teacher, student = page, student_page
    teacher.set_viewport_size(PROJECTOR)
    student.set_viewport_size({"width": 1280, "height": 800})
    open_editor(teacher, "mlp-xor")
    code = start_room(teacher)
    teacher.get_by_role("button", name="Presenter").click()
    lesson_to(teacher, 3)  # forward, then backward
    expect(teacher.get_by_label("run status")).to_have_attribute("data-status", "ok")
    expect(teacher.get_by_test_id("grad-layer1")).to_be_visible()

    open_editor(student, "quadratic")
    join_room(student, code)
    theirs = student.get_by_role("region", name="lesson")
    expect(theirs).to_contain_text("step 3 of 4")
    expect(theirs).to_contain_text("your teacher leads the lesson")
    expect(theirs.get_by_role("button", name="next →")).to_have_count(0)
    expect(student.get_by_test_id("value-loss")).to_have_text(
        teacher.get_by_test_id("value-loss").inner_text()
    )
    # the same gradient (the faces differ in detail only: a student's zoom may add the shape)
    theirs_grad = teacher.get_by_test_id("grad-layer1").inner_text().split("μ")[-1].strip()
    expect(student.get_by_test_id("grad-layer1")).to_contain_text(f"μ {theirs_grad}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    student.screenshot(path=str(SHOTS / "late-student-step-3.png"))

    # the lesson's training: the student sees step 4 and the teacher's pace, not "max"
    lesson_to(teacher, 4)
    expect(theirs).to_contain_text("step 4 of 4")
    speed = student.get_by_role("region", name="training").get_by_label("training speed")
    expect(speed).to_have_value("20")
    expect(student.get_by_role("region", name="training")).to_contain_text("your teacher's pace")
    teacher.get_by_role("region", name="training on the projector").get_by_label(
        "training speed"
    ).select_option("5")
    expect(speed).to_have_value("5")
    student.screenshot(path=str(SHOTS / "student-teachers-pace.png"))
    teacher.screenshot(path=str(SHOTS / "teacher-projector-room-training.png"))
