"""Import of a script with a line that cannot be read: the dialog names the line and what is
wrong, and offers to open the rest, which then runs (the lines that could be read)."""

from editor import grad_of, open_editor, run_backward, value_of
from playwright.sync_api import expect

SCRIPT = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.frob() * 2
z = x * 3
L = z.sum()
L.backward()
"""


def test_the_rest_of_a_script_still_imports(page):
    open_editor(page)
    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(SCRIPT)
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="import", exact=True).click()
    expect(dialog.get_by_role("alert")).to_contain_text("line 3: 'x.frob' is not an op")
    dialog.get_by_role("button", name="import without these lines", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(3)
    run_backward(page)
    assert value_of(page, "L") == "9"
    assert grad_of(page, "x") == "[3, 3]"
