"""A module instance expanded in place (issue 34): modules are collapsed by default; the
instance's ▸ expands it where it stands, its definition's nodes drawn inside it with what the
last run gave them in this instance, the nodes it grew over moved below it; ▾ collapses it to
the size it had. Measured in the page: where the instance stands, that the inner nodes lie
inside it, that no node lies on another, and that its output node inside shows the value its
collapsed port showed, and that the view was panned to show it whole."""

import os
import re
from itertools import combinations
from pathlib import Path

from editor import assert_numbers_whole, open_editor, run_backward, zoom_to_labels
from playwright.sync_api import expect
from test_projector_layout import inside

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))
NUMBER = re.compile(r"\d")
BOX = """(el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }"""
# the instance's place and size on the canvas (flow units: the view may pan to show it)
FLOW_BOX = r"""(el) => { const n = el.closest('.react-flow__node');
  const m = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec(n.style.transform);
  return {x: +m[1], y: +m[2], width: n.offsetWidth, height: n.offsetHeight}; }"""
NODES = """() => [...document.querySelectorAll('.react-flow__node')].map((n) => {
  const r = n.getBoundingClientRect();
  return {id: n.getAttribute('data-id'),
          left: r.left, right: r.right, top: r.top, bottom: r.bottom};
})"""


def overlap(a, b):
    return (
        a["left"] < b["right"] - 1
        and b["left"] < a["right"] - 1
        and (a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1)
    )


def make_block(page):
    """mlp-mse's first layer and its activation made a module `Block` (instance block1)."""
    for i, n in enumerate(("layer1", "activation")):
        page.get_by_test_id(f"node-{n}").locator(".op-node-title").click(
            modifiers=["Control"] if i else []
        )
    page.get_by_test_id("node-activation").locator(".op-node-title").click(button="right")
    page.get_by_role("menuitem", name=re.compile("Make module")).click()
    dialog = page.get_by_role("dialog", name="Make module")
    dialog.get_by_label("module name").fill("Block")
    dialog.get_by_role("button", name="Make module").click()
    expect(dialog).to_have_count(0)


def test_a_module_instance_expands_in_place_and_collapses_again(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    make_block(page)
    block = page.get_by_label("module block1", exact=True)
    run_backward(page)
    zoom_to_labels(page)  # full detail: the port's value written as the inside writes it
    port_value = page.get_by_test_id("value-block1/activation_out")
    expect(port_value).to_contain_text(NUMBER)
    shown = port_value.inner_text()

    # collapsed by default: no inner node drawn
    expect(page.get_by_role("group", name="inside block1")).to_have_count(0)
    before = block.evaluate(FLOW_BOX)
    block.get_by_role("button", name="expand block1").click()
    inner = page.get_by_role("group", name="inside block1")
    expect(inner).to_be_visible()
    page.wait_for_timeout(300)  # (the nodes it grew over are moved a frame after)

    # where it stood, grown around its inner nodes, each with this instance's records, and
    # whole in view (it was expanded at full detail, part of it past the canvas's edge)
    grown = block.evaluate(FLOW_BOX)
    assert abs(grown["x"] - before["x"]) < 1 and abs(grown["y"] - before["y"]) < 1
    assert grown["width"] > before["width"] + 100 and grown["height"] > before["height"] + 50
    now = block.evaluate(BOX)
    assert inside(now, page.locator(".react-flow").evaluate(BOX)), now
    assert inside(inner.evaluate(BOX), now)
    for node in (
        "block1/layer1_input",
        "block1/layer1",
        "block1/activation",
        "block1/activation_out",
    ):
        card = page.get_by_test_id(f"inside-{node}")
        expect(card).to_be_visible()
        assert inside(card.evaluate(BOX), inner.evaluate(BOX)), node
    expect(page.get_by_test_id("inside-value-block1/layer1")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("inside-grad-block1/layer1")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("inside-value-block1/activation_out")).to_have_text(shown)
    # the nodes it grew over moved below it: none on another
    nodes = page.evaluate(NODES)
    assert not [(a["id"], b["id"]) for a, b in combinations(nodes, 2) if overlap(a, b)], nodes
    assert_numbers_whole(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path="e2e/artifacts/module-expanded-in-place.png")

    # collapsed again: the instance alone, at its size and place
    block.get_by_role("button", name="collapse block1").click()
    expect(inner).to_have_count(0)
    again = block.evaluate(FLOW_BOX)
    for side in ("x", "y", "width", "height"):
        assert abs(again[side] - before[side]) < 1, (side, again, before)
    # and the node menu does the same
    block.locator(".op-node-title").click(button="right")
    page.get_by_role("menuitem", name=re.compile("Expand in place")).click()
    expect(page.get_by_role("group", name="inside block1")).to_be_visible()
