"""The inspector and the file dialogs in detail, driven as a person would: a
number too large for a float is refused at its field, a student following a room sees
read-only fields, saved graphs show the dates they were saved, a clicked Forward keeps its
colours, and a bad upload is explained without pydantic's links."""

import json
import re

from editor import join_room, open_editor, run_forward, select_node, set_param, start_room, value_of
from playwright.sync_api import expect

TOO_LARGE = "is too large: values must be finite numbers"


def value_field(page):
    return page.get_by_label("inspector").get_by_label("value", exact=True)


def test_numbers_too_large_for_a_float_are_refused_at_the_field(page):
    open_editor(page, "square-of-a-sum")  # z = (x + y)**2 with x = 2, y = 3
    select_node(page, "x")
    field = value_field(page)
    inspector = page.get_by_label("inspector")
    for typed in ("1e400", "-1e999", "[2, 1e999]"):
        set_param(page, "value", typed)
        literal = typed.strip("[]").split(", ")[-1]
        expect(inspector.get_by_role("alert")).to_have_text(f"{literal} {TOO_LARGE}")
        # the field keeps what was typed, marked, and not turned into null
        expect(field).to_have_value(typed)
        expect(field).to_have_attribute("aria-invalid", "true")
    # nothing was sent: the run uses the template's x = 2, not 0
    run_forward(page)
    assert value_of(page, "z") == "25"
    # a good value clears the error and is used
    set_param(page, "value", "4")
    expect(inspector.get_by_role("alert")).to_have_count(0)
    run_forward(page)
    assert value_of(page, "z") == "49"

    # the same in a cell of the tensor grid
    set_param(page, "value", "[1, 2]")
    cell = inspector.get_by_label("value[1]", exact=True)
    cell.fill("1e400")
    cell.press("Enter")
    expect(inspector.get_by_role("alert")).to_have_text(f"[1]: 1e400 {TOO_LARGE}")
    expect(field).to_have_value("[1,2]")


def test_a_following_student_sees_read_only_fields(page, student_page):
    teacher = page
    open_editor(teacher, "square-of-a-sum")
    code = start_room(teacher)

    student = student_page
    open_editor(student, "quadratic")
    join_room(student, code)
    student.keyboard.press("Escape")

    inspector = student.get_by_label("inspector")
    hint = inspector.get_by_role("note")
    # with nothing selected: the graph's own fields
    expect(hint).to_contain_text("read-only")
    expect(hint).to_contain_text("Fork")
    expect(inspector.get_by_label("name", exact=True)).not_to_be_editable()
    expect(inspector.get_by_label("description", exact=True)).not_to_be_editable()

    select_node(student, "x")
    field = value_field(student)
    expect(field).to_have_value("2")
    expect(field).not_to_be_editable()
    expect(inspector.get_by_label("requires_grad", exact=True)).to_be_disabled()
    expect(inspector.get_by_label("label", exact=True)).not_to_be_editable()
    expect(inspector.get_by_role("button", name="use as backward target")).to_be_disabled()
    # typing changes nothing, and no "fork to edit" alert comes
    field.click()
    student.keyboard.type("7")
    student.keyboard.press("Enter")
    expect(field).to_have_value("2")
    expect(student.get_by_text("fork it to edit your own copy")).to_have_count(0)

    # the teacher's edit and run still reach the student, whose field shows the new value
    select_node(teacher, "x")
    set_param(teacher, "value", "4")
    run_forward(teacher)
    expect(student.get_by_test_id("value-z")).to_have_text("49")
    select_node(student, "x")
    expect(field).to_have_value("4")
    expect(field).not_to_be_editable()

    # a fork is an editable copy
    student.get_by_role("button", name="Fork").click()
    expect(student.get_by_label("room", exact=True)).to_have_count(0)
    expect(hint).to_have_count(0)
    select_node(student, "x")
    expect(field).to_be_editable()
    set_param(student, "value", "5")
    expect(field).to_have_value("5")
    expect(value_field(teacher)).to_have_value("4")


def test_saved_graphs_show_the_dates_they_were_saved(page):
    open_editor(page, "quadratic")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="revision 1")).to_be_visible()
    select_node(page, "x")
    set_param(page, "value", "5")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="revision 2")).to_be_visible()
    # today's date as this browser writes it (the server runs on the same clock)
    today = page.evaluate("new Date().toLocaleDateString()")

    page.get_by_role("button", name="Open", exact=True).click()
    dialog = page.get_by_role("dialog", name="Open a saved graph")
    entry = dialog.get_by_role("button", name=re.compile("^open Quadratic")).first
    expect(entry).to_contain_text(f"revision 2 · {today}")
    expect(entry).not_to_contain_text("1970")
    dialog.get_by_role("button", name=re.compile("^revisions of Quadratic")).first.click()
    revisions = dialog.get_by_role("button", name=re.compile(r"^revision \d · "))
    expect(revisions).to_have_count(2)
    for i in range(2):
        expect(revisions.nth(i)).to_contain_text(f"revision {i + 1} · {today}")


def test_a_clicked_primary_button_keeps_its_label_readable(page):
    open_editor(page, "square-of-a-sum")
    forward = page.get_by_role("button", name="Forward", exact=True)
    run_forward(page)  # the pointer stays over it, and it keeps the focus
    expect(forward).to_be_focused()
    expect(forward).to_have_css("color", "rgb(255, 255, 255)")
    expect(forward).not_to_have_css("background-color", "rgb(243, 244, 246)")
    # focus from the keyboard is a ring around it
    page.mouse.move(5, 900)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    expect(forward).to_be_focused()
    expect(forward).to_have_css("outline-style", "solid")
    expect(forward).to_have_css("background-color", "rgb(37, 99, 235)")


def test_a_bad_upload_is_explained_without_pydantics_links(page, tmp_path):
    open_editor(page, "square-of-a-sum")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"nodes": 3}))
    page.get_by_label("upload a graph document").set_input_files(str(bad))
    report = page.get_by_role("dialog", name="Upload bad.json")
    expect(report.get_by_role("alert")).to_contain_text(
        "bad.json cannot be opened: it is not a Wiregrad graph document"
    )
    expect(report).to_contain_text("nodes: input should be a valid list")
    expect(report).not_to_contain_text("pydantic.dev")
    expect(report).not_to_contain_text("further information")
