"""A classroom room in a real lesson, two people's pages on one server: the teacher shares a
`?room=` link and its QR code; a student who opens the link follows the room with the graph
fitted, the last run and the step-mode position, and no run or edit controls of their own; the
server restarts mid-lesson, both pages say so plainly, the teacher's page reopens the room with
the same code and the student's rejoins it by itself."""

import os
import re
from pathlib import Path

import pytest
from editor import click_wire, open_editor, run_backward, run_forward, start_room
from harness import Server, free_port
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
SELECTED = re.compile(r"\bselected\b")

QR_DRAWN = """(c) => {
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let dark = 0;
  for (let i = 0; i < px.length; i += 4) if (px[i] < 80) dark++;
  return dark / (px.length / 4);
}"""

ALL_INSIDE = """() => {
  const pane = document.querySelector('.react-flow').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('.react-flow__node')];
  return nodes.length > 0 && nodes.every((n) => {
    const r = n.getBoundingClientRect();
    return r.left >= pane.left - 1 && r.right <= pane.right + 1
      && r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1;
  });
}"""


@pytest.fixture
def own_server(built_editor, tmp_path):
    """A server of this test's own, on a port it keeps across a restart."""
    port = free_port()
    servers = [Server(tmp_path / "a", port=port)]
    yield servers
    for s in servers:
        s.stop()


def new_page(browser, url, errors):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    pg.on("dialog", lambda d: d.accept())
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.server = type("S", (), {"url": url})()
    return pg


def test_a_room_link_a_restart_and_students_who_rejoin_by_themselves(browser, own_server, tmp_path):
    server = own_server[0]
    errors = []
    teacher = new_page(browser, server.url, errors)
    student = new_page(browser, server.url, errors)
    late = new_page(browser, server.url, errors)
    after = new_page(browser, server.url, errors)
    try:
        open_editor(teacher, "five-weight-network")
        # the lesson's second step (its forward run), then the lesson out of the way
        teacher.get_by_role("region", name="lesson").get_by_role("button", name="next →").click()
        expect(teacher.get_by_role("region", name="lesson")).to_contain_text("step 2 of 4")
        teacher.get_by_role("button", name="close lesson").click()
        code = start_room(teacher)
        # the link and its QR code, in the Classroom dialog
        teacher.get_by_role("button", name="Classroom").click()
        link = teacher.get_by_label("room link", exact=True).input_value()
        assert link == f"{server.url}/?room={code}"
        qr = teacher.get_by_label("QR code of the room link")
        expect(qr).to_be_visible()
        assert 0.2 < qr.evaluate(QR_DRAWN) < 0.8  # drawn: dark modules on white
        SHOTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(SHOTS / "room-share.png"))
        teacher.keyboard.press("Escape")
        run_backward(teacher)

        # the student opens the link: the teacher's graph, fitted, with the last run
        student.goto(link)
        expect(student.get_by_label("room", exact=True)).to_contain_text(f"Following room {code}")
        expect(student.get_by_label("graph name")).to_contain_text("Five-weight network")
        expect(student.get_by_test_id("value-L")).to_have_text(
            teacher.get_by_test_id("value-L").inner_text()
        )
        assert student.evaluate(ALL_INSIDE)
        # no run or edit controls: the teacher drives
        for name in ("Forward", "Backward", "Undo", "Upload"):
            expect(student.get_by_role("button", name=name, exact=True)).to_have_count(0)
        expect(student.get_by_label("runs are the teacher's")).to_be_visible()
        expect(student.get_by_role("button", name="op relu")).to_have_count(0)
        expect(student.get_by_label("op palette")).to_contain_text("Fork")
        student.screenshot(path=str(SHOTS / "room-student.png"))

        # the teacher walks through the run in step mode; a late joiner starts where it is
        teacher.get_by_role("button", name="step mode").click()
        steps = teacher.get_by_role("group", name="step mode")
        for _ in range(3):
            steps.get_by_role("button", name="step forward").click()
        expect(steps.get_by_label("step position")).to_have_text(re.compile(r"^3 / \d+$"))
        expect(student.get_by_label("step position")).to_have_text(re.compile(r"^3 / \d+$"))
        late.goto(link)
        expect(late.get_by_label("room", exact=True)).to_contain_text(f"Following room {code}")
        expect(late.get_by_label("step position")).to_have_text(re.compile(r"^3 / \d+$"))
        steps.get_by_role("button", name="exit step mode").click()

        # the teacher points at a wire; then the server restarts: both sides are told, then
        # back in the same room by themselves
        click_wire(teacher, "w1-b")
        expect(student.locator(".react-flow__edge[data-id='w1-b']")).to_have_class(SELECTED)
        value_l = teacher.get_by_test_id("value-L").inner_text()
        grad_w1 = teacher.get_by_test_id("grad-w1").inner_text()
        server.stop()
        for pg in (teacher, student):
            expect(pg.get_by_label("room problem")).to_contain_text(f"room {code}")
        # the same data dir, as a restart has: the room claim on disk says whose the code is
        own_server.append(Server(tmp_path / "a", port=server.port))
        back = {"timeout": 40_000}
        expect(teacher.get_by_label("room", exact=True)).to_contain_text(
            f"Leading room {code}", **back
        )
        expect(teacher.get_by_label("room problem")).to_have_count(0, **back)
        expect(student.get_by_label("room", exact=True)).to_contain_text(
            f"Following room {code}", **back
        )
        expect(student.get_by_label("room problem")).to_have_count(0, **back)
        # the last run came back with the room (room_archive.py): the student who rejoined and
        # a page that joins only now see its values and gradients, and the teacher's selected
        # wire, not an empty canvas
        for pg in (student, after):
            if pg is after:
                pg.goto(link)
                expect(pg.get_by_label("room", exact=True)).to_contain_text(
                    f"Following room {code}", **back
                )
            expect(pg.get_by_test_id("value-L")).to_have_text(value_l)
            expect(pg.get_by_test_id("grad-w1")).to_have_text(grad_w1)
            expect(pg.get_by_role("region", name="lesson")).to_contain_text("step 2 of 4")
            expect(pg.locator(".react-flow__edge[data-id='w1-b']")).to_have_class(SELECTED)
        after.screenshot(path=str(SHOTS / "room-joiner-after-restart.png"))
        # and the lesson goes on: the teacher's run reaches the student
        run_forward(teacher)
        expect(student.get_by_test_id("value-L")).to_have_text(
            teacher.get_by_test_id("value-L").inner_text(), **back
        )
        student.screenshot(path=str(SHOTS / "room-student-after-restart.png"))
    finally:
        for pg in (teacher, student, late, after):
            pg.context.close()
    assert not errors, errors
