"""What a person does in the editor, as functions over a Playwright page: drag an op from the
palette, wire two ports, pick a node, type a param, run. Tests read the canvas through the
same names a screen reader would use."""

import re

from playwright.sync_api import Page, expect


def open_editor(page: Page, template: str | None = None):
    url = page.server.url + (f"/?template={template}" if template else "/")
    page.goto(url)
    expect(page.locator(".app.ready")).to_be_visible()
    expect(page.get_by_role("alert").filter(has_text="Connecting")).to_have_count(0)


def canvas_box(page: Page):
    return page.get_by_label("graph canvas").bounding_box()


def drag_op(page: Page, op: str, x: float, y: float) -> str:
    """Drag `op` from the palette to (x, y) of the canvas; the new node's id."""
    before = set(node_ids(page))
    page.get_by_role("button", name=f"op {op}", exact=True).drag_to(
        page.get_by_label("graph canvas"), target_position={"x": x, "y": y}
    )
    expect(page.locator(".react-flow__node")).to_have_count(len(before) + 1)
    (new,) = set(node_ids(page)) - before
    return new


def node_ids(page: Page):
    return page.locator(".react-flow__node").evaluate_all(
        "els => els.map(e => e.getAttribute('data-id'))"
    )


def wire(page: Page, source: str, target: str, port: str = "input", out: str = "out"):
    page.get_by_label(f"{source} output {out}", exact=True).drag_to(
        page.get_by_label(f"{target} input {port}", exact=True)
    )


def select_node(page: Page, node: str):
    page.get_by_test_id(f"node-{node}").locator(".op-node-title").click()
    expect(page.get_by_label("inspector").get_by_role("heading", level=2)).to_contain_text(node)


def set_param(page: Page, name: str, value: str):
    field = page.get_by_label("inspector").get_by_label(name, exact=True)
    field.fill(value)
    field.press("Enter")


def check_param(page: Page, name: str):
    page.get_by_label("inspector").get_by_label(name, exact=True).check()


def run_forward(page: Page, status="ok"):
    before = last_run(page)
    page.get_by_role("button", name="Forward", exact=True).click()
    wait_finished(page, before, status)


def run_backward(page: Page, target: str | None = None, status="ok", options=()):
    """Backward from `target` (else the default), with the teaching `options` (their labels)
    ticked and every other one cleared: through Backward's ▾, where both are chosen."""
    before = last_run(page)
    page.get_by_role("button", name="Backward options", exact=True).click()
    picker = page.get_by_role("dialog", name="backward target")
    if target:
        picker.get_by_label("backward from").select_option(target)
    for box in picker.get_by_role("checkbox").all():
        label = box.evaluate("el => el.parentElement.textContent.trim()")
        box.set_checked(label in options)
    picker.get_by_role("button", name="run backward", exact=True).click()
    wait_finished(page, before, status)


def last_run(page: Page) -> str:
    return page.get_by_label("run status").get_attribute("data-run") or ""


def wait_finished(page: Page, before: str, status="ok"):
    """Wait until a run newer than `before` has finished with `status`."""
    run_status = page.get_by_label("run status")
    expect(run_status).not_to_have_attribute("data-run", before or re.compile("^$"))
    expect(run_status).to_have_attribute("data-status", re.compile("ok|error|cancelled"))
    assert run_status.get_attribute("data-status") == status, run_status.inner_text()


def value_of(page: Page, node: str) -> str:
    return page.get_by_test_id(f"value-{node}").inner_text()


def grad_of(page: Page, node: str) -> str:
    return page.get_by_test_id(f"grad-{node}").inner_text().removeprefix("∇").strip()


def edge_grad(page: Page, edge: str) -> str:
    return page.get_by_test_id(f"edge-grad-{edge}").inner_text().removeprefix("∇").strip()


def start_room(teacher: Page) -> str:
    """Start a classroom room from the teacher's page; the code to share."""
    teacher.get_by_role("button", name="Classroom").click()
    teacher.get_by_role("button", name="Start a room").click()
    shown = teacher.get_by_label("room code to share")
    expect(shown).to_have_text(re.compile(r"^\s*[A-Z2-9]{6}\s*$"))
    code = shown.inner_text().strip()
    teacher.keyboard.press("Escape")
    return code


