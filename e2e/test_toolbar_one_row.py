"""The editor's toolbar in one row at 1280x800 (measured as drawn: every control's centre on one
line, the bar one control high), the less-used commands behind More ▾ (a menu that Escape and
a press outside close), and at 1024x768 still every control on screen and usable."""

import os
import re
from pathlib import Path

from editor import open_editor, run_forward
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))

MEASURE = """() => {
  const bar = document.querySelector('.toolbar').getBoundingClientRect();
  const shown = [...document.querySelectorAll(
      '.toolbar button, .toolbar .button, .toolbar .doc-name, .toolbar .run-status')]
    .filter((b) => b.offsetParent !== null && b.getBoundingClientRect().width > 0);
  const boxes = shown.map((b) => b.getBoundingClientRect());
  return {
    height: bar.height, width: bar.width,
    rows: new Set(boxes.map((r) => Math.round((r.top + r.height / 2) / 4))).size,
    controls: shown.length,
    tallest: Math.max(...boxes.map((r) => r.height)),
    inside: boxes.every((r) => r.left >= 0 && r.right <= innerWidth && r.bottom <= bar.bottom + 1),
    names: shown.map((b) => b.getAttribute('aria-label') || b.textContent.trim()),
  };
}"""


def test_the_toolbar_is_one_row_at_1280x800(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_editor(page, "mlp-xor")  # a long graph name
    run_forward(page)  # the run's status takes its place in the bar too
    m = page.evaluate(MEASURE)
    assert m["rows"] == 1, m
    assert m["height"] <= m["tallest"] + 16, m  # one control high, with its padding
    assert m["inside"], m
    for name in ("New", "Templates", "Open", "Save", "More", "Undo", "Redo", "Fit view", "Help"):
        assert name in m["names"], (name, m["names"])
    for name in ("Classroom", "Presenter", "Forward", "Backward", "no_grad", "step mode"):
        assert name in m["names"], (name, m["names"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "toolbar-1280x800.png"))

    # the less-used commands: behind More ▾, a menu closed by Escape and by a press outside
    more = page.get_by_role("button", name="More", exact=True)
    more.click()
    menu = page.get_by_role("menu", name="more commands")
    for item in ("Save as new", "Download", "Upload…", "Export", "Import", "Auto-layout"):
        expect(menu.get_by_role("menuitem", name=item, exact=True)).to_be_visible()
    expect(more).to_have_attribute("aria-expanded", "true")
    page.screenshot(path=str(SHOTS / "toolbar-more-menu.png"))
    page.keyboard.press("Escape")
    expect(menu).to_have_count(0)
    more.click()
    page.get_by_label("graph canvas").click(position={"x": 500, "y": 600})
    expect(menu).to_have_count(0)
    # each item does its job: Export opens the code, Upload… the file picker
    more.click()
    menu.get_by_role("menuitem", name="Export", exact=True).click()
    expect(page.get_by_label("exported code")).to_contain_text("import torch")
    page.keyboard.press("Escape")
    more.click()
    with page.expect_file_chooser() as chooser:
        menu.get_by_role("menuitem", name="Upload…", exact=True).click()
    assert chooser.value.element.get_attribute("aria-label") == "upload a graph document"
    expect(menu).to_have_count(0)
    # the name cut to fit keeps it whole in its title
    name = page.get_by_label("graph name")
    expect(name).to_have_attribute("title", re.compile("Learn XOR"))


def test_at_1024x768_every_control_is_on_screen(page):
    page.set_viewport_size({"width": 1024, "height": 768})
    open_editor(page, "mlp-xor")
    run_forward(page)
    m = page.evaluate(MEASURE)
    assert m["inside"] and m["rows"] <= 2, m
    assert m["height"] <= 2 * m["tallest"] + 20, m
    page.screenshot(path=str(SHOTS / "toolbar-1024x768.png"))
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Auto-layout", exact=True).click()
    expect(page.get_by_role("menu", name="more commands")).to_have_count(0)
    page.get_by_role("button", name="Undo", exact=True).click()  # the layout was one edit
    expect(page.get_by_role("button", name="Undo", exact=True)).to_be_disabled()
