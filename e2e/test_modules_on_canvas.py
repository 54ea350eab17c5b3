"""Modules in the browser: select nodes and make a module of them, run backward, open the
instance and see the gradients on the wires inside it, go back out with the breadcrumb, drag a
second instance from the palette, wire it in, run again; unpack puts the nodes back."""

import os
import re
from pathlib import Path

from editor import (
    click_wire,
    edge_grad,
    node_ids,
    open_editor,
    run_backward,
    wire,
    zoom_to_labels,
)
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
NUMBER = re.compile(r"\d")


def _select(page, *nodes):
    """Click the first node, Ctrl+click the others (React Flow's multi-selection)."""
    for i, n in enumerate(nodes):
        page.get_by_test_id(f"node-{n}").locator(".op-node-title").click(
            modifiers=["Control"] if i else []
        )
    expect(page.locator(".react-flow__node.selected")).to_have_count(len(nodes))


def _inner_gradient(page, edge):
    """The wire `edge` inside the opened module carries a gradient: drawn in the gradient's
    colour, with its number in the chain-rule panel once clicked."""
    expect(page.locator(f".react-flow__edge[data-id='{edge}'] path.has-grad")).to_have_count(1)
    click_wire(page, edge)
    chain = page.get_by_role("region", name="chain rule")
    expect(chain.locator(".ex-grad").first).to_contain_text(NUMBER)


def test_make_open_reuse_and_unpack_a_module(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    # X -> layer1 -> activation -> layer2 ...: the first layer and its relu become a module
    _select(page, "layer1", "activation")
    page.get_by_test_id("node-activation").locator(".op-node-title").click(button="right")
    page.get_by_role("menuitem", name=re.compile("Make module")).click()
    dialog = page.get_by_role("dialog", name="Make module")
    name = dialog.get_by_label("module name")
    name.fill("2nd")
    expect(dialog.get_by_role("alert")).to_contain_text("Python class name")
    name.fill("Block")
    dialog.get_by_role("button", name="Make module").click()
    expect(dialog).to_have_count(0)

    block = page.get_by_label("module block1", exact=True)
    expect(block).to_contain_text("Block")
    expect(page.get_by_test_id("node-layer1")).to_have_count(0)
    expect(block.get_by_label("block1 input layer1_input")).to_have_count(1)
    expect(block.get_by_label("block1 output activation_out")).to_have_count(1)

    # one undo step takes it back, redo makes it again
    page.keyboard.press("Control+z")
    expect(page.get_by_test_id("node-layer1")).to_have_count(1)
    expect(block).to_have_count(0)
    page.keyboard.press("Control+Shift+z")
    expect(block).to_have_count(1)

    run_backward(page)
    # the closed module shows what its output port gave
    expect(page.get_by_test_id("value-block1/activation_out")).to_contain_text(NUMBER)

    # open it: the definition's nodes, the opened instance's values and gradients on them
    block.dblclick()
    crumbs = page.get_by_label("breadcrumbs")
    expect(crumbs).to_contain_text("Graph")
    expect(crumbs).to_contain_text("block1 (Block)")
    expect(page.get_by_test_id("node-layer1")).to_have_count(1)
    expect(page.get_by_test_id("node-layer1_input")).to_have_count(1)
    expect(page.get_by_test_id("grad-layer1")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("value-activation")).to_contain_text(NUMBER)
    _inner_gradient(page, "layer1-activation")
    zoom_to_labels(page)
    inner = edge_grad(page, "layer1-activation")
    assert NUMBER.search(inner), inner
    expect(page.get_by_test_id("leafgrad-layer1.weight")).to_contain_text(NUMBER)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "module-opened.png"))

    # back out with the breadcrumb
    crumbs.get_by_role("button", name="Graph").click()
    expect(crumbs).to_have_count(0)
    expect(page.get_by_label("module block1", exact=True)).to_have_count(1)
    expect(page.get_by_test_id("node-layer2")).to_have_count(1)

    # a second instance from the palette, with its own seed, between block1 and layer2
    palette = page.get_by_role("navigation", name="op palette")
    palette.get_by_role("button", name="module Block", exact=True).drag_to(
        page.get_by_label("graph canvas"), target_position={"x": 700, "y": 650}
    )
    second = page.get_by_label("module block2", exact=True)
    expect(second).to_have_count(1)
    # its own parameters: the next seed, added to the seeds of the sources inside it
    expect(page.get_by_label("inspector").get_by_label("seed")).to_have_value("1")
    click_wire(page, "activation-layer2")
    page.keyboard.press("Delete")
    wire(page, "block1", "block2", port="layer1_input", out="activation_out")
    wire(page, "block2", "layer2", out="activation_out")
    assert "block2" in node_ids(page)
    run_backward(page)
    first = page.get_by_test_id("value-block1/activation_out")
    expect(first).to_contain_text(NUMBER)
    expect(page.get_by_test_id("value-block2/activation_out")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("grad-layer2")).to_contain_text(NUMBER)

    # the second instance opens on its own records
    second.dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text("block2 (Block)")
    _inner_gradient(page, "layer1-activation")
    page.get_by_label("breadcrumbs").get_by_role("button", name="Graph").click()

    # unpack the first: its nodes are back in the graph, the rest as it was
    page.get_by_label("module block1", exact=True).click(button="right")
    page.get_by_role("menuitem", name=re.compile("Unpack")).click()
    expect(page.get_by_test_id("node-layer1")).to_have_count(1)
    expect(page.get_by_test_id("node-activation")).to_have_count(1)
    expect(page.get_by_label("module block1", exact=True)).to_have_count(0)
    run_backward(page)
    expect(page.get_by_test_id("value-block2/activation_out")).to_contain_text(NUMBER)


def test_problems_inside_a_module_show_where_they_are(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    _select(page, "layer1", "activation")
    page.keyboard.press("Control+g")  # the shortcut; the name offered is taken as it is
    dialog = page.get_by_role("dialog", name="Make module")
    expect(dialog.get_by_label("module name")).to_have_value("Block1")
    dialog.get_by_label("module name").press("Enter")
    block = page.get_by_label("module block1_1", exact=True)
    expect(block).to_have_count(1)

    # inside, unwire the relu: a problem of the definition, at the node inside each instance
    block.dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text("block1_1 (Block1)")
    click_wire(page, "layer1-activation")
    page.keyboard.press("Delete")
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_test_id("node-activation").get_by_role("alert")).to_contain_text("input")
    page.get_by_label("breadcrumbs").get_by_role("button", name="Graph").click()
    expect(block.get_by_role("alert")).to_contain_text("activation:")

    # Ctrl+Shift+G unpacks the selected instance (the one just left); Ctrl+Z packs it again
    expect(page.locator(".react-flow__node.selected")).to_have_count(1)
    page.keyboard.press("Control+Shift+g")
    expect(page.get_by_test_id("node-activation")).to_have_count(1)
    expect(block).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(block).to_have_count(1)
