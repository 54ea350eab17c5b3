"""Real models at the fit view of a 1440x900 laptop: `lenet-digits` (13 nodes) and
`transformer-block` (16), stored as one long row, open wrapped into rows that use the canvas;
every face is drawn whole (its full name and op, wrapped where it must, never cut) at 11 px or
more on screen; and a graph too big to be read whole is fitted at the readable zoom, from its
start, the rest a pan away."""

import pytest
from editor import open_editor
from playwright.sync_api import expect
from test_layout_on_open import overlap

FACES = """() => {
  const vp = document.querySelector('.react-flow__viewport');
  const zoom = new DOMMatrixReadOnly(getComputedStyle(vp).transform).a;
  return {zoom, faces: [...document.querySelectorAll('.react-flow__node')].map((node) => {
    // the face drawn at this zoom: the large compact one, or the full title line
    const el = node.querySelector('.lod-name') || node.querySelector('.op-node-title');
    const face = node.querySelector('.op-node-title').getAttribute('title');
    const r = el.getBoundingClientRect();
    return {id: node.getAttribute('data-id'), face, text: el.textContent.replace(/\\s*◎$/, ''),
            px: parseFloat(getComputedStyle(el).fontSize) * zoom,
            scroll: el.scrollWidth, client: el.clientWidth, height: r.height};
  })};
}"""


def canvas_settles(page, steady_ms=300, timeout_ms=10_000):
    """Wait until the canvas's size and every node's place have held for `steady_ms`: the
    layout on open (in a worker) is done and the closed lesson's room given back."""
    probe = """() => [document.querySelector('[aria-label="graph canvas"]')?.clientWidth,
      document.querySelector('[aria-label="graph canvas"]')?.clientHeight,
      ...[...document.querySelectorAll('.react-flow__node')].map((n) => n.style.transform)]"""
    last, since, waited = None, 0, 0
    while waited < timeout_ms:
        now = page.evaluate(probe)
        since = since + 50 if now == last else 0
        if since >= steady_ms:
            return
        last = now
        page.wait_for_timeout(50)
        waited += 50
    raise AssertionError("the canvas kept changing")


@pytest.mark.parametrize("template, count", [("lenet-digits", 13), ("transformer-block", 16)])
def test_a_model_at_the_fit_view_shows_every_face_whole_at_11px(page, template, count):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, template)
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    # the fit reads the canvas's size and the nodes' places: clicked while the layout on open
    # still runs (a loaded machine delays its worker), it fits the graph as it was before
    canvas_settles(page)
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.wait_for_timeout(500)
    m = page.evaluate(FACES)
    assert len(m["faces"]) == count
    # one thin row was fitted at 0.25-0.29, faces cut to four letters at 9-11 px; now at least
    # the readable zoom (canvas/detail.ts READABLE_ZOOM, where faces are 11 px): transformer-
    # block's two rows fit 1440x900 at 0.52, drawn at 0.5 where the minimap's corner needs room
    assert m["zoom"] >= 0.5, m["zoom"]
    for f in m["faces"]:
        assert f["text"] == f["face"], f  # the whole face: name and op, nothing cut off
        assert f["scroll"] <= f["client"], f  # no text running past its box
        assert f["px"] >= 11, f
    # rows, not a row: the graph takes the canvas's height too, and no node sits on another
    boxes = page.locator(".react-flow__node").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.x, r.y, r.width, r.height]; })"
    )
    ys = sorted(b[1] for b in boxes)
    canvas = page.get_by_label("graph canvas").bounding_box()
    # (the thin row spanned under a tenth of it; two rows at the readable zoom, about 0.38)
    assert ys[-1] - ys[0] > canvas["height"] * 0.3
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if overlap(a, b)]
    page.screenshot(path=f"e2e/artifacts/model-faces-{template}.png")


def test_fit_view_of_a_graph_too_big_to_read_stops_at_the_readable_zoom(page):
    """A 200-node document (stacked: laid out on open) is fitted at 0.5, not at the 0.1 that
    would show it whole: its faces stay 11 px and whole, the first nodes in view."""
    import requests
    from test_layout_on_open import stacked_graph

    page.set_viewport_size({"width": 1440, "height": 900})
    doc = stacked_graph(19, 10)
    url = page.server.url
    graph_id = requests.post(f"{url}/api/graphs", json=doc, timeout=30).json()["id"]
    page.goto(f"{url}/?graph={graph_id}")
    expect(page.locator(".app.ready")).to_be_visible()
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.wait_for_timeout(500)
    m = page.evaluate(FACES)
    assert abs(m["zoom"] - 0.5) < 0.01, m["zoom"]
    drawn = [f for f in m["faces"] if f["height"] > 0]
    assert drawn and all(f["px"] >= 11 and f["text"] == f["face"] for f in drawn)
    # the graph's start is in view: a source node
    expect(page.get_by_test_id("node-x0")).to_be_in_viewport()
    page.screenshot(path="e2e/artifacts/model-faces-too-big.png")
