"""The editor's other workflows, driven through the page: validation errors at their node,
saving and reopening, working copies per tab, export and import, step mode, the chain-rule and
tensor panels, the autograd view, and a lost connection."""

import re

from editor import (
    open_editor,
    run_backward,
    run_forward,
    select_node,
    set_param,
    value_of,
)
from harness import Server
from playwright.sync_api import expect


def test_invalid_graph_shows_pytorchs_error_on_the_node(page):
    open_editor(page, "square-of-a-sum")
    select_node(page, "x")
    set_param(page, "value", "[1, 2]")
    select_node(page, "y")
    set_param(page, "value", "[1, 2, 3]")
    page.get_by_role("button", name="Forward", exact=True).click()
    node_a = page.get_by_test_id("node-a")
    expect(node_a.get_by_role("alert")).to_contain_text(
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    )
    expect(node_a).to_have_class(re.compile("has-problem"))
    expect(page.get_by_test_id("node-z").get_by_role("alert")).to_have_count(0)
    # fixing it clears the problem at the next run
    set_param(page, "value", "[1, 2]")
    run_forward(page)
    expect(node_a.get_by_role("alert")).to_have_count(0)
    assert value_of(page, "a") == "[2, 4]"


def test_missing_input_is_reported_at_its_port(page):
    open_editor(page, "square-of-a-sum")
    page.get_by_test_id("node-y").locator(".op-node-title").click()
    page.keyboard.press("Delete")
    page.get_by_role("button", name="Forward", exact=True).click()
    expect(page.get_by_test_id("node-a").get_by_role("alert")).to_contain_text("other")


def test_save_reload_and_reopen_from_the_store(page):
    open_editor(page, "quadratic")
    select_node(page, "x")
    set_param(page, "value", "5")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="revision 1")).to_be_visible()
    # a reload gets the working copy back
    page.reload()
    expect(page.locator(".app.ready")).to_be_visible()
    select_node(page, "x")
    expect(page.get_by_label("inspector").get_by_label("value", exact=True)).to_have_value("5")
    # a fresh browser (no working copy) finds it in the server's store
    page.evaluate("localStorage.clear()")
    page.goto(page.server.url + "/?template=square-of-a-sum")
    expect(page.get_by_label("graph name")).to_contain_text("Square of a sum")
    page.get_by_role("button", name="Open", exact=True).click()
    dialog = page.get_by_role("dialog", name="Open a saved graph")
    dialog.get_by_role("button", name=re.compile("^open Quadratic")).first.click()
    expect(page.get_by_label("graph name")).to_contain_text("Quadratic")
    run_forward(page)
    # y = x**2 + 3x + 1 at x = 5
    assert value_of(page, "y") == "41"


def _x_is_written(page, value):
    """Wait until a working copy holds the node x at `value` (copies are written 300 ms after
    an edit)."""
    page.wait_for_function(
        """value => Object.keys(localStorage).some(k => {
            if (!k.startsWith("wiregrad.working.")) return false;
            const x = JSON.parse(localStorage.getItem(k)).doc.nodes.find(n => n.id === "x");
            return x && x.params.value === value;
        })""",
        arg=value,
    )


def _edit_x(page, value):
    select_node(page, "x")
    set_param(page, "value", str(value))
    _x_is_written(page, value)


def test_two_tabs_keep_their_own_working_copies(page):
    """Each tab's reload gets its own graph back, whichever tab wrote last; a new tab starts
    from the copy written last."""
    other = page.context.new_page()
    other.server = page.server
    open_editor(page, "quadratic")
    _edit_x(page, 5)
    open_editor(other, "square-of-a-sum")
    _edit_x(other, 7)
    _edit_x(page, 9)  # written last, and `other` has nothing left to write when it goes
    other.reload()
    expect(other.locator(".app.ready")).to_be_visible()
    expect(other.get_by_label("graph name")).to_contain_text("Square of a sum")
    select_node(other, "x")
    expect(other.get_by_label("inspector").get_by_label("value", exact=True)).to_have_value("7")
    page.reload()
    expect(page.locator(".app.ready")).to_be_visible()
    expect(page.get_by_label("graph name")).to_contain_text("Quadratic")
    select_node(page, "x")
    expect(page.get_by_label("inspector").get_by_label("value", exact=True)).to_have_value("9")
    other.close()  # (it writes what it has on the way out, and nothing after)
    _edit_x(page, 11)  # the copy written last
    fresh = page.context.new_page()
    fresh.server = page.server
    open_editor(fresh)
    expect(fresh.get_by_label("graph name")).to_contain_text("Quadratic")
    select_node(fresh, "x")
    expect(fresh.get_by_label("inspector").get_by_label("value", exact=True)).to_have_value("11")
    fresh.close()


