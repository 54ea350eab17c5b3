"""A module made from trained layers behaves as an nn.Module: its definition starts from fresh
values, the trained ones stay with the instance that replaced the layers (the graph computes
what it did before), a second instance fed another feature count runs from its own seed, and
an instance fed a new size offers to reset its trained layers, as a plain layer does. Unpack
and paste put their nodes in free space, measured on the drawn boxes."""

import os
import re
from pathlib import Path

from editor import (
    click_wire,
    drag_op,
    node_ids,
    open_editor,
    run_forward,
    select_node,
    set_param,
    value_of,
    wire,
)
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
NUMBER = re.compile(r"\d")
STALE = (
    "size mismatch for block1.layer1.weight: copying a param with shape torch.Size([8, 2]) "
    "from checkpoint, the shape in current model is torch.Size([8, 3])."
)


def train(page, steps="40"):
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_label("steps", exact=True).fill(steps)
    panel.get_by_label("steps", exact=True).press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=60_000
    )


def overlapping(page):
    """The pairs of drawn nodes whose boxes overlap (screen pixels)."""
    return page.locator(".react-flow__node").evaluate_all(
        """els => {
            const b = els.map(e => [e.getAttribute('data-id'), e.getBoundingClientRect()]);
            const out = [];
            for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++) {
                const [p, r] = b[i], [q, s] = b[j];
                if (r.left < s.right - 1 && s.left < r.right - 1 && r.top < s.bottom - 1
                    && s.top < r.bottom - 1) out.push(p + ' / ' + q);
            }
            return out;
        }"""
    )


def test_a_module_made_after_training_starts_new_instances_fresh(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("button", name="close lesson").click()
    train(page)
    run_forward(page)
    trained_loss = value_of(page, "loss")

    # the multi-selection inspector offers "Make module"
    page.get_by_test_id("node-layer1").locator(".op-node-title").click()
    page.get_by_test_id("node-hidden").locator(".op-node-title").click(modifiers=["Control"])
    inspector = page.get_by_label("inspector")
    expect(inspector.get_by_role("heading", level=2)).to_contain_text("2 nodes selected")
    before = set(node_ids(page))
    inspector.get_by_role("button", name="Make module…").click()
    dialog = page.get_by_role("dialog", name="Make module")
    dialog.get_by_label("module name").fill("Block")
    dialog.get_by_role("button", name="Make module").click()
    expect(dialog).to_have_count(0)
    (block1,) = set(node_ids(page)) - before
    assert block1 == "block1"
    # the trained weights are this instance's own
    expect(inspector).to_contain_text("trained values of 1 inner node (its own)")

    # the graph computes what it did: the instance runs with the trained values
    run_forward(page)
    assert value_of(page, "loss") == trained_loss

    # the definition holds no trained weights: inside, layer1's weight is empty
    page.get_by_label(f"module {block1}", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text("block1 (Block)")
    select_node(page, "layer1")
    expect(inspector.get_by_label("weight", exact=True)).to_have_value("")
    page.get_by_label("breadcrumbs").get_by_role("button", name="Graph").click()
    expect(page.get_by_label("breadcrumbs")).to_have_count(0)

    # a second instance, fed three features where the first has two, runs from its own seed
    x3 = drag_op(page, "tensor", 250, 560)
    select_node(page, x3)
    set_param(page, "shape", "120, 3")
    palette = page.get_by_role("navigation", name="op palette")
    palette.get_by_role("button", name="module Block", exact=True).drag_to(
        page.get_by_label("graph canvas"), target_position={"x": 650, "y": 560}
    )
    block2 = page.get_by_label("module block2", exact=True)
    expect(block2).to_have_count(1)
    expect(inspector.get_by_label("seed")).to_have_value("1")
    wire(page, x3, "block2", port="layer1_input", out="out")
    run_forward(page)
    second = page.get_by_test_id("value-block2/hidden_out")
    expect(second).to_contain_text(NUMBER)
    assert value_of(page, "loss") == trained_loss  # the first instance is untouched
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "module-second-instance.png"))

    # the first instance fed three features too: its trained layer is of the old size, and it
    # offers the reset a plain layer offers
    click_wire(page, "data-layer1")
    page.keyboard.press("Delete")
    wire(page, x3, block1, port="layer1_input", out="out")
    offer = page.get_by_test_id(f"stale-{block1}")
    expect(offer).to_contain_text(STALE)
    button = offer.get_by_role(
        "button", name="reset layer1 of block1 to fresh values of the new size?"
    )
    expect(button).to_be_visible()
    page.screenshot(path=str(SHOTS / "module-instance-stale-offer.png"))
    button.click()
    expect(offer).to_have_count(0)
    run_forward(page)
    expect(page.get_by_test_id("value-block1/hidden_out")).to_contain_text(NUMBER)

    # unpacked, the module's nodes land where they cover no other node
    assert overlapping(page) == []
    select_node(page, "block2")
    inspector.get_by_role("button", name="Unpack").click()
    expect(page.get_by_label("module block2", exact=True)).to_have_count(0)
    expect(page.locator(".react-flow__node.selected")).to_have_count(2)
    assert overlapping(page) == []

    # and so do pasted nodes
    select_node(page, "prob")
    page.keyboard.press("Control+c")
    count = len(node_ids(page))
    page.keyboard.press("Control+v")
    expect(page.locator(".react-flow__node")).to_have_count(count + 1)
    assert overlapping(page) == []
    page.screenshot(path=str(SHOTS / "module-unpacked-pasted.png"))


def test_a_conv_module_made_after_training_runs_on_another_channel_count(page):
    """LeNet's first conv block made a module after training; a pasted second instance is a
    new one (its own seed, no trained state), lands in free space, and runs on 3-channel
    images where the first reads the digits' one channel."""
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    page.get_by_role("button", name="close lesson").click()
    train(page, steps="5")
    run_forward(page)
    trained_loss = value_of(page, "loss")

    page.get_by_test_id("node-conv1").click()
    for n in ("relu1", "pool1"):
        page.get_by_test_id(f"node-{n}").click(modifiers=["Control"])
    inspector = page.get_by_label("inspector")
    inspector.get_by_role("button", name="Make module…").click()
    dialog = page.get_by_role("dialog", name="Make module")
    dialog.get_by_label("module name").fill("Features")
    dialog.get_by_role("button", name="Make module").click()
    expect(dialog).to_have_count(0)
    expect(inspector).to_contain_text("trained values of 1 inner node (its own)")
    run_forward(page)
    assert value_of(page, "loss") == trained_loss

    # a second instance by copy and paste: a new one, in free space
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    second = page.get_by_label("module features2", exact=True)
    expect(second).to_have_count(1)
    expect(inspector.get_by_label("seed")).to_have_value("1")
    expect(inspector).not_to_contain_text("trained values")
    assert overlapping(page) == []

    # fed 3-channel images: it makes its own 3-channel kernels and runs
    page.get_by_role("button", name="zoom out").click()
    page.get_by_role("button", name="zoom out").click()
    box = second.bounding_box()
    canvas = page.get_by_label("graph canvas").bounding_box()
    images = drag_op(page, "tensor", box["x"] - canvas["x"] - 160, box["y"] - canvas["y"] + 200)
    select_node(page, images)
    set_param(page, "shape", "2, 3, 8, 8")
    wire(page, images, "features2", port="conv1_input", out="out")
    run_forward(page)
    expect(page.get_by_test_id("value-features2/pool1_out")).to_contain_text(NUMBER)
    assert value_of(page, "loss") == trained_loss
    page.screenshot(path=str(SHOTS / "module-conv-second-instance.png"))
