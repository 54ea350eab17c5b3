"""Module definitions as a whole in the browser: rename one from its palette entry (every
instance follows, the name checked as "Make module" checks it, one undo step), delete one
(the dialog says which nodes use it and deletes them with it when asked), and paste an
instance: a new one, with the next seed and so its own parameter values."""

import os
import re
from pathlib import Path

from editor import make_module, node_ids, open_editor, run_forward, select_node, wire
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _palette_entry(page, name):
    palette = page.get_by_role("navigation", name="op palette")
    return palette.get_by_role("button", name=f"module {name}", exact=True)


def _menu(page, name, item):
    _palette_entry(page, name).click(button="right")
    menu = page.get_by_role("menu", name=f"module {name} commands")
    box = menu.bounding_box()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(SHOTS / "module-menu.png"),
        clip={"x": 0, "y": box["y"] - 80, "width": box["x"] + box["width"] + 40, "height": 220},
    )
    menu.get_by_role("menuitem", name=item).click()
    expect(menu).to_have_count(0)


def test_rename_and_delete_a_module(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    first = make_module(page, ["layer1", "activation"], "Block")
    _palette_entry(page, "Block").drag_to(
        page.get_by_label("graph canvas"), target_position={"x": 700, "y": 650}
    )
    second = page.get_by_label("module block2", exact=True)
    expect(second).to_have_count(1)
    wire(page, "X", "block2", port="layer1_input")

    # rename from the palette entry's menu: the name is checked as it is typed
    _menu(page, "Block", "Rename module…")
    dialog = page.get_by_role("dialog", name="Rename module")
    field = dialog.get_by_label("new name")
    expect(field).to_have_value("Block")
    field.fill("class")
    expect(dialog.get_by_role("alert")).to_contain_text("Python keyword")
    expect(dialog.get_by_role("button", name="Rename")).to_be_disabled()
    field.fill("Dense")
    expect(dialog.get_by_role("alert")).to_have_count(0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    dialog.screenshot(path=str(SHOTS / "module-rename.png"))
    dialog.get_by_role("button", name="Rename").click()
    expect(dialog).to_have_count(0)
    expect(_palette_entry(page, "Dense")).to_have_count(1)
    expect(_palette_entry(page, "Block")).to_have_count(0)
    # both instances follow (their ids stay), and the graph still runs
    block1 = page.get_by_label(f"module {first}", exact=True)
    # (zoomed out as graphs open, a face has no text: its title names the module)
    expect(block1).to_have_attribute("title", re.compile("^Dense:"))
    expect(second).to_have_attribute("title", re.compile("^Dense:"))
    run_forward(page)
    # one undo step takes the rename back, redo does it again
    page.keyboard.press("Control+z")
    expect(_palette_entry(page, "Block")).to_have_count(1)
    expect(block1).to_have_attribute("title", re.compile("^Block:"))
    page.keyboard.press("Control+Shift+z")
    expect(_palette_entry(page, "Dense")).to_have_count(1)

    # the instance's inspector offers it too; opened, the breadcrumbs name the new name
    block1.dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text(f"{first} (Dense)")
    page.get_by_label("breadcrumbs").get_by_role("button", name="Graph").click()

    # delete: it says who uses it, and deletes them with it when asked
    _menu(page, "Dense", "Delete module…")
    dialog = page.get_by_role("dialog", name="Delete module")
    expect(dialog.get_by_role("alert")).to_contain_text(
        f"Dense is used by 2 nodes: {first}, block2 in the graph"
    )
    dialog.screenshot(path=str(SHOTS / "module-delete.png"))
    dialog.get_by_role("button", name="Keep it").click()
    expect(dialog).to_have_count(0)
    expect(block1).to_have_count(1)
    _menu(page, "Dense", "Delete module…")
    dialog.get_by_role("button", name="Delete it and its 2 instances").click()
    expect(dialog).to_have_count(0)
    expect(block1).to_have_count(0)
    expect(second).to_have_count(0)
    expect(_palette_entry(page, "Dense")).to_have_count(0)
    expect(page.get_by_text("deleted module Dense and its 2 instances")).to_have_count(1)
    assert "layer2" in node_ids(page)
    # one undo brings the module and both instances back
    page.get_by_label("graph canvas").click(position={"x": 400, "y": 780})
    page.keyboard.press("Control+z")
    expect(block1).to_have_count(1)
    expect(second).to_have_count(1)
    expect(_palette_entry(page, "Dense")).to_have_count(1)


def test_a_pasted_instance_has_its_own_parameters(page):
    open_editor(page, "mlp-mse")
    page.get_by_role("button", name="close lesson").click()
    first = make_module(page, ["layer1", "activation"], "Block")
    # copy the instance with its input, and paste: a second X feeding a new instance
    page.get_by_test_id("node-X").locator(".op-node-title").click()
    page.get_by_label(f"module {first}", exact=True).locator(".op-node-title").click(
        modifiers=["Control"]
    )
    before = set(node_ids(page))
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(page.locator(".react-flow__node")).to_have_count(len(before) + 2)
    (pasted,) = [n for n in set(node_ids(page)) - before if n.startswith("block")]
    page.get_by_label("graph canvas").click(position={"x": 400, "y": 780})  # deselect
    select_node(page, pasted)
    expect(page.get_by_label("inspector").get_by_label("seed")).to_have_value("1")

    run_forward(page)
    original = page.get_by_test_id(f"value-{first}/activation_out")
    copy = page.get_by_test_id(f"value-{pasted}/activation_out")
    expect(original).to_contain_text(re.compile(r"\d"))
    expect(copy).to_contain_text(re.compile(r"\d"))
    # the same input, other initial weights: other outputs
    assert original.inner_text() != copy.inner_text(), original.inner_text()

    # Ctrl+D duplicates with the next seed again
    page.keyboard.press("Control+d")
    expect(page.get_by_label("inspector").get_by_label("seed")).to_have_value("2")
