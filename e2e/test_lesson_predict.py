"""Issue 35, a lesson step that asks (docs/graph-format.md, "Lesson steps that ask"), in
Chromium: the teacher at a 1024x768 projector leads a room through `square-of-a-sum`
(z = (x + y)², x = 2, y = 3); its third step runs backward and asks the room what the square
sends back to a (2a = 10). The question is asked by the lesson itself, without the teacher
picking a wire; a student at 1280x800 sees the prompt and no gradient anywhere on the canvas
until the reveal (the values stay), answers, and after the reveal sees right and the number."""

import os
from pathlib import Path

from editor import present_to_room, zoom_to_labels
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
PROMPT = "What gradient does z = a ** 2 send back to a = 5?"


def test_a_lesson_step_asks_the_room(page, student_page):
    teacher, student = page, student_page
    present_to_room(teacher, student, "square-of-a-sum")
    lesson = teacher.get_by_role("region", name="lesson")

    # step 2 runs forward: values everywhere, no question yet
    lesson.get_by_role("button", name="next →").click()
    expect(student.get_by_role("region", name="lesson")).to_contain_text("step 2 of 4")
    expect(student.get_by_test_id("value-z")).to_have_text("25")
    expect(teacher.get_by_role("region", name="class answers")).to_have_count(0)

    # step 3 runs backward and asks: the teacher's card opens by itself, with the prompt
    lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text("step 3 of 4")
    expect(lesson).to_contain_text("asks the class")
    board = teacher.get_by_role("region", name="class answers")
    expect(board).to_contain_text("Predict: the gradient on")
    expect(board.get_by_label("the question")).to_have_text(PROMPT)
    expect(board).to_contain_text("0 answered")

    # the student: the prompt, an answer field, and no gradient anywhere (values stay)
    question = student.get_by_role("region", name="question")
    expect(question.get_by_label("the question")).to_have_text(PROMPT)
    expect(question).to_contain_text("a number")
    expect(student.get_by_role("region", name="lesson")).to_contain_text("step 3 of 4")
    zoom_to_labels(student)
    expect(student.get_by_test_id("value-a")).to_have_text("5")
    for hidden in ("edge-grad-a-z", "edge-grad-x-a", "edge-grad-y-a", "grad-a", "leafgrad-x"):
        expect(student.get_by_test_id(hidden)).to_have_count(0)
    # the projector, in front of the class, hides them too
    expect(teacher.get_by_test_id("grad-a")).to_have_count(0)
    expect(teacher.get_by_test_id("value-z")).to_have_text("25")
    SHOTS.mkdir(parents=True, exist_ok=True)
    student.screenshot(path=str(SHOTS / "lesson-predict-student-question.png"))

    question.get_by_label("your answer").fill("2*5")
    question.get_by_role("button", name="Answer").click()
    expect(question.get_by_label("answer sent")).to_contain_text("10")
    count = board.get_by_label("answered")
    expect(count).to_have_attribute("data-answered", "1")
    expect(count).to_have_attribute("data-right", "1")
    teacher.screenshot(path=str(SHOTS / "lesson-predict-projector-answers.png"))

    # the reveal: right, and every gradient back on both canvases
    board.get_by_role("button", name="Reveal").click()
    expect(question.get_by_label("your result")).to_have_text("✓ right")
    expect(student.get_by_test_id("edge-grad-a-z")).to_contain_text("10")
    expect(student.get_by_test_id("leafgrad-x")).to_contain_text("10")
    expect(teacher.get_by_test_id("grad-a")).to_contain_text("10")
    student.screenshot(path=str(SHOTS / "lesson-predict-student-revealed.png"))

    # the next step asks nothing: no question is asked again
    board.get_by_role("button", name="Done").click()
    lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text("step 4 of 4")
    expect(teacher.get_by_role("region", name="class answers")).to_have_count(0)
    expect(student.get_by_test_id("edge-grad-a-z")).to_contain_text("10")
