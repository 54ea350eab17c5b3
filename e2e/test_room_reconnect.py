"""Rooms survive reloads (frontend/src/store/room.ts, backend/server/rooms.py `room_resume`):
the teacher's page reloads and leads the same room again with the secret it kept; a student's
page reloads and follows it again; both by themselves."""

from editor import join_room, open_editor, run_backward, start_room
from playwright.sync_api import expect


def test_teacher_and_student_reload_back_into_the_room(page, student_page):
    teacher, student = page, student_page
    open_editor(teacher, "square-of-a-sum")
    code = start_room(teacher)
    open_editor(student, "quadratic")
    join_room(student, code)

    teacher.reload()
    expect(teacher.get_by_label("room", exact=True)).to_contain_text(f"Leading room {code}")
    student.reload()
    expect(student.get_by_label("room", exact=True)).to_contain_text(f"Following room {code}")
    expect(student.get_by_label("graph name")).to_contain_text("Square of a sum")

    # the teacher still drives: a run reaches the student
    run_backward(teacher)
    expect(student.get_by_test_id("value-z")).to_have_text("25")

    # leaving closes the room for the student, and a reload does not bring it back
    teacher.get_by_label("room", exact=True).get_by_role("button", name="Leave").click()
    expect(student.get_by_label("room", exact=True)).to_have_count(0)
    student.reload()
    expect(student.locator(".app.ready")).to_be_visible()
    expect(student.get_by_label("room", exact=True)).to_have_count(0)
