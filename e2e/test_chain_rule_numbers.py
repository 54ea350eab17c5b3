"""The chain rule on a tensor edge shows its numbers, as a person reads it after one click on
Backward and one on the edge: upstream ⊙ local = edge (`[0.5, 0.5] ⊙ 3 = [1.5, 1.5]`), and a
compact matrix form for tensors past 16 elements."""

import os
from pathlib import Path

from editor import check_param, last_run, open_editor, select_node, set_param, wait_finished
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def backward(page):
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before)


def test_a_small_tensor_edge_shows_upstream_times_local_equals_edge(page):
    open_editor(page, "mean-of-3a")
    backward(page)
    page.get_by_test_id("edge-a-b").click()
    chain = page.get_by_role("region", name="chain rule")
    expect(chain.get_by_label("upstream times local equals edge")).to_contain_text(
        "[0.5, 0.5] ⊙ 3 = [1.5, 1.5]"
    )
    expect(chain.locator(".ex-upstream")).to_contain_text("upstream ∂L/∂b (2) = [0.5, 0.5]")
    SHOTS.mkdir(parents=True, exist_ok=True)
    chain.screenshot(path=str(SHOTS / "chain-small.png"))


def test_a_big_tensor_edge_shows_a_compact_matrix(page):
    open_editor(page, "broadcast-sum-back")
    select_node(page, "X")
    set_param(page, "shape", "6, 5")
    check_param(page, "requires_grad")
    select_node(page, "w")
    set_param(page, "value", "[1., 2., 3., 4., 5.]")
    backward(page)
    page.get_by_test_id("edge-X-y").click()
    chain = page.get_by_role("region", name="chain rule")
    steps = chain.locator(".ex-steps")
    expect(steps).to_have_attribute("data-full", "false")
    product = chain.get_by_label("upstream times local equals edge")
    # X's local derivative is w on every row: written as a 6x5 matrix in short, with …
    expect(product).to_contain_text("[[1, 2, …, 4, 5],")
    expect(product).to_contain_text("…")
    chain.screenshot(path=str(SHOTS / "chain-big.png"))


def test_a_softmax_edge_shows_the_registry_s_jacobian_and_no_per_element_local(page):
    """softmax's local derivative is a Jacobian (GET /api/ops says so): edge ÷ upstream is not
    it, so the panel writes the rule and the edge's numbers, without a local per element."""
    open_editor(page, "softmax-expected-value")
    backward(page)
    page.get_by_test_id("edge-logits-p").click()
    chain = page.get_by_role("region", name="chain rule")
    formula = chain.locator(".ex-formula")
    expect(formula).to_contain_text("the rule for softmax")
    expect(formula).to_contain_text("diag(s) − s·sᵀ (s = softmax(input) along dim −1; a Jacobian")
    expect(chain.locator(".ex-product")).to_contain_text("times a Jacobian, not elementwise")
    expect(chain.get_by_label("upstream times local equals edge")).to_have_count(0)
    chain.screenshot(path=str(SHOTS / "chain-jacobian.png"))
