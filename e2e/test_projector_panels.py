"""Issue 35, every panel of a lesson on a 1024x768 projector in a place of its own: the teacher
leads a room through `mlp-xor` in presenter mode, asks the class about a wire and trains while
the question is open. The lesson's band, the question, the training (progress, pace, chart and
boundary) and the graph never cover one another: beside a training the question heads the
training's column, so the panels wrap into two columns (the graph under the lesson, the
question over the training) instead of squeezing the lesson to a word a line over the canvas.
Beside the training the graph's nodes are sized for the projector's type: every value and
gradient whole in its node (no ellipsis that could read as a zero), 16 px or more on screen, no
node on another (mlp-xor's p and y were), and the run's notice whole in the lesson's header
line."""

import os
import re
from itertools import combinations
from pathlib import Path

from editor import assert_numbers_whole, click_wire, number_lines, present_to_room
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
PROJECTOR = {"width": 1024, "height": 768}
BOX = """(el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
          width: r.width, height: r.height}; }"""


def overlap(a, b):
    return not (
        a["right"] <= b["left"] + 1
        or b["right"] <= a["left"] + 1
        or a["bottom"] <= b["top"] + 1
        or b["bottom"] <= a["top"] + 1
    )


def on_screen(box):
    return (
        box["left"] >= 0
        and box["right"] <= PROJECTOR["width"] + 1
        and box["bottom"] <= (PROJECTOR["height"] + 1)
    )


# each node's box, and the bottom and right of its large face's text (the .lod)
NODES = """() => [...document.querySelectorAll('.react-flow__node')].map((node) => {
  const r = (node.querySelector('.op-node') || node).getBoundingClientRect();
  const lod = node.querySelector('.lod');
  const f = lod ? lod.getBoundingClientRect() : r;
  return {id: node.getAttribute('data-id'), left: r.left, right: r.right, top: r.top,
          bottom: r.bottom, faceBottom: f.bottom, faceRight: f.right,
          faceFits: !lod || lod.scrollHeight <= lod.clientHeight + 1};
})"""


def graph_reads_whole(page):
    """Every face inside its node, no node on another, every number whole at 16 px or more."""
    nodes = page.evaluate(NODES)
    assert len(nodes) == 7, nodes
    for n in nodes:
        assert n["faceBottom"] <= n["bottom"] + 0.5 and n["faceRight"] <= n["right"] + 0.5, n
        assert n["faceFits"], n
    assert not [(a["id"], b["id"]) for a, b in combinations(nodes, 2) if overlap(a, b)], nodes
    assert_numbers_whole(page, at_least=7)
    small = [line for line in number_lines(page) if line["px"] < 16 - 0.01]
    assert not small, small


def notice_whole_in_the_header(page):
    """The run's notice: its text whole, on the lesson's header line, over no lesson text."""
    notice = page.locator(".notice")
    expect(notice).to_be_visible()
    # the text as shown (the record count is hidden on the header line); a step clicked while
    # the last one's run goes on cancels that run, and says so before the next run's end
    finished = re.compile(r"^(forward|backward) run finished in \d+ ms$")
    for _ in range(100):
        text = notice.inner_text()
        if finished.match(text):
            break
        page.wait_for_timeout(100)
    assert finished.match(text), text
    assert notice.evaluate("el => el.scrollWidth <= el.clientWidth + 0.5"), text
    box = notice.evaluate(BOX)
    for part in (".lesson header b", ".lesson header button", ".lesson-text", ".lesson-buttons"):
        assert not overlap(box, page.locator(part).first.evaluate(BOX)), (part, box)


def lesson_to(page, n):
    lesson = page.get_by_role("region", name="lesson")
    while f"step {n} of" not in lesson.inner_text():
        lesson.get_by_role("button", name="next →").click()
    expect(lesson).to_contain_text(f"step {n} of 4")


def test_a_question_during_a_training_wraps_into_the_trainings_column(page, student_page):
    teacher, student = page, student_page
    present_to_room(teacher, student, "mlp-xor")
    lesson_to(teacher, 3)  # forward, then backward
    notice_whole_in_the_header(teacher)
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "projector-notice-in-the-lesson-header.png"))

    # a question about a wire of the backward run, one student answers
    click_wire(teacher, "layer2-prob")
    ask = teacher.get_by_role("region", name="ask the class")
    ask.get_by_role("button", name="Ask the class…").click()
    ask.get_by_role("button", name="Ask").click()
    question = student.get_by_role("region", name="question")
    question.get_by_label("your answer").fill("0.1")
    question.get_by_role("button", name="Answer").click()
    board = teacher.get_by_role("region", name="class answers")
    expect(board.get_by_label("answered")).to_have_attribute("data-answered", "1")

    # without a training: the question beside the lesson, in the band above the graph
    canvas = teacher.get_by_label("graph canvas")
    lesson = teacher.get_by_role("region", name="lesson")
    card, band, pane = board.evaluate(BOX), lesson.evaluate(BOX), canvas.evaluate(BOX)
    assert card["bottom"] <= pane["top"] + 1 and band["bottom"] <= pane["top"] + 1, (card, pane)
    assert not overlap(card, band), (card, band)

    # the lesson's training while the question is open
    lesson_to(teacher, 4)
    training = teacher.get_by_role("region", name="training on the projector")
    expect(training).to_be_visible()
    expect(training.get_by_role("img", name="loss chart")).to_be_visible()
    teacher.wait_for_timeout(500)  # (the columns settle: the refit after the column came)
    boxes = {
        "lesson": lesson.evaluate(BOX),
        "question": board.evaluate(BOX),
        "training": training.evaluate(BOX),
        "chart": training.get_by_role("img", name="loss chart").evaluate(BOX),
        "boundary": training.get_by_role("img", name=re.compile("decision boundary")).evaluate(BOX),
        "graph": canvas.evaluate(BOX),
        "pace": training.get_by_label("training speed").evaluate(BOX),
    }
    for name, box in boxes.items():
        assert on_screen(box), (name, box)
    for a, b in combinations(("lesson", "question", "training", "graph"), 2):
        assert not overlap(boxes[a], boxes[b]), (a, boxes[a], b, boxes[b])
    # two columns: the lesson above the graph, the question above the training
    graph, question_box = boxes["graph"], boxes["question"]
    assert boxes["lesson"]["bottom"] <= graph["top"] + 1
    assert question_box["left"] >= graph["right"] - 1
    assert question_box["bottom"] <= boxes["training"]["top"] + 1
    # the lesson keeps its width (its text in lines, not a word a line) and the graph its room
    assert boxes["lesson"]["width"] >= 500 and boxes["lesson"]["height"] <= 220, boxes["lesson"]
    assert graph["height"] >= 450 and graph["width"] >= 600, graph
    assert teacher.evaluate("document.documentElement.scrollWidth <= innerWidth")
    graph_reads_whole(teacher)
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "projector-question-beside-training.png"))

    # the question goes: the training's column is the training's again, the boundary full size
    # (the teacher's Ask the class… button, the wire still selected, in the column's header line)
    board.get_by_role("button", name="Cancel").click()
    expect(board).to_have_count(0)
    opener = teacher.get_by_role("button", name="Ask the class…")
    expect(opener).to_be_visible()
    assert not overlap(
        opener.evaluate(BOX), training.get_by_role("button", name="Stop").evaluate(BOX)
    )
    expect(training.get_by_role("img", name=re.compile("decision boundary"))).to_be_visible()
    full = training.get_by_role("img", name=re.compile("decision boundary")).evaluate(BOX)
    assert full["width"] >= 240 and on_screen(full), full
    graph_reads_whole(teacher)
