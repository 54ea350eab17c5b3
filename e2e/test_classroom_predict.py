"""Issue 35, predict then reveal, in Chromium: a teacher at a 1024x768 projector leads a room,
runs Backward on `two-paths-add-up` (x → h = 3x → u = h², v = 5h → L = u + v; at x = 1 the
gradient on x → h is 2·3·3 + 5·3 = 33) and asks the class for the gradient on x → h. Three
students at 1280x800 see the wire highlighted and its number hidden, answer (two right, one
who forgot the path through v: 18), the teacher sees 3 answers and the spread with the
mistake named, reveals, and each student sees whether they were right."""

import csv
import io
import os
import re
from pathlib import Path

from editor import click_wire, join_room, open_editor, run_backward, start_room, zoom_to_labels
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
PROJECTOR = {"width": 1024, "height": 768}
STUDENT = {"width": 1280, "height": 800}
SELECTED = re.compile(r"\bselected\b")
# every node drawn inside the canvas: nothing cut off at its edges
ALL_INSIDE = """() => {
  const pane = document.querySelector('.react-flow').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('.react-flow__node')];
  return nodes.length > 0 && nodes.every((n) => {
    const r = n.getBoundingClientRect();
    return r.left >= pane.left - 1 && r.right <= pane.right + 1
      && r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1;
  });
}"""
BOX = """(el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }"""


def overlap(a, b):
    return not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def test_a_predict_round_with_three_students(page, student_page, browser):
    teacher = page
    teacher.set_viewport_size(PROJECTOR)
    open_editor(teacher, "two-paths-add-up")
    code = start_room(teacher)
    run_backward(teacher)
    teacher.get_by_role("button", name="Presenter").click()

    students = [student_page]
    contexts = []
    for _ in range(2):
        ctx = browser.new_context(viewport=STUDENT)
        contexts.append(ctx)
        p = ctx.new_page()
        p.set_default_timeout(10_000)
        p.server = teacher.server
        students.append(p)
    student_page.set_viewport_size(STUDENT)
    try:
        for s in students:
            open_editor(s, "quadratic")
            join_room(s, code)
        zoom_to_labels(students[0])
        expect(students[0].get_by_test_id("edge-grad-x-h")).to_contain_text("33")

        # the teacher selects the wire and asks
        # a button on the canvas's corner until the teacher means to ask: the canvas keeps its
        # size (and the graph its fit)
        before = teacher.get_by_label("graph canvas").evaluate(BOX)
        click_wire(teacher, "x-h")
        ask = teacher.get_by_role("region", name="ask the class")
        opener = ask.get_by_role("button", name="Ask the class…")
        expect(opener).to_be_visible()
        assert teacher.get_by_label("graph canvas").evaluate(BOX) == before
        SHOTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(SHOTS / "predict-projector-ask-button.png"))
        opener.click()
        expect(ask.get_by_label("what to ask")).to_contain_text("the gradient on x → h")
        ask.get_by_role("button", name="Ask").click()
        board = teacher.get_by_role("region", name="class answers")
        expect(board).to_contain_text("0 answered")

        # each student: the wire highlighted, its number hidden, a field to answer in
        for s in students:
            expect(s.locator(".react-flow__edge[data-id='x-h']")).to_have_class(SELECTED)
            question = s.get_by_role("region", name="question")
            expect(question).to_contain_text("Predict the gradient on x → h")
            expect(question).to_contain_text("a number")
        expect(students[0].get_by_test_id("edge-grad-x-h")).to_have_count(0)
        # the chain rule on the teacher's wire says why it shows no number
        expect(students[0].locator(".analysis")).to_contain_text("Hidden until your teacher")
        expect(students[0].get_by_test_id("edge-grad-h-u")).to_be_visible()
        for s, text in zip(students, ("33", "tensor(33.)", "18"), strict=True):
            question = s.get_by_role("region", name="question")
            question.get_by_label("your answer").fill(text)
            question.get_by_role("button", name="Answer").click()
            expect(question.get_by_label("answer sent")).to_be_visible()

        # the teacher: 3 answered, 2 right, and the mistake the wrong one suggests
        count = board.get_by_label("answered")
        expect(count).to_have_attribute("data-answered", "3")
        expect(count).to_have_attribute("data-right", "2")
        # on the projector, in front of the class, which answer is right waits for the reveal,
        # and the number is hidden on the teacher's canvas too
        expect(count).to_have_text("3 answered")
        expect(board.get_by_label("answers grouped")).not_to_contain_text("right")
        expect(board.get_by_label("most common wrong answer")).to_have_count(0)
        expect(teacher.get_by_test_id("grad-x")).to_have_count(0)
        expect(teacher.get_by_test_id("grad-h")).to_contain_text("11")
        SHOTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(SHOTS / "predict-projector-answers.png"))
        # on the teacher's own screen: the spread with right and wrong, and the mistake
        teacher.get_by_role("button", name="Presenter").click()
        expect(count).to_have_text("3 answered · 2 right")
        wrong = board.get_by_label("most common wrong answer")
        expect(wrong).to_contain_text("18")
        expect(wrong).to_contain_text("only the path through u")
        expect(teacher.get_by_test_id("grad-x")).to_contain_text("33")
        teacher.screenshot(path=str(SHOTS / "predict-teacher-own-screen.png"))
        teacher.get_by_role("button", name="Presenter").click()
        # on the projector the card is on screen and covers neither the lesson nor the toolbar
        card = board.evaluate(BOX)
        assert card["right"] <= PROJECTOR["width"] and card["bottom"] <= PROJECTOR["height"], card
        lesson = teacher.get_by_role("region", name="lesson").evaluate(BOX)
        assert not overlap(card, lesson), (card, lesson)
        teacher.wait_for_function(ALL_INSIDE)
        teacher.screenshot(path=str(SHOTS / "predict-teacher-answers.png"))
        students[2].screenshot(path=str(SHOTS / "predict-student-question.png"))

        # the answers as CSV, anonymous
        with teacher.expect_download() as got:
            board.get_by_role("button", name="CSV").click()
        rows = list(csv.reader(io.StringIO(Path(got.value.path()).read_text())))
        assert rows[0] == ["answered_at", "answer", "right", "mistake"]
        assert sorted(r[1:3] for r in rows[1:]) == [
            ["18", "no"],
            ["33", "yes"],
            ["tensor(33.)", "yes"],
        ]

        board.get_by_role("button", name="Reveal").click()
        expect(board.get_by_label("revealed value")).to_contain_text("33")
        for s, verdict in zip(students, ("✓ right", "✓ right", "✗ not quite"), strict=True):
            question = s.get_by_role("region", name="question")
            expect(question.get_by_label("your result")).to_have_text(verdict)
            expect(question.get_by_label("revealed value")).to_contain_text("33")
            expect(question.get_by_label("class result")).to_contain_text("2 of 3 right")
        # the number is back on the canvas, and the wire's chain rule is shown
        expect(students[0].get_by_test_id("edge-grad-x-h")).to_contain_text("33")
        expect(students[2].get_by_role("tab", name="chain rule")).to_have_attribute(
            "aria-selected", "true"
        )
        students[2].screenshot(path=str(SHOTS / "predict-student-revealed.png"))
        # the card grew with the answers and the value: the graph is fitted again, whole
        teacher.wait_for_function(ALL_INSIDE)
        teacher.screenshot(path=str(SHOTS / "predict-teacher-revealed.png"))

        # done: the card goes away on every page
        board.get_by_role("button", name="Done").click()
        for s in students:
            expect(s.get_by_role("region", name="question")).to_have_count(0)
    finally:
        for ctx in contexts:
            ctx.close()


