"""Export with the training loop and import it back, driven as a person would: the exported
PyTorch code ends with the loop of the document's training settings, and importing that code
gives a graph whose training tab shows the same settings."""

from editor import open_editor
from playwright.sync_api import expect


def test_the_exported_loop_imports_back_into_the_training_settings(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("42")
    steps.press("Enter")
    expect(steps).to_have_value("42")

    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text("# -- training")
    expect(code).to_contain_text("steps = 42")
    expect(code).to_contain_text("opt.step()")
    torch_code = code.inner_text()
    page.keyboard.press("Escape")

    page.get_by_role("button", name="New", exact=True).click()
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(torch_code)
    page.get_by_role("dialog").get_by_role("button", name="import").click()
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    expect(panel.get_by_label("steps", exact=True)).to_have_value("42")
    expect(panel.get_by_label("loss node")).to_have_value("loss")
