"""Issue 35, the graph on a 1024x768 projector with a lesson: presenting, the lesson is a band
above the canvas and step mode's controls a band below it, so that the fitted graph is all
visible and nothing covers a node; the notice of a run's end never covers the lesson's header
(presenting or not)."""

import os
from pathlib import Path

from editor import open_editor, run_backward
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
PROJECTOR = {"width": 1024, "height": 768}

# every node's box, and those of what could cover one, in page coordinates
BOXES = """() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {
    pane: box(document.querySelector('.react-flow')),
    nodes: [...document.querySelectorAll('.react-flow__node')].map(box),
    lesson: box(document.querySelector('.lesson')),
    header: box(document.querySelector('.lesson header')),
    title: box(document.querySelector('.lesson header b')),
    close: box(document.querySelector('.lesson header button')),
    steps: box(document.querySelector('.step-controls')),
    notice: box(document.querySelector('.notice')),
    scroll: document.documentElement.scrollWidth <= innerWidth,
  };
}"""


def overlap(a, b):
    return bool(a and b) and not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def inside(inner, outer):
    return (
        inner["left"] >= outer["left"] - 1
        and inner["right"] <= outer["right"] + 1
        and inner["top"] >= outer["top"] - 1
        and inner["bottom"] <= outer["bottom"] + 1
    )


def nothing_covered(m, what):
    assert m["scroll"], what
    assert m["nodes"], what
    for node in m["nodes"]:
        assert inside(node, m["pane"]), (what, node, m["pane"])
        for cover in ("lesson", "steps", "notice"):
            assert not overlap(node, m[cover]), (what, cover, node, m[cover])
    for part in ("title", "close"):
        assert not overlap(m["notice"], m[part]), (what, part, m["notice"], m[part])


def test_the_graph_on_a_projector_is_all_visible_beside_the_lesson(page):
    teacher = page
    teacher.set_viewport_size(PROJECTOR)
    open_editor(teacher, "mlp-xor")
    teacher.get_by_role("button", name="Presenter").click()
    run_backward(teacher)  # the notice says it finished
    expect(teacher.locator(".notice")).to_be_visible()
    teacher.wait_for_timeout(300)  # the fit after the layout change (one animation frame)
    nothing_covered(teacher.evaluate(BOXES), "presenting")
    SHOTS.mkdir(parents=True, exist_ok=True)
    teacher.screenshot(path=str(SHOTS / "projector-lesson-graph.png"))
    # step mode's controls: a band of their own below the graph
    teacher.get_by_role("button", name="step mode").click()
    expect(teacher.get_by_role("group", name="step mode")).to_be_visible()
    teacher.get_by_role("button", name="Fit view", exact=True).click()
    teacher.wait_for_timeout(400)
    nothing_covered(teacher.evaluate(BOXES), "presenting in step mode")
    teacher.screenshot(path=str(SHOTS / "projector-lesson-step-mode.png"))


def test_the_notice_leaves_the_lesson_header_alone_off_the_projector(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_editor(page, "mlp-xor")
    run_backward(page)
    expect(page.locator(".notice")).to_be_visible()
    m = page.evaluate(BOXES)
    assert m["header"] and not overlap(m["notice"], m["header"]), m
    assert not overlap(m["notice"], m["lesson"]), m
    page.screenshot(path=str(SHOTS / "lesson-notice-1280.png"))
