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


CLASSES = """import torch
from torch import nn

class Split(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -1.5]))
        self.k = k

    def forward(self, x):
        h = x * self.w
        return h * self.k, h.sum()

net = Split(2.0)
x = torch.tensor([1.0, 2.0], requires_grad=True)
a, b = net(x)
c, d = net(a)
L = c.sum() + b * d
L.backward()
"""


def test_a_module_with_two_outputs_called_twice_shows_its_ports_and_runs(page):
    open_editor(page)
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(CLASSES)
    page.get_by_role("dialog").get_by_role("button", name="import", exact=True).click()
    # two calls of one instance: nodes of Split_shared, fed by the one parameter net.w
    for node in ("net", "net_2"):
        for port in ("out0", "out1"):
            expect(page.get_by_label(f"{node} output {port}", exact=True)).to_have_count(1)
        expect(page.get_by_label(f"{node} input w", exact=True)).to_have_count(1)
    run_backward(page)
    # h = [0.5, -3]: a = [1, -6], b = -2.5; h' = [0.5, 9]: c = [1, 18], d = 9.5
    assert value_of(page, "L") == "-4.75"
    # dL/dw, summed over the two calls, as PyTorch gives it
    assert grad_of(page, "net.w") == "[8.5, 25]"  # PyTorch prints tensor([8.5, 25.])
