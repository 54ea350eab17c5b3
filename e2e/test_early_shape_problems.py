"""Mistakes caught as they are made (issue 34): a matmul whose inner sizes differ is marked with
PyTorch's error and a hint as soon as both shapes are known, before any run, and the mark goes
with the edit that fixes it; a flatten from dim 0 into a linear layer is warned of; a refused
run's problem goes when an edit fixes it, without another run."""

import re

from editor import drag_op, open_editor, select_node, set_param, wire
from playwright.sync_api import expect

MATMUL = "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)"


def test_a_matmul_mismatch_is_marked_with_a_hint_before_any_run(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    x = drag_op(page, "tensor", 150, 150)
    set_param(page, "value", "[[1, 2, 3], [4, 5, 6]]")
    set_param(page, "name", "x")
    w = drag_op(page, "tensor", 150, 420)
    set_param(page, "value", "[[1, 2], [3, 4]]")
    set_param(page, "name", "W")
    m = drag_op(page, "matmul", 480, 280)
    wire(page, x, m, "input")
    node = page.get_by_test_id(f"node-{m}")
    # half-wired: no complaint about the input still to be wired
    page.wait_for_timeout(600)
    expect(node.get_by_role("alert")).to_have_count(0)
    wire(page, w, m, "other")

    expect(node.get_by_role("alert")).to_have_text(MATMUL)
    expect(node).to_have_class(re.compile("has-problem"))
    hint = page.get_by_test_id(f"hint-{m}")
    expect(hint).to_have_text("the inner sizes differ (3 and 2): swap the inputs? (W @ x is 2x3)")
    # nothing was run: the status line is empty
    expect(page.get_by_label("run status")).to_have_text("")
    page.screenshot(path="e2e/artifacts/early-matmul-problem.png")

    # W of 3x2: the product works, and the mark goes without a run
    page.get_by_test_id(f"node-{w}").locator(".op-node-title").click()
    set_param(page, "value", "[[1, 2], [3, 4], [5, 6]]")
    expect(node.get_by_role("alert")).to_have_count(0)
    expect(hint).to_have_count(0)
    expect(page.get_by_test_id(f"shape-{m}-out")).to_have_text("2×2")


def test_a_flatten_from_dim_0_into_a_linear_layer_is_warned_of(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    select_node(page, "flat")
    hint = page.get_by_test_id("hint-flat")
    expect(hint).to_have_count(0)  # start_dim=1 as the template has it
    set_param(page, "start_dim", "0")
    expect(hint).to_contain_text("flattens dim 0 (size 1797) too: the linear layer gets 115,008")
    expect(hint).to_contain_text("Flatten from dim 1?")
    expect(page.get_by_test_id("node-flat")).to_have_class(re.compile("has-warning"))
    page.get_by_role("button", name="Fit view", exact=True).click()
    # at the fit view the large face has no room for the text: a mark, and the tooltip says it
    mark = page.get_by_test_id("mark-flat")
    expect(mark).to_be_visible()
    assert mark.evaluate("e => getComputedStyle(e).color") == "rgb(217, 119, 6)"
    lod = page.get_by_test_id("node-flat").locator(".lod")
    expect(lod).to_have_attribute("title", re.compile("Flatten from dim 1\\?"))
    # the loss it breaks is marked too, as a problem
    expect(page.get_by_test_id("mark-loss")).to_be_visible()
    page.screenshot(path="e2e/artifacts/early-flatten-warning.png")
    set_param(page, "start_dim", "1")
    expect(hint).to_have_count(0)


def test_a_refused_runs_problem_goes_with_the_edit_that_fixes_it(page):
    open_editor(page, "square-of-a-sum")
    page.get_by_test_id("node-y").locator(".op-node-title").click()
    page.keyboard.press("Delete")
    page.get_by_role("button", name="Forward", exact=True).click()
    node_a = page.get_by_test_id("node-a")
    expect(node_a.get_by_role("alert")).to_contain_text("input 'other' of add is not connected")
    # undo brings y and its wire back: the problem goes, no run needed
    page.get_by_label("graph canvas").click(position={"x": 40, "y": 600})
    page.keyboard.press("Control+z")
    expect(page.get_by_test_id("node-y")).to_have_count(1)
    expect(node_a.get_by_role("alert")).to_have_count(0)
    expect(node_a).not_to_have_class(re.compile("has-problem"))
