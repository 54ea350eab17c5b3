"""Two people open the same stored graph, both edit, both save: the first save is revision 2;
the second is based on revision 1, so the server refuses it (409) and the page asks. "Keep
mine as a new revision" saves it as revision 3, and the history holds both saves."""

import os
import re
import uuid
from pathlib import Path

import requests
from editor import select_node, set_param
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _open_stored(pg, gid):
    pg.goto(f"{pg.server.url}/?graph={gid}")
    expect(pg.locator(".app.ready")).to_be_visible()
    expect(pg.get_by_role("alert").filter(has_text="Connecting")).to_have_count(0)


def _save(pg):
    pg.get_by_role("button", name="Save", exact=True).click()


def test_the_second_save_asks_and_keep_mine_keeps_both(page, student_page):
    url = page.server.url
    doc = requests.get(f"{url}/api/templates/quadratic", timeout=10).json()
    name = f"Shared quadratic {uuid.uuid4().hex[:6]}"
    doc["name"] = name
    gid = requests.post(f"{url}/api/graphs", json=doc, timeout=10).json()["id"]

    first, second = page, student_page
    for pg in (first, second):
        _open_stored(pg, gid)
        expect(pg.get_by_label("graph name")).to_contain_text(name)
    select_node(first, "x")
    set_param(first, "value", "6")
    select_node(second, "x")
    set_param(second, "value", "7")

    _save(first)
    expect(first.get_by_role("status").filter(has_text="revision 2")).to_be_visible()

    _save(second)
    dialog = second.get_by_role("dialog", name="Someone else saved this graph")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("alert")).to_contain_text(
        "Revision 2 was saved after revision 1, which your changes are based on."
    )
    keep = dialog.get_by_role("button", name="Keep mine as a new revision")
    expect(keep).to_be_visible()
    expect(dialog.get_by_role("button", name="Open theirs")).to_be_visible()
    # readable: inside the window, not clipped by its own box
    box, window = dialog.bounding_box(), second.viewport_size
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= window["width"], box
    assert box["y"] + box["height"] <= window["height"], box
    assert dialog.evaluate("el => el.scrollHeight <= el.clientHeight + 1")
    SHOTS.mkdir(parents=True, exist_ok=True)
    second.screenshot(path=str(SHOTS / "save-conflict.png"))

    keep.click()
    expect(dialog).to_have_count(0)
    expect(second.get_by_role("status").filter(has_text="revision 3")).to_be_visible()

    # both saves are in the history: theirs as revision 2, mine as 3
    second.get_by_role("button", name="Open", exact=True).click()
    opened = second.get_by_role("dialog", name="Open a saved graph")
    opened.get_by_role("button", name=f"revisions of {name}", exact=True).click()
    revisions = opened.get_by_role("button", name=re.compile(r"^revision \d · "))
    expect(revisions).to_have_count(3)
    second.screenshot(path=str(SHOTS / "save-conflict-revisions.png"))
    values = []
    for rev in (1, 2, 3):
        stored = requests.get(f"{url}/api/graphs/{gid}?revision={rev}", timeout=10).json()
        (x,) = [n for n in stored["nodes"] if n["id"] == "x"]
        values.append(x["params"]["value"])
    assert values[1:] == [6, 7], values
