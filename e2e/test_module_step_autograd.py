"""Step mode and the autograd view go into modules: with an instance open on the canvas, the
autograd view marks the grad_fn nodes of its inner nodes and names them by their inner ids,
and stepping through the run shows the inner nodes' records on the opened module's canvas;
back at the graph, the same records light up the instance as a whole."""

import os
import re
from pathlib import Path

from editor import make_module, open_editor, run_backward
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _canvas_selected(page):
    return page.get_by_label("graph canvas").locator(".react-flow__node.selected")


def test_autograd_view_inside_an_opened_module(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    block = make_module(page, ["layer1", "activation"], "Block")
    run_backward(page)
    page.get_by_role("tab", name="autograd graph").click()
    graph = page.get_by_role("region", name="autograd graph")
    expect(graph.locator(".ag-node").first).to_be_visible()
    # at the graph: inner nodes go by their paths, nothing is marked
    expect(graph.get_by_label(f"ReluBackward0 of {block}/activation", exact=True)).to_have_count(1)
    expect(graph.locator(".react-flow__node.ag-scope")).to_have_count(0)
    # the instance selected lights up every grad_fn of its inside
    page.get_by_label(f"module {block}", exact=True).locator(".op-node-title").click()
    expect(graph.locator(".react-flow__node.ag-selected")).not_to_have_count(0)
    expect(graph.get_by_label(f"ReluBackward0 of {block}/activation", exact=True)).to_have_class(
        re.compile("ag-selected")
    )

    # opened: its grad_fns are marked and named as the nodes inside are (by their readable
    # names, as everywhere in the view: the template labels activation "h = relu(h)"), the
    # rest dimmed
    page.get_by_label(f"module {block}", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text(f"{block} (Block)")
    relu = graph.get_by_label("ReluBackward0 of h", exact=True)
    expect(relu).to_have_class(re.compile("ag-scope"))
    expect(graph.locator(".react-flow__node.ag-outside")).not_to_have_count(0)
    expect(graph).to_contain_text(f"belong to {block}, the module open on the canvas")
    # selecting an inner node lights up its grad_fn
    page.get_by_test_id("node-activation").locator(".op-node-title").click()
    expect(relu).to_have_class(re.compile("ag-selected"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "module-autograd.png"))
    # clicking a grad_fn selects its node; one outside the module goes back out to it
    page.get_by_label("graph canvas").click(position={"x": 400, "y": 780})
    relu.click()
    expect(_canvas_selected(page)).to_have_attribute("data-id", "activation")
    graph.get_by_label(re.compile("^MeanBackward0 of ")).click()
    expect(page.get_by_label("breadcrumbs")).to_have_count(0)
    expect(_canvas_selected(page)).to_have_attribute("data-id", "loss")


def test_step_mode_inside_an_opened_module(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    block = make_module(page, ["layer1", "activation"], "Block")
    run_backward(page)
    page.get_by_label(f"module {block}", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text(f"{block} (Block)")

    page.get_by_role("button", name="step mode").click()
    steps = page.get_by_role("group", name="step mode")
    caption = steps.get_by_role("status")
    position = steps.get_by_label("step position")
    total = int(re.search(r"/ (\d+)", position.inner_text()).group(1))
    scrubber = steps.get_by_role("slider", name="replay position")
    scrubber.focus()
    # step until the record of the inner linear layer: named as the node inside is (its
    # readable name: the template labels layer1 "h = layer1(X)"), and lit up on it
    seen = []
    for i in range(1, total + 1):
        page.keyboard.press("ArrowRight")
        expect(position).to_have_text(f"{i} / {total}")
        seen.append(caption.inner_text())
        if seen[-1].startswith("forward: h computed"):
            break
    else:
        raise AssertionError(f"no record of the inner layer1: {seen}")
    # the records before it, outside the opened instance, say so
    assert any(
        re.search(r"^forward: X computed.*\(outside block1, the module open\)$", s) for s in seen
    ), seen
    assert "(outside" not in seen[-1], seen[-1]
    layer1 = page.get_by_test_id("node-layer1")
    expect(layer1).to_have_class(re.compile(r"\bfocused\b"))
    expect(page.get_by_test_id("value-layer1")).to_contain_text(re.compile(r"\d"))
    # the relu after it is not computed yet at this step
    expect(page.get_by_test_id("value-activation")).to_have_count(0)
    page.screenshot(path=str(SHOTS / "module-step.png"))

    # at the graph, the same step lights the instance up as a whole
    page.get_by_label("breadcrumbs").get_by_role("button", name="Graph").click()
    expect(page.get_by_label(f"module {block}", exact=True)).to_have_class(
        re.compile(r"\bfocused\b")
    )
    expect(caption).to_have_text(
        re.compile(rf"^forward: {block}/layer1 computed.*\(inside {block}\)$")
    )
    # and going into it again, the step goes on there
    page.get_by_label(f"module {block}", exact=True).dblclick()
    scrubber.focus()
    page.keyboard.press("ArrowRight")
    expect(caption).to_have_text(re.compile(r"^forward: h computed$"))
    expect(page.get_by_test_id("node-activation")).to_have_class(re.compile(r"\bfocused\b"))
    expect(page.get_by_test_id("value-activation")).to_contain_text(re.compile(r"\d"))
