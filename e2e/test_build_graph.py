"""Building a graph the way a person does: drag ops from the palette, wire their ports, type
values in the inspector, run, and read the numbers written on the canvas."""

import json
import re

from editor import (
    check_param,
    drag_op,
    edge_grad,
    grad_of,
    node_ids,
    open_editor,
    run_backward,
    run_forward,
    select_node,
    set_param,
    value_of,
    wire,
)
from playwright.sync_api import expect


def test_square_of_a_sum_built_by_hand(page):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(0)

    x = drag_op(page, "tensor", 150, 150)
    set_param(page, "value", "2")
    check_param(page, "requires_grad")
    y = drag_op(page, "tensor", 150, 420)
    set_param(page, "value", "3")
    check_param(page, "requires_grad")
    a = drag_op(page, "add", 450, 280)
    z = drag_op(page, "pow", 750, 280)
    set_param(page, "scalar", "2")

    wire(page, x, a, "input")
    wire(page, y, a, "other")
    wire(page, a, z, "input")
    expect(page.locator(".react-flow__edge")).to_have_count(3)

    run_backward(page, target=z)
    assert value_of(page, a) == "5"
    assert value_of(page, z) == "25"
    assert grad_of(page, x) == "10"
    assert grad_of(page, y) == "10"
    assert page.get_by_test_id(f"leafgrad-{x}").inner_text() == ".grad 10"
    edges = page.locator(".react-flow__edge").evaluate_all(
        "els => els.map(e => e.getAttribute('data-id'))"
    )
    assert sorted(edge_grad(page, e) for e in edges) == ["10", "10", "10"]
    assert len(node_ids(page)) == 4


def test_wiring_refuses_a_cycle_and_a_full_input(page):
    open_editor(page, "square-of-a-sum")
    before = page.locator(".react-flow__edge").count()
    wire(page, "z", "a", "input")  # z depends on a: a cycle
    wire(page, "z", "a", "other")  # 'other' already has y, and also a cycle
    select_node(page, "x")
    wire(page, "x", "z", "input")  # z's input already holds a
    expect(page.locator(".react-flow__edge")).to_have_count(before)


def test_quick_add_by_double_click_and_undo_redo(page):
    open_editor(page, "square-of-a-sum")
    box = page.get_by_label("graph canvas").bounding_box()
    page.mouse.dblclick(box["x"] + 500, box["y"] + 100)  # clear of the lesson panel
    page.get_by_label("search ops to add").fill("sigm")
    page.keyboard.press("Enter")
    expect(page.locator(".react-flow__node")).to_have_count(5)
    page.get_by_label("graph canvas").click(position={"x": 400, "y": 750})
    page.keyboard.press("Control+z")
    expect(page.locator(".react-flow__node")).to_have_count(4)
    page.keyboard.press("Control+Shift+z")
    expect(page.locator(".react-flow__node")).to_have_count(5)
    assert "sigmoid1" in node_ids(page)


def test_copy_paste_duplicate_delete(page):
    open_editor(page, "square-of-a-sum")
    select_node(page, "x")
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(page.locator(".react-flow__node")).to_have_count(5)
    page.keyboard.press("Control+d")
    expect(page.locator(".react-flow__node")).to_have_count(6)
    page.keyboard.press("Delete")
    expect(page.locator(".react-flow__node")).to_have_count(5)
    page.keyboard.press("Control+z")
    expect(page.locator(".react-flow__node")).to_have_count(6)


def test_bad_param_is_refused_at_the_field(page):
    open_editor(page, "square-of-a-sum")
    select_node(page, "x")
    set_param(page, "value", "[[1, 2], [3]]")
    inspector = page.get_by_label("inspector")
    expect(inspector.get_by_role("alert")).to_contain_text("expected sequence of length 2")
    set_param(page, "value", "two")
    expect(inspector.get_by_role("alert")).to_contain_text("nested lists")
    # the stored value is unchanged: the run still gives the text's numbers
    run_backward(page)
    assert value_of(page, "z") == "25"


def test_editing_a_leaf_recomputes_only_what_depends_on_it(page):
    """A forward run after an edit takes the nodes the edit does not reach from the server's
    cache: they keep their values, drawn faded; the others show the new numbers. The page
    sends the whole graph for the first run and only the edited node for the second."""
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    open_editor(page, "square-of-a-sum")
    run_forward(page)
    assert [value_of(page, n) for n in ("x", "y", "a", "z")] == ["2", "3", "5", "25"]
    assert page.locator("[data-cached]").count() == 0  # a first run computes everything
    select_node(page, "x")
    set_param(page, "value", "4")
    run_forward(page)
    assert [value_of(page, n) for n in ("x", "y", "a", "z")] == ["4", "3", "7", "49"]
    cached = page.locator("[data-cached]").evaluate_all("els => els.map(e => e.dataset.testid)")
    assert cached == ["value-y"]  # y does not depend on x
    expect(page.get_by_test_id("node-y")).to_have_class(re.compile(r"\bcached\b"))
    expect(page.get_by_test_id("node-a")).not_to_have_class(re.compile(r"\bcached\b"))
    runs = [m for m in map(run_message, sent) if m is not None]
    assert "graph" in runs[0] and "edit" not in runs[0]
    x_before = runs[0]["graph"]["nodes"][0]
    assert runs[1]["edit"]["nodes"] == [{**x_before, "params": {**x_before["params"], "value": 4}}]
    assert "graph" not in runs[1]


def run_message(frame):
    """The payload of a Socket.IO `run` message (a text frame `42<ack id>["run", {...}]`)."""
    if not isinstance(frame, str) or not frame.startswith("42"):
        return None
    event = json.loads(frame[2:].lstrip("0123456789"))
    return event[1] if event[0] == "run" else None
