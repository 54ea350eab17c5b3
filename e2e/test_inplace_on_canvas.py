"""In-place nodes in the browser (issue 25): text 002's example built by hand from the palette
fails at the add_ node in PyTorch's words; step mode shows the tensor's version moving; a
saved value overwritten is explained on the node that saved it."""

import os
import re
from pathlib import Path

from editor import (
    check_param,
    drag_op,
    last_run,
    open_editor,
    run_backward,
    run_forward,
    set_param,
    wait_finished,
    wire,
)
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def test_text_002_built_by_hand_fails_at_the_add_node(page):
    open_editor(page)
    page.get_by_role("button", name="New", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(0)
    x = drag_op(page, "tensor", 150, 200)
    set_param(page, "value", "2")
    check_param(page, "requires_grad")
    set_param(page, "name", "x")
    y = drag_op(page, "mul", 450, 120)
    a = drag_op(page, "add_", 450, 380)
    set_param(page, "scalar", "1")
    wire(page, x, y, "input")
    wire(page, x, y, "other")
    wire(page, x, a, "input")
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    # the add_ node is drawn as a write into its input
    expect(page.get_by_test_id(f"node-{a}").locator(".inplace-badge")).to_have_text("in place")
    expect(page.get_by_test_id(f"node-{y}").locator(".inplace-badge")).to_have_count(0)

    run_backward(page, target=y, status="error")
    expect(page.get_by_test_id(f"error-{a}")).to_have_text(LEAF)
    expect(page.get_by_test_id(f"error-{y}")).to_have_count(0)
    expect(page.get_by_test_id(f"node-{a}")).to_have_class(re.compile("has-problem"))
    # x and y ran before the write, at version 0
    expect(page.get_by_test_id(f"version-{x}")).to_have_text("x @ v0")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.get_by_label("graph canvas").screenshot(path=str(SHOTS / "inplace-leaf-error.png"))


def test_step_mode_shows_the_version_moving(page):
    open_editor(page, "inplace-saved-overwritten")
    run_forward(page)
    expect(page.get_by_test_id("version-w")).to_have_text("a @ v1")
    page.get_by_role("button", name="step mode").click()
    steps = page.get_by_role("group", name="step mode")
    position = steps.get_by_label("step position")
    expect(position).to_have_text(re.compile(r"^0 / \d+"))
    step = steps.get_by_role("button", name="step forward")
    step.click()  # x
    step.click()  # a = x * 2, at version 0
    expect(page.get_by_test_id("version-a")).to_have_text("a @ v0")
    expect(page.get_by_test_id("version-w")).to_have_count(0)
    step.click()  # b = a * a
    step.click()  # a.add_(1): the same tensor, one version later
    expect(steps.get_by_role("status")).to_have_text(re.compile(r"computed \(version 1\)$"))
    expect(page.get_by_test_id("version-w")).to_have_text("a @ v1")
    expect(page.get_by_test_id("value-a")).to_contain_text("4")  # a as b saved it
    expect(page.get_by_test_id("value-w")).to_contain_text("5")


def test_the_version_error_is_explained_on_the_node_that_saved_the_value(page):
    open_editor(page, "inplace-saved-overwritten")
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before, "error")
    error = page.get_by_test_id("error-b")
    expect(error).to_contain_text(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor []], which is output 0 of Add, is at version 1; expected "
        "version 0 instead."
    )
    expect(page.get_by_test_id("error-why-b")).to_have_text(
        "b (MulBackward0) saved a value at version 0 for its backward; w wrote into it in "
        "place, so it is at version 1."
    )
