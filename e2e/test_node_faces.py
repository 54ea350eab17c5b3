"""Node faces that teach, driven as a person would: every node says what it computes in
PyTorch notation with its params (`z = a ** 2`, `b = x * 3`), a label names a node without
hiding its op, leaves show their values before any run, and each output port its shape as the
server's validation infers it, before anything runs."""

import os
from pathlib import Path

from editor import drag_op, open_editor, run_forward, select_node, set_param, wire
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def face(page, node):
    return page.get_by_test_id(f"face-{node}")


def test_a_template_shows_what_each_node_computes_before_a_run(page):
    open_editor(page, "square-of-a-sum")
    expect(face(page, "x")).to_have_text("x = tensor(2)")
    expect(face(page, "a")).to_have_text("a = x + y")
    expect(face(page, "z")).to_have_text("z = a ** 2 ◎")  # ◎: backward starts here
    # the leaves' values, before any run
    expect(page.get_by_test_id("leafvalue-x")).to_have_text("2")
    expect(page.get_by_test_id("leafvalue-y")).to_have_text("3")
    # shapes at the output ports, inferred by validation: nothing has run
    expect(page.get_by_test_id("shape-z-out")).to_have_text("scalar")
    expect(page.get_by_label("run status")).to_have_attribute("data-run", "")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.get_by_test_id("node-z").screenshot(path=str(SHOTS / "face-z.png"))
    # after a run the value line shows the result
    run_forward(page)
    expect(page.get_by_test_id("value-z")).to_have_text("25")
    expect(page.get_by_test_id("leafvalue-x")).to_have_count(0)


def test_a_built_graph_writes_its_params_and_keeps_the_op_under_a_label(page):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    x = drag_op(page, "tensor", 150, 200)
    b = drag_op(page, "mul", 450, 220)
    wire(page, x, b)
    select_node(page, x)
    set_param(page, "value", "[2., 3.]")
    expect(page.get_by_test_id(f"leafvalue-{x}")).to_have_text("[2, 3]")
    select_node(page, b)
    set_param(page, "scalar", "3")
    expect(face(page, b)).to_have_text(f"{b} = {x} * 3")
    # the shape flows through the graph as soon as it is known
    expect(page.get_by_test_id(f"shape-{b}-out")).to_have_text("2")
    # a label names the node; the op is still written after the `=`
    label = page.get_by_label("inspector").get_by_label("label", exact=True)
    label.fill("b")
    label.press("Tab")
    expect(face(page, b)).to_have_text(f"b = {x} * 3")
    select_node(page, x)
    set_param(page, "value", "[[1, 2, 3], [4, 5, 6]]")
    expect(page.get_by_test_id(f"shape-{b}-out")).to_have_text("2×3")
    expect(page.get_by_test_id(f"leafvalue-{x}")).to_have_text("[[1, 2, 3], [4, 5, 6]]")
    page.get_by_label("graph canvas").screenshot(path=str(SHOTS / "faces-built.png"))
