"""Wiring help: a wire the canvas refuses says why, where it was dropped, instead of snapping
back in silence."""

from editor import drag_op, open_editor, wire
from playwright.sync_api import expect


def test_a_refused_wire_says_why_where_it_was_dropped(page):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    a = drag_op(page, "add", 150, 200)
    b = drag_op(page, "add", 450, 220)
    wire(page, a, b)
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    # b already reads a: a wire from b back into a would close a cycle
    port = page.get_by_label(f"{a} input input", exact=True)
    wire(page, b, a)
    refused = page.get_by_role("alert", name="wire refused")
    expect(refused).to_have_text("this wire would make a cycle")
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    # shown where the wire was dropped: beside the port it was dropped on
    at, box = port.bounding_box(), refused.bounding_box()
    assert abs(box["y"] + box["height"] / 2 - (at["y"] + at["height"] / 2)) < 30, (at, box)
    assert 0 <= box["x"] - at["x"] < 60, (at, box)
    # a second wire into a full input says so too
    c = drag_op(page, "add", 150, 420)
    wire(page, c, b)
    expect(refused).to_have_text("input 'input' already has an edge")
    expect(refused).to_be_hidden(timeout=8000)  # and goes away by itself