def test_export_shows_pytorch_code_and_import_reads_it_back(page):
    open_editor(page, "square-of-a-sum")
    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text("import torch")
    expect(code).to_contain_text(".backward()")
    # what a person prints; the checkbox adds the line-per-value printout the tests read
    expect(code).to_contain_text('print("z", z.item())')
    assert "show(" not in code.inner_text()
    trace = page.get_by_role("checkbox", name="print every value and gradient")
    trace.check()
    expect(code).to_contain_text('show("grad", "x", x.grad)')
    trace.uncheck()
    expect(code).to_contain_text('print("z", z.item())')
    torch_code = code.inner_text()
    page.get_by_role("tab", name="Wiregrad engine").click()
    expect(code).to_contain_text("import engine")
    page.keyboard.press("Escape")

    page.get_by_role("button", name="New", exact=True).click()
    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(torch_code)
    page.get_by_role("dialog").get_by_role("button", name="import").click()
    expect(page.locator(".react-flow__node")).to_have_count(4)
    run_backward(page)
    assert value_of(page, "z") == "25"


def test_import_reports_unsupported_lines(page):
    open_editor(page)
    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill("import torch\nx = torch.tensor(2.0)\nz = foo(x)\n")
    page.get_by_role("dialog").get_by_role("button", name="import").click()
    expect(page.get_by_role("dialog").get_by_role("alert")).to_contain_text(
        "line 3: 'foo' is not a function of the op registry"
    )


def test_step_mode_walks_the_records(page):
    open_editor(page, "square-of-a-sum")
    run_backward(page)
    page.get_by_role("button", name="step mode").click()
    back = page.get_by_role("button", name="step back")
    while back.is_enabled():  # rewind to the start
        back.click()
    expect(page.get_by_label("step position")).to_have_text("0 / 14")
    expect(page.get_by_test_id("value-z")).to_have_count(0)
    for _ in range(4):
        page.get_by_role("button", name="step forward").click()
    expect(page.get_by_label("step position")).to_have_text("4 / 14")
    expect(page.get_by_role("group", name="step mode").get_by_role("status")).to_have_text(
        "forward: z computed"
    )
    expect(page.get_by_test_id("node-z")).to_have_class(re.compile("focused"))
    assert value_of(page, "z") == "25"
    expect(page.get_by_test_id("grad-z")).to_have_count(0)  # backward has not been replayed
    page.get_by_role("button", name="step forward").click()
    expect(page.get_by_test_id("grad-z")).to_have_text("∇ 1")
    page.get_by_role("button", name="exit step mode").click()
    expect(page.get_by_test_id("leafgrad-x")).to_have_text(".grad 10")


def test_chain_rule_tensor_viewer_and_autograd_view(page):
    open_editor(page, "square-of-a-sum")
    run_backward(page)
    page.get_by_test_id("edge-a-z").click()
    chain = page.get_by_role("region", name="chain rule")
    expect(chain).to_contain_text("10")
    expect(chain).to_contain_text("pow")

    select_node(page, "z")
    page.get_by_label("inspector").get_by_role("button", name="view value").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    expect(viewer).to_contain_text("25")

    page.get_by_role("tab", name="autograd graph").click()
    graph = page.get_by_role("region", name="autograd graph")
    expect(graph).to_contain_text("PowBackward0")
    expect(graph).to_contain_text("AddBackward0")
    expect(graph.locator(".ag-leaf")).to_have_count(2)  # x and y


def test_a_lost_connection_shows_a_banner_and_reconnects(browser, tmp_path):
    server = Server(tmp_path / "a")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(server.url + "/?template=square-of-a-sum")
        expect(page.locator(".app.ready")).to_be_visible()
        expect(page.get_by_role("button", name="Forward", exact=True)).to_be_enabled()
        server.stop()
        expect(
            page.get_by_role("alert").filter(has_text="Connection to the server lost")
        ).to_be_visible()
        expect(page.get_by_role("button", name="Forward", exact=True)).to_be_disabled()
        again = Server(tmp_path / "b", port=server.port)
        try:
            expect(page.get_by_role("alert").filter(has_text="Connection")).to_have_count(
                0, timeout=15_000
            )
            page.server = again
            run_forward(page)
            assert value_of(page, "z") == "25"
        finally:
            again.stop()
    finally:
        context.close()
        server.stop()
