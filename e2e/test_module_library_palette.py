"""The module library in the browser: a person picks ConvBlock in the palette, chooses its
arguments in a dialog, adds it, wires it between an image batch and a sum, runs backward and
sees the values and gradients, inside the module too; the same arguments again give a second
instance of the same definition; bad arguments are named at their field."""

import re
from pathlib import Path

import requests
from editor import edge_grad, run_backward, wire, zoom_to_labels
from playwright.sync_api import expect

SHOTS = Path(__file__).resolve().parent / "artifacts"
NUMBER = re.compile(r"\d")

DOC = {
    "format": "wiregrad.graph",
    "version": 1,
    "name": "images into a conv block",
    "nodes": [
        {
            "id": "img",
            "op": "tensor",
            "params": {"shape": [2, 3, 8, 8], "init": "randn", "seed": 1, "requires_grad": True},
            "position": {"x": 0, "y": 0},
        },
        {"id": "s", "op": "sum", "params": {}, "position": {"x": 700, "y": 0}},
    ],
    "edges": [],
    "target": "s",
}


def _open(page):
    saved = requests.post(page.server.url + "/api/graphs", json=DOC, timeout=10)
    assert saved.status_code == 201, saved.text
    page.goto(f"{page.server.url}/?graph={saved.json()['id']}")
    expect(page.locator(".app.ready")).to_be_visible()


def _library_dialog(page, entry):
    library = page.get_by_role("navigation", name="op palette").get_by_role(
        "region", name="module library"
    )
    library.get_by_role("button", name=f"library {entry}", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Add {entry}")
    expect(dialog).to_be_visible()
    return dialog


def _arg(dialog, name, value):
    field = dialog.get_by_label(name, exact=True)
    field.fill(value)
    field.press("Tab")  # a field commits what was typed when it loses focus


def test_add_a_conv_block_from_the_library_wire_it_and_see_its_gradients(page):
    _open(page)
    dialog = _library_dialog(page, "ConvBlock")
    expect(dialog).to_contain_text("nn.Conv2d(in_channels, out_channels")
    _arg(dialog, "in_channels", "3")
    _arg(dialog, "out_channels", "4")
    dialog.get_by_label("pool", exact=True).select_option("avg")
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialog.screenshot(path=str(SHOTS / "module-library-dialog.png"))
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)

    block = page.get_by_label("module convblock1", exact=True)
    expect(block).to_contain_text("ConvBlock")
    # the new module is in the palette's own modules now, as any module the graph defines
    palette = page.get_by_role("navigation", name="op palette")
    expect(palette.get_by_role("button", name="module ConvBlock", exact=True)).to_have_count(1)

    wire(page, "img", "convblock1", port="x")
    wire(page, "convblock1", "s", out="y")
    run_backward(page)
    expect(page.get_by_test_id("value-convblock1/y")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("grad-img")).to_contain_text(NUMBER)

    # inside: the conv's weight has its gradient, each wire its own
    block.dblclick()
    crumbs = page.get_by_label("breadcrumbs")
    expect(crumbs).to_contain_text("convblock1 (ConvBlock)")
    expect(page.get_by_test_id("node-conv")).to_have_count(1)
    expect(page.get_by_test_id("node-pool")).to_have_count(1)
    zoom_to_labels(page)
    expect(page.get_by_test_id("leafgrad-conv.weight")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("leafgrad-norm.weight")).to_contain_text(NUMBER)
    expect(page.get_by_test_id("value-norm")).to_contain_text(NUMBER)
    expect(page.locator(".react-flow__edge[data-id='conv-norm'] path.has-grad")).to_have_count(1)
    assert NUMBER.search(edge_grad(page, "relu-pool"))
    page.screenshot(path=str(SHOTS / "module-library-opened.png"))
    crumbs.get_by_role("button", name="Graph").click()

    # the same arguments again: the same definition, a second instance with its own seed
    dialog = _library_dialog(page, "ConvBlock")
    _arg(dialog, "in_channels", "3")
    _arg(dialog, "out_channels", "4")
    dialog.get_by_label("pool", exact=True).select_option("avg")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    expect(page.locator(".react-flow__node[data-id^='convblock']")).to_have_count(2)
    expect(palette.get_by_role("button", name=re.compile("^module ConvBlock"))).to_have_count(1)
    expect(page.get_by_label("inspector").get_by_label("seed")).to_have_value("1")

    # other arguments: a definition of its own, named ConvBlock2; one undo takes it all back
    dialog = _library_dialog(page, "ConvBlock")
    _arg(dialog, "in_channels", "3")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    expect(palette.get_by_role("button", name="module ConvBlock2", exact=True)).to_have_count(1)
    page.keyboard.press("Control+z")
    expect(palette.get_by_role("button", name="module ConvBlock2", exact=True)).to_have_count(0)
    expect(page.locator(".react-flow__node[data-id^='convblock']")).to_have_count(2)


def test_bad_arguments_are_named_at_their_field(page):
    _open(page)
    dialog = _library_dialog(page, "MultiHeadAttention")
    _arg(dialog, "embed_dim", "10")
    _arg(dialog, "num_heads", "4")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog.get_by_role("alert")).to_contain_text("embed_dim must be divisible by num_heads")
    field = dialog.get_by_label("num_heads", exact=True)
    expect(field).to_have_attribute("aria-invalid", "true")
    dialog.screenshot(path=str(SHOTS / "module-library-bad-args.png"))
    _arg(dialog, "num_heads", "five")  # not a number: the field says so, and Add waits
    expect(field).to_have_attribute("aria-invalid", "true")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog.get_by_role("alert").last).to_contain_text("a field above has a problem")
    _arg(dialog, "num_heads", "5")
    expect(dialog.get_by_role("alert")).to_have_count(0)
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_label("module multiheadattention1", exact=True)).to_have_count(1)

    # a list argument, in the shape control: MLPHead's hidden layers
    dialog = _library_dialog(page, "MLPHead")
    _arg(dialog, "hidden_features", "8, 4")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_label("inspector")).to_contain_text("an MLP 16 → 8 → 4 → 10")


def test_an_input_the_module_was_not_made_for_is_refused_at_its_port(page):
    """ConvBlock(in_channels=1) wired to 3-channel images: the instance says what it expected,
    as nn.Conv2d(1, ...) would refuse them."""
    _open(page)
    dialog = _library_dialog(page, "ConvBlock")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    wire(page, "img", "convblock1", port="x")
    wire(page, "convblock1", "s", out="y")
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_label("module convblock1", exact=True).get_by_role("alert")).to_contain_text(
        "expected input with shape [*, 1, any, any], but got input of size [2, 3, 8, 8]"
    )
