"""Every teaching text's example, opened from the template list, run, and read off the page.
The numbers are the texts' own; where a text prints none (random weights), the loss on the
page must be the one the graph executor computes in-process (tests/graph checks that against
PyTorch)."""

import re

import pytest
from editor import grad_of, open_editor, run_backward, value_of
from playwright.sync_api import expect

from backend.graph import run_records
from backend.graph.document.templates import load_template

# template -> {node: value text}, {leaf: .grad text}
TEXT_NUMBERS = {
    "square-of-a-sum": ({"a": "5", "z": "25"}, {"x": "10", "y": "10"}),
    "mean-of-3a": ({"b": "[6, 9]", "c": "7.5"}, {"a": "[1.5, 1.5]"}),
    "quadratic": ({"y": "11"}, {"x": "7"}),
    "doubling-loop": ({"y": "32"}, {"x": "32"}),
    "branch-on-sign": ({"y": "4"}, {"x": "-4"}),
    "branch-square-or-negate": ({"y": "4"}, {"x": "4"}),
    "detach-stops-gradient": ({"z": "4", "L": "16"}, {"x": "4"}),
}
RANDOM_WEIGHTS = ["five-weight-network", "classifier-cross-entropy", "mlp-mse", "detached-encoder"]


@pytest.fixture(autouse=True)
def a_screen_with_room_for_the_full_text(page):
    """These tests read every line of every node (.grad, weight.grad, edge labels): lines a
    node draws when the fitted graph is at 11/12 zoom or more (canvas/detail.ts). Below that
    it keeps name, value and gradient in large type, so here the screen is large."""
    page.set_viewport_size({"width": 2400, "height": 1500})


def open_template_from_list(page, template_id):
    open_editor(page, "square-of-a-sum")
    page.get_by_role("button", name="Templates", exact=True).click()
    name = load_template(template_id).name
    page.get_by_role("button", name=f"template {name}", exact=True).click()
    expect(page.get_by_label("graph name")).to_contain_text(name)


@pytest.mark.parametrize("template_id", sorted(TEXT_NUMBERS))
def test_text_examples_show_the_texts_numbers(page, template_id):
    open_template_from_list(page, template_id)
    run_backward(page)
    values, grads = TEXT_NUMBERS[template_id]
    for node, text in values.items():
        assert value_of(page, node) == text, node
    for leaf, text in grads.items():
        assert page.get_by_test_id(f"leafgrad-{leaf}").inner_text() == f".grad {text}", leaf


@pytest.mark.parametrize("template_id", RANDOM_WEIGHTS)
def test_random_weight_examples_show_the_executors_loss(page, template_id):
    doc = load_template(template_id)
    result, _ = run_records(doc, "backward")
    expected = f"{float(result.values[doc.target].detach().numpy()):.4g}"
    open_template_from_list(page, template_id)
    run_backward(page)
    assert value_of(page, doc.target) == expected
    assert grad_of(page, doc.target) == "1"
    for key, grad in result.leaf_grads.items():
        shown = page.get_by_test_id(f"leafgrad-{key}").inner_text()
        assert "×".join(map(str, grad.shape)) in shown or grad.numel() <= 6, (key, shown)


def test_branch_not_taken_is_dimmed_and_skipped_node_marked(page):
    open_editor(page, "branch-square-or-negate")
    run_backward(page)
    expect(page.get_by_test_id("node-negx")).to_have_class(re.compile(r"\bskipped\b"))
    expect(page.get_by_test_id("node-negx")).to_contain_text("not run")
    expect(page.get_by_test_id("edge-negx-y-else")).to_contain_text("not taken")
    expect(page.get_by_test_id("edge-grad-sq-y-then")).to_have_text("∇ 1")


def test_detach_edge_carries_no_gradient(page):
    open_editor(page, "detach-stops-gradient")
    run_backward(page)
    expect(page.get_by_test_id("edge-grad-y-z")).to_have_count(0)
    expect(page.get_by_test_id("edge-grad-x-y")).to_have_text("∇ 4")


def test_both_edges_of_x_times_x_show_their_gradient(page):
    """Text 002's x*x + 3x + 1: the three edges out of x carry 2, 2 and 3, and the two into
    x*x (same source, same target) have their labels stacked, neither covering the other."""
    open_editor(page, "quadratic")
    run_backward(page)
    labels = [page.get_by_test_id(f"edge-{e}") for e in ("x-a", "x-a-other", "x-b")]
    for label, grad in zip(labels, ("∇ 2", "∇ 2", "∇ 3")):
        expect(label.get_by_test_id(re.compile("^edge-grad-"))).to_have_text(grad)
    top, bottom = (label.bounding_box() for label in labels[:2])
    assert top["y"] + top["height"] <= bottom["y"]  # `input` above `other`, as the ports are
    # either label can be clicked, and explains its own edge
    chain_rule = page.get_by_role("region", name="chain rule")
    labels[0].click()
    expect(chain_rule).to_contain_text("x → a.input")
    labels[1].click()
    expect(chain_rule).to_contain_text("x → a.other")