def test_a_question_at_a_step_of_the_backward_pass(page, student_page):
    """Step mode: the teacher asks about what the next step shows (z = (x + y)² at x = 2,
    y = 3: z sends 2·5 = 10 back to a); the student answers, the teacher steps on, the number
    stays hidden on the student's canvas until the reveal."""
    teacher, student = page, student_page
    teacher.set_viewport_size(PROJECTOR)
    open_editor(teacher, "square-of-a-sum")
    code = start_room(teacher)
    run_backward(teacher)
    teacher.get_by_role("button", name="Presenter").click()
    student.set_viewport_size(STUDENT)
    open_editor(student, "quadratic")
    join_room(student, code)
    teacher.get_by_role("button", name="step mode").click()
    steps = teacher.get_by_role("group", name="step mode")
    ask = teacher.get_by_role("region", name="ask the class")
    ask.get_by_role("button", name="Ask the class…").click()
    what = ask.get_by_label("what to ask")
    for _ in range(14):
        if ask.count() and "z sends a gradient back to a" in what.evaluate(
            "s => s.options[0].text"
        ):
            break
        steps.get_by_role("button", name="step forward").click()
    expect(what).to_contain_text(re.compile(r"step \d+: backward: z sends a gradient back to a"))
    ask.get_by_role("button", name="Ask").click()
    question = student.get_by_role("region", name="question")
    expect(question).to_contain_text(re.compile(r"Predict step \d+: backward: z sends a gradient"))
    question.get_by_label("your answer").fill("2*5")
    question.get_by_role("button", name="Answer").click()
    expect(question.get_by_label("answer sent")).to_contain_text("10")
    # the teacher steps on: the record reaches the student, its number hidden
    position = student.get_by_label("step position").inner_text()
    steps.get_by_role("button", name="step forward").click()
    expect(student.get_by_label("step position")).not_to_have_text(position)
    zoom_to_labels(student)
    expect(student.get_by_test_id("edge-grad-a-z")).to_have_count(0)
    board = teacher.get_by_role("region", name="class answers")
    expect(board.get_by_label("answered")).to_have_attribute("data-right", "1")
    board.get_by_role("button", name="Reveal").click()
    expect(question.get_by_label("your result")).to_have_text("✓ right")
    expect(student.get_by_test_id("edge-grad-a-z")).to_contain_text("10")
    student.screenshot(path=str(SHOTS / "predict-step-mode-student.png"))
    teacher.screenshot(path=str(SHOTS / "predict-step-mode-teacher.png"))
