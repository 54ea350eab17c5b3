"""Details of the editor, driven as a person would: short trainings keep their
progress (their first packets can overtake the ack that names them), training settings refuse
bad values at the field, the first node dropped on an empty canvas lands under the cursor, and
the chain-rule panel names the real reason when no gradient flows along an edge."""

import re

from editor import click_wire, drag_op, open_editor, run_backward
from playwright.sync_api import expect


def test_short_trainings_keep_every_step_and_the_loss(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    status = panel.get_by_label("training status")
    steps_field = panel.get_by_label("steps", exact=True)
    train = panel.get_by_role("button", name="Train", exact=True)
    # a few steps are over in milliseconds: the whole training can come before the ack
    for steps in (5, 20, 3, 10, 1, 7):
        steps_field.fill(str(steps))
        steps_field.press("Enter")
        expect(steps_field).to_have_value(str(steps))
        train.click()
        expect(status).to_have_attribute("data-status", "ok")
        # the status line shows the last step and its loss, as the toast does
        expect(status).to_have_text(re.compile(rf"^ok · step {steps} / {steps} · loss [\d.e+-]+$"))
        toast = page.get_by_role("status").filter(has_text=f"finished after {steps} steps")
        expect(toast).to_be_visible()
        shown = re.search(r"loss ([\d.e+-]+)", status.inner_text()).group(1)
        told = re.search(r"loss ([\d.e+-]+)", toast.inner_text()).group(1)
        # the status shows the last step's minibatch loss; the toast the finished loss
        assert shown and told
    expect(panel.get_by_role("img", name="loss chart")).to_be_visible()


def test_training_settings_refuse_bad_values_with_the_reason(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    train = panel.get_by_role("button", name="Train", exact=True)
    cases = [
        ("learning rate", "-1", "the learning rate must be greater than 0"),
        ("steps", "0", "steps must be at least 1"),
        ("steps", "-5", "steps must be at least 1"),
        ("steps", "2.5", "steps must be a whole number"),
        ("batch size (0: all)", "-3", "the batch size must be at least 0"),
    ]
    for label, bad, reason in cases:
        field = panel.get_by_label(label, exact=True)
        before = field.input_value()
        field.fill(bad)
        field.press("Tab")  # leaving the field commits it
        expect(field).to_have_value(bad)  # kept, not silently undone
        expect(field).to_have_attribute("aria-invalid", "true")
        expect(panel.get_by_role("alert").filter(has_text=reason)).to_be_visible()
        expect(train).to_be_disabled()
        field.fill(before)
        field.press("Enter")
        expect(panel.get_by_role("alert")).to_have_count(0)
        expect(train).to_be_enabled()


def _viewport(page):
    return page.locator(".react-flow__viewport").get_attribute("style")


def _under(page, node, x, y):
    """Whether canvas point (x, y) lies on `node`."""
    canvas = page.get_by_label("graph canvas").bounding_box()
    box = page.get_by_test_id(f"node-{node}").bounding_box()
    px, py = canvas["x"] + x, canvas["y"] + y
    return box["x"] <= px <= box["x"] + box["width"] and box["y"] <= py <= box["y"] + box["height"]


def test_the_first_node_on_an_empty_canvas_lands_where_it_is_dropped(page):
    open_editor(page, "square-of-a-sum")
    page.get_by_role("button", name="New", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(0)
    page.wait_for_timeout(300)  # whatever the canvas does on New is done
    view = _viewport(page)
    first = drag_op(page, "tensor", 150, 150)
    page.wait_for_timeout(300)  # a fit would have happened by now
    assert _viewport(page) == view, "adding a node moved the view"
    assert _under(page, first, 150, 150)
    second = drag_op(page, "tensor", 600, 420)
    page.wait_for_timeout(300)
    assert _under(page, second, 600, 420)
    assert _under(page, first, 150, 150)  # the second drop did not land on the first
    assert not _under(page, second, 150, 150)


def test_chain_rule_names_the_op_that_sends_no_gradient(page):
    open_editor(page, "detach-stops-gradient")
    run_backward(page)
    click_wire(page, "y-z")
    chain = page.get_by_role("region", name="chain rule")
    expect(chain).to_contain_text("detach sends no gradient back to its input")
    expect(chain).not_to_contain_text("does not require grad")

    open_editor(page, "branch-square-or-negate")
    run_backward(page)
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 4")
    page.get_by_test_id("edge-x-cond").click()
    chain = page.get_by_role("region", name="chain rule")
    expect(chain).to_contain_text("a comparison (gt) has no gradient")
    expect(chain).not_to_contain_text("x does not require grad")
