"""Issue 35, a room spread over two server processes on Redis (`--message-queue`), in
Chromium: the teacher at a 1024x768 projector on one process, three students at 1280x800, one
on the same process and two on the other. The teacher's run and selected wire reach all of
them; a predict round gets three answers (two right, one wrong) from both processes, the
teacher sees them all, and after the reveal each student sees whether they were right."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis
from editor import click_wire, join_room, open_editor, run_backward, start_room
from harness import Server, free_port
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
SELECTED = re.compile(r"\bselected\b")


@pytest.fixture
def two_processes(built_editor, tmp_path):
    exe = shutil.which("redis-server")
    assert exe, "redis-server is missing: run ./scripts/install-redis.sh (make test does)"
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            if redis.Redis.from_url(url).ping():
                break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
    servers = []
    try:
        # one data dir, as processes behind one address share it
        for _ in range(2):
            servers.append(Server(tmp_path / "data", args=("--message-queue", url)))
        yield servers
    finally:
        for s in servers:
            s.stop()
        proc.terminate()
        proc.wait(10)


def new_page(browser, server, viewport):
    context = browser.new_context(viewport=viewport)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.on("dialog", lambda d: d.accept())
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.server = server
    pg.errors = errors
    return pg


def test_a_predict_round_with_students_on_two_processes(browser, two_processes):
    a, b = two_processes
    teacher = new_page(browser, a, {"width": 1024, "height": 768})
    students = [new_page(browser, s, {"width": 1280, "height": 800}) for s in (a, b, b)]
    try:
        open_editor(teacher, "two-paths-add-up")
        code = start_room(teacher)
        run_backward(teacher)
        teacher.get_by_role("button", name="Presenter").click()
        for s in students:
            open_editor(s, "quadratic")
            join_room(s, code)
            expect(s.get_by_test_id("value-L")).to_have_text("24")
        click_wire(teacher, "x-h")
        for s in students:
            expect(s.locator(".react-flow__edge[data-id='x-h']")).to_have_class(SELECTED)
        ask = teacher.get_by_role("region", name="ask the class")
        ask.get_by_role("button", name="Ask the class…").click()
        ask.get_by_role("button", name="Ask").click()
        board = teacher.get_by_role("region", name="class answers")
        for s, text in zip(students, ("33", "[33.0]", "15"), strict=True):
            question = s.get_by_role("region", name="question")
            expect(question).to_contain_text("Predict the gradient on x → h")
            question.get_by_label("your answer").fill(text)
            question.get_by_role("button", name="Answer").click()
            expect(question.get_by_label("answer sent")).to_be_visible()
        count = board.get_by_label("answered")
        expect(count).to_have_attribute("data-answered", "3")
        expect(count).to_have_attribute("data-right", "1")
        board.get_by_role("button", name="Reveal").click()
        # "[33.0]" is a tensor of shape [1] where the gradient is a number: wrong, and said so
        wrong = board.get_by_label("most common wrong answer")
        expect(wrong).to_contain_text("[33] ×1 — the right numbers in the wrong shape")
        expect(board.get_by_label("answers grouped")).to_contain_text("15 ×1 wrong")
        verdicts = ("✓ right", "✗ not quite", "✗ not quite")
        for s, verdict in zip(students, verdicts, strict=True):
            question = s.get_by_role("region", name="question")
            expect(question.get_by_label("your result")).to_have_text(verdict)
            expect(question.get_by_label("class result")).to_contain_text("1 of 3 right")
        SHOTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(SHOTS / "redis-teacher-revealed.png"))
        students[2].screenshot(path=str(SHOTS / "redis-student-revealed.png"))
    finally:
        for pg in (teacher, *students):
            pg.context.close()
    for pg in (teacher, *students):
        assert not pg.errors, pg.errors
