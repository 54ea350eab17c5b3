"""A finite-difference check of a leaf's .grad (issue 34): on `five-weight-network` after one
Backward, each weight's check (two forward runs the page does not show, the element with the
largest gradient moved by ±h) agrees with autograd, and the run on screen shows the same numbers
after it (the check runs that backward again, to keep its tensors on the server)."""

import re

from editor import open_editor, run_backward, select_node, value_of
from playwright.sync_api import expect

NUMBERS = re.compile(
    r"^(\w+)\[(\d+), (\d+)\]: autograd (\S+), finite difference (\S+) \(x ± (\S+)\): "
    r"they differ by (\S+), ✓ agree$"
)


def test_every_weights_grad_agrees_with_its_finite_difference(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "five-weight-network")
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    run_backward(page)
    loss = value_of(page, "L")
    inspector = page.get_by_label("inspector")
    for leaf in ["w1", "a", "w2", "w3", "w4"]:
        select_node(page, leaf)
        inspector.get_by_role("button", name="check .grad by finite differences").click()
        result = inspector.get_by_role("status", name="finite-difference check")
        expect(result).to_have_attribute("data-ok", "true", timeout=20_000)
        m = NUMBERS.match(result.inner_text())
        assert m, result.inner_text()
        assert m.group(1) == leaf
        autograd, numeric = float(m.group(4)), float(m.group(5))
        assert abs(autograd - numeric) <= max(1e-3, 1e-2 * abs(autograd)), m.groups()
        assert abs(autograd) > 0  # the largest element of a gradient that is not all zero
        expect(result).to_be_in_viewport()  # brought into view below the inspector's fold
    page.screenshot(path="e2e/artifacts/fd-check.png")
    # the probes were not shown: the same loss on the canvas, a backward that went well
    expect(page.get_by_label("run status")).to_have_text(re.compile(r"^ok · \d+ ms$"))
    assert value_of(page, "L") == loss
    # and its tensors still open
    select_node(page, "w1")
    inspector.get_by_role("button", name="view value").click()
    expect(page.get_by_role("region", name="tensor viewer")).to_contain_text("3×3")
