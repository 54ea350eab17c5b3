"""A layer trained, then resized: the node says its trained values are of the old size, in
PyTorch's words, and offers a one-click reset to fresh values of the new size, before and after
a refused run; the reset is one edit that Ctrl+Z takes back."""

import os
import re
from pathlib import Path

from editor import open_editor, run_forward, select_node, set_param
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
MESSAGE = (
    "size mismatch for layer1.weight: copying a param with shape torch.Size([8, 2]) from "
    "checkpoint, the shape in current model is torch.Size([4, 2])."
)


def train(page):
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_label("steps", exact=True).fill("40")
    panel.get_by_label("steps", exact=True).press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=60_000
    )


def test_resizing_a_trained_layer_offers_to_reset_its_weights(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("button", name="close lesson").click()
    train(page)
    select_node(page, "layer1")
    weight = page.get_by_label("inspector").get_by_label("weight", exact=True)
    expect(weight).not_to_have_value("")
    trained = weight.input_value()

    set_param(page, "out_features", "4")
    # offered at once (the edit is validated as it is made), before any run
    offer = page.get_by_test_id("stale-layer1")
    expect(offer).to_contain_text(MESSAGE)
    # (the node is named by its label, "h = layer1(x)")
    button = offer.get_by_role("button", name="reset the weights of h to the new size?")
    expect(button).to_be_visible()
    # layer2 read 8 features and now reads 4: its weight is stale too, and offered likewise
    expect(page.get_by_test_id("stale-layer2")).to_contain_text("size mismatch for layer2.weight")

    # a run is refused with the same words, and the offer stays, the words with it (at this
    # zoom the node's large face covers the node's own problem lines)
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_role("alert").filter(has_text="the graph has 3 problems")).to_be_visible()
    node = page.get_by_test_id("node-layer1")
    expect(node).to_have_class(re.compile("has-problem"))
    expect(offer).to_contain_text(MESSAGE)
    expect(button).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "stale-offer.png"))

    button.click()
    expect(page.get_by_test_id("stale-layer1")).to_have_count(0)
    expect(node.get_by_role("alert")).to_have_count(0)
    select_node(page, "layer1")
    expect(weight).to_have_value("")
    page.get_by_test_id("stale-layer2").get_by_role(
        "button", name="reset the weights of logit to the new size?"
    ).click()
    expect(page.get_by_test_id("stale-layer2")).to_have_count(0)
    run_forward(page)
    select_node(page, "layer1")
    expect(page.get_by_label("inspector")).to_contain_text(re.compile(r"120\s*×\s*4"))

    # each reset is one edit: undone, the trained values (and the offer) are back
    page.get_by_label("graph canvas").click(position={"x": 300, "y": 600})
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    select_node(page, "layer1")
    expect(weight).to_have_value(trained)
    expect(page.get_by_test_id("stale-layer1")).to_contain_text(MESSAGE)
