"""Training and classrooms in the browser: an MLP learns xor from its template while the loss
chart and the decision boundary update; a second browser joins the teacher's room and sees
the teacher's graph and runs, cannot edit, and can fork."""

import re

from editor import join_room, open_editor, run_backward, select_node, start_room, value_of
from playwright.sync_api import expect


def test_mlp_learns_xor_and_writes_its_weights_back(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_role("button", name="Train", exact=True).click()
    status = panel.get_by_label("training status")
    # 300 steps on xor can be over before the page is looked at: running, or already done
    expect(status).to_have_attribute("data-status", re.compile("^(running|ok)$"))
    expect(panel.get_by_role("img", name="loss chart")).to_be_visible()
    expect(status).to_have_attribute("data-status", "ok", timeout=60_000)
    loss = float(re.search(r"loss ([\d.e-]+)", status.inner_text()).group(1))
    assert loss < 0.2, status.inner_text()
    expect(panel.get_by_role("img", name=re.compile("decision boundary"))).to_be_visible()

    # the trained weights are in the graph, and one undo takes them out again
    layer = "layer1"  # the template's first linear layer
    select_node(page, layer)
    weight = page.get_by_label("inspector").get_by_label("weight", exact=True)
    expect(weight).not_to_have_value("")
    page.get_by_label("graph canvas").click(position={"x": 400, "y": 750})
    page.keyboard.press("Control+z")
    select_node(page, layer)
    expect(weight).to_have_value("")


def test_a_student_follows_the_teachers_room(page, student_page):
    teacher = page
    open_editor(teacher, "square-of-a-sum")
    code = start_room(teacher)

    student = student_page
    open_editor(student, "quadratic")
    join_room(student, code)
    expect(student.get_by_label("graph name")).to_contain_text("Square of a sum")

    # the teacher's edits and runs reach the student
    select_node(teacher, "x")
    field = teacher.get_by_label("inspector").get_by_label("value", exact=True)
    field.fill("4")
    field.press("Enter")
    run_backward(teacher)
    expect(student.get_by_test_id("value-z")).to_have_text("49")
    expect(student.get_by_test_id("leafgrad-x")).to_have_text(".grad 14")

    # the student cannot drive; forking gives an editable copy
    student.get_by_test_id("node-x").locator(".op-node-title").click()
    student.keyboard.press("Delete")
    expect(student.locator(".react-flow__node")).to_have_count(4)
    student.get_by_role("button", name="Fork").click()
    expect(student.get_by_label("room", exact=True)).to_have_count(0)
    student.get_by_test_id("node-x").locator(".op-node-title").click()
    student.keyboard.press("Delete")
    expect(student.locator(".react-flow__node")).to_have_count(3)
    assert value_of(teacher, "z") == "49"
    expect(teacher.locator(".react-flow__node")).to_have_count(4)
