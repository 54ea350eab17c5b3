"""Backward in one click, as a person uses it: the button runs from the document's target,
Ctrl+Shift+Enter does the same (as the help says), the ▾ beside it opens the target list named
by the nodes' labels, and Escape or a click outside closes that popover. Step texts, the chain
rule and the toasts name nodes as people named them."""

import re

from editor import click_wire, last_run, open_editor, wait_finished
from playwright.sync_api import expect


def pane(page):
    return page.get_by_label("graph canvas").locator(".react-flow__pane")


def test_backward_runs_in_one_click_and_from_the_keyboard(page):
    open_editor(page, "square-of-a-sum")
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before)
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 10")
    expect(page.get_by_role("dialog", name="backward target")).to_have_count(0)
    # the help lists the shortcut; it runs backward, with no popover in between
    page.get_by_role("button", name="Help").click()
    expect(page.get_by_role("dialog")).to_contain_text("Ctrl+Shift+Enter")
    page.keyboard.press("Escape")
    before = last_run(page)
    pane(page).click(position={"x": 600, "y": 600})
    page.keyboard.press("Control+Shift+Enter")
    wait_finished(page, before)
    expect(page.get_by_role("status").filter(has_text="backward run finished")).to_be_visible()


def test_the_options_popover_names_nodes_by_label_and_closes_like_a_popover(page):
    open_editor(page, "five-weight-network")
    more = page.get_by_role("button", name="Backward options", exact=True)
    more.click()
    picker = page.get_by_role("dialog", name="backward target")
    target = picker.get_by_label("backward from")
    expect(target).to_have_value("L")
    labels = target.locator("option").all_inner_texts()
    assert "10 - d" in labels and "L = (10 - d).sum()" in labels, labels
    assert "diff" not in labels
    page.keyboard.press("Escape")
    expect(picker).to_have_count(0)
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(picker).to_be_visible()
    pane(page).click(position={"x": 500, "y": 700})
    expect(picker).to_have_count(0)
    # from the popover, with a target picked by its label
    more.click()
    before = last_run(page)
    target.select_option(label="10 - d")
    picker.get_by_role("button", name="run backward").click()
    wait_finished(page, before, "error")  # 10 - d is not one number: PyTorch refuses it
    # the error toast names the node as the person named it
    toast = page.get_by_role("alert").filter(has_text="grad can be implicitly created")
    expect(toast).to_be_visible()
    assert "diff" not in toast.inner_text()


def test_step_texts_and_the_chain_rule_use_labels(page):
    open_editor(page, "five-weight-network")
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before)
    page.get_by_role("button", name="step mode").click()
    steps = page.get_by_role("group", name="step mode")
    caption = steps.get_by_role("status")
    forward = steps.get_by_role("button", name="step forward")
    seen = []
    while forward.is_enabled():
        forward.click()
        seen.append(caption.inner_text())
    assert "backward: L sends a gradient back to 10 - d" in seen, seen
    assert not any("diff" in s for s in seen), seen
    steps.get_by_role("button", name="exit step mode").click()
    click_wire(page, "diff-L")
    chain = page.get_by_role("region", name="chain rule")
    heading = chain.get_by_role("heading")
    expect(heading).to_have_text(re.compile(r"Chain rule on 10 - d → L\.input"))
