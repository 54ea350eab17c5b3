"""A refused run never reads as a run that went well (issue 34): after a Backward that worked,
an edit that breaks the graph and a second Backward leave no "ok" in the status line and none
of the first run's numbers on the canvas; the status says "refused" and where, and the node
that caused it carries the reason."""

import re

from editor import open_editor, run_backward, select_node, set_param, value_of
from playwright.sync_api import expect

BROADCAST = (
    "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
)


def test_a_refused_backward_shows_the_refusal_at_its_node_not_the_last_ok(page):
    open_editor(page, "square-of-a-sum")
    run_backward(page)
    status = page.get_by_label("run status")
    expect(status).to_have_text(re.compile(r"^ok · \d+ ms$"))
    before = value_of(page, "z")
    assert before

    select_node(page, "x")
    set_param(page, "value", "[1, 2]")
    select_node(page, "y")
    set_param(page, "value", "[1, 2, 3]")
    page.get_by_role("button", name="Backward", exact=True).click()

    expect(status).to_have_attribute("data-status", "refused")
    expect(status).to_have_text("refused at a")
    expect(status).not_to_contain_text("ok")
    assert BROADCAST in status.get_attribute("title")
    # red, as an error reads
    assert status.evaluate("e => getComputedStyle(e).color") == "rgb(185, 28, 28)"
    # the reason at the node that caused it, and no other node blamed
    node_a = page.get_by_test_id("node-a")
    expect(node_a.get_by_role("alert")).to_contain_text(BROADCAST)
    expect(node_a).to_have_class(re.compile("has-problem"))
    expect(page.get_by_test_id("node-z").get_by_role("alert")).to_have_count(0)
    # the first run's numbers are gone: they were not this graph's
    expect(page.get_by_test_id("value-z")).to_have_count(0)
    expect(page.get_by_test_id("grad-x")).to_have_count(0)
    page.screenshot(path="e2e/artifacts/refused-run.png")

    # fixed (scalars again: backward starts from a scalar), the next run is "ok" again and
    # the reason goes
    set_param(page, "value", "3")
    select_node(page, "x")
    set_param(page, "value", "2")
    run_backward(page)
    expect(status).to_have_text(re.compile(r"^ok · \d+ ms$"))
    expect(node_a.get_by_role("alert")).to_have_count(0)