def join_room(student: Page, code: str):
    """Join the room `code` from the student's page, and wait until it follows."""
    student.get_by_role("button", name="Classroom").click()
    student.get_by_label("room code").fill(code)
    student.get_by_role("button", name="Join").click()
    expect(student.get_by_label("room", exact=True)).to_contain_text(f"Following room {code}")


def present_to_room(teacher: Page, student: Page, template: str) -> str:
    """The teacher opens `template` at a 1024x768 projector, starts a room and presents; the
    student (at 1280x800) joins it. The room's code."""
    teacher.set_viewport_size({"width": 1024, "height": 768})
    open_editor(teacher, template)
    code = start_room(teacher)
    teacher.get_by_role("button", name="Presenter").click()
    student.set_viewport_size({"width": 1280, "height": 800})
    open_editor(student, "quadratic")  # (replaced by the room's graph)
    join_room(student, code)
    return code


def click_wire(page: Page, edge: str):
    """Click the wire `edge` itself at the middle of its curve (zoomed out, as graphs open, a
    wire carries no label to click: canvas/detail.ts). A bezier wire is symmetric: the middle
    of its box is on the curve, and its click area is 16 px wide."""
    box = page.locator(f".react-flow__edge[data-id='{edge}']").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def make_module(page: Page, nodes: list[str], name: str) -> str:
    """Select `nodes` (click, then Ctrl+click), make them a module `name` with Ctrl+G; the
    new instance's id."""
    for i, n in enumerate(nodes):
        page.get_by_test_id(f"node-{n}").locator(".op-node-title").click(
            modifiers=["Control"] if i else []
        )
    expect(page.locator(".react-flow__node.selected")).to_have_count(len(nodes))
    before = set(node_ids(page))
    page.keyboard.press("Control+g")
    dialog = page.get_by_role("dialog", name="Make module")
    dialog.get_by_label("module name").fill(name)
    dialog.get_by_role("button", name="Make module").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id(f"node-{nodes[0]}")).to_have_count(0)
    (made,) = set(node_ids(page)) - before
    return made


def zoom_to_labels(page: Page):
    """Zoom in until the canvas draws its full text: node annotations and wire labels come only
    then (frontend/src/canvas/detail.ts)."""
    canvas = page.get_by_label("graph canvas")
    for _ in range(8):
        if page.locator(".canvas.lod-full").count():
            return
        canvas.get_by_role("button", name="zoom in").click()
        page.wait_for_timeout(250)
    expect(page.locator(".canvas.lod-full")).to_have_count(1)


# Every value and gradient line drawn on a node (the large face's lines zoomed out, the
# annotation lines at full detail): whether it is cut (its text wider than its box: an
# ellipsis or a clipped number) or hangs out of its node, and its font on screen in px.
NUMBERS_CUT = """() => {
  const zoom = new DOMMatrixReadOnly(
    getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
  const lines = [];
  for (const node of document.querySelectorAll('.react-flow__node')) {
    const box = (node.querySelector('.op-node') || node).getBoundingClientRect();
    const drawn = node.querySelectorAll(
      '.lod-line.value, .lod-line.grad, .anno.value, .anno.grad, .anno.leaf-grad');
    for (const el of drawn) {
      if (!el.textContent.trim() || !el.getClientRects().length) continue;  // not drawn
      const r = el.getBoundingClientRect();
      lines.push({node: node.getAttribute('data-id'), text: el.textContent,
        // (a line is as tall as its text wraps to: cut only across, where a number could
        // end in an ellipsis or under the node's border; below, it would hang out)
        cut: el.scrollWidth > el.clientWidth + 0.5,
        outside: r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5
          || r.left < box.left - 0.5,
        px: parseFloat(getComputedStyle(el).fontSize) * zoom});
    }
  }
  return lines;
}"""


def number_lines(page: Page) -> list[dict]:
    """Every value and gradient line drawn on the canvas's nodes (NUMBERS_CUT)."""
    return page.evaluate(NUMBERS_CUT)


def assert_numbers_whole(page: Page, at_least: int = 1):
    """No number on a node is cut or hangs out of its node, and `at_least` lines are drawn."""
    lines = number_lines(page)
    assert len(lines) >= at_least, lines
    bad = [line for line in lines if line["cut"] or line["outside"]]
    assert not bad, bad
