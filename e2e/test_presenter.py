"""Presenter mode on a projector, measured as drawn: at 1024x768 (and 1920x1080) a 15-node
graph is fitted with the side panels and minimap tucked away, the toolbar in one row, every
node's name and value drawn at 16 px or more on the screen (font size x the canvas's zoom), and
no node under the notice of the run's end."""

import json
import os
from pathlib import Path

import pytest
from editor import canvas_box, drag_op, last_run, open_editor, wait_finished
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))

MEASURE = """() => {
  const viewport = document.querySelector('.react-flow__viewport');
  const zoom = new DOMMatrixReadOnly(getComputedStyle(viewport).transform).a;
  const pane = document.querySelector('.react-flow').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('.react-flow__node')];
  const texts = [...document.querySelectorAll('.lod-name, .lod-line')].map(
    (el) => parseFloat(getComputedStyle(el).fontSize) * zoom);
  const inside = nodes.every((n) => {
    const r = n.getBoundingClientRect();
    return r.left >= pane.left - 1 && r.right <= pane.right + 1
      && r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1;
  });
  const buttons = [...document.querySelectorAll('.toolbar button, .toolbar .button')]
    .filter((b) => b.offsetParent !== null).map((b) => {
      const r = b.getBoundingClientRect();
      return Math.round((r.top + r.height / 2) / 4);  // centres, to 4 px
    });
  // the nodes under the run's notice (null: no notice)
  const note = document.querySelector('.notice');
  const nr = note && note.getBoundingClientRect();
  const covered = nr && nodes.filter((n) => { const r = n.getBoundingClientRect();
    return r.left < nr.right && nr.left < r.right && r.top < nr.bottom && nr.top < r.bottom;
  }).length;
  return {zoom, nodes: nodes.length, names: document.querySelectorAll('.lod-name').length, covered,
          smallest: Math.min(...texts), inside, rows: new Set(buttons).size,
          toolbar: document.querySelector('.toolbar').getBoundingClientRect().height};
}"""


def fifteen_nodes(page):
    open_editor(page, "five-weight-network")
    page.get_by_role("button", name="close lesson").click()
    box = canvas_box(page)
    drag_op(page, "scalar", box["width"] * 0.25, box["height"] * 0.9)
    drag_op(page, "tensor", box["width"] * 0.6, box["height"] * 0.9)
    expect(page.locator(".react-flow__node")).to_have_count(15)


@pytest.mark.parametrize("size", [(1024, 768), (1920, 1080)])
def test_presenter_mode_draws_node_text_at_16px_on_a_projector(page, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    fifteen_nodes(page)
    page.get_by_role("button", name="Presenter").click()
    expect(page.get_by_label("inspector")).to_be_hidden()
    expect(page.get_by_role("navigation", name="op palette")).to_be_hidden()
    expect(page.get_by_label("minimap")).to_have_count(0)
    before = last_run(page)
    page.get_by_role("button", name="Backward", exact=True).click()
    wait_finished(page, before)
    page.wait_for_timeout(400)  # the fit after the panels moved away
    m = page.evaluate(MEASURE)
    assert m["nodes"] == 15 and m["inside"], m
    assert m["rows"] == 1 and m["toolbar"] < 60, m
    # every node keeps its name and value, drawn at 16 px or more
    assert m["names"] == 15, m
    assert m["smallest"] >= 16, m
    # the run's notice over the canvas's top covers no node (the fit leaves it a band)
    assert m["covered"] == 0, m
    expect(page.get_by_test_id("value-L")).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-{size[0]}.png"))
    # leaving presenter mode brings the panels back
    page.get_by_role("button", name="Presenter").click()
    expect(page.get_by_label("inspector")).to_be_visible()


def fifty_node_document():
    """x, then 49 ops in a 10 x 5 grid, each reading the one before."""
    nodes = [
        {
            "id": "x",
            "op": "tensor",
            "params": {"value": [1.0, 2.0], "requires_grad": True, "name": "x"},
            "position": {"x": 0, "y": 0},
        }
    ]
    edges = []
    for i in range(1, 50):
        nid = f"n{i}"
        nodes.append(
            {
                "id": nid,
                "op": "mul",
                "params": {"scalar": 1.01},
                "position": {"x": (i % 10) * 260, "y": (i // 10) * 150},
            }
        )
        prev = nodes[i - 1]["id"]
        edges.append(
            {
                "id": f"e{i}",
                "source": prev,
                "sourcePort": "out",
                "target": nid,
                "targetPort": "input",
            }
        )
    return {
        "format": "wiregrad.graph",
        "version": 1,
        "name": "fifty",
        "description": "",
        "nodes": nodes,
        "edges": edges,
        "target": None,
        "lesson": [],
    }


def test_names_and_values_stay_legible_at_the_fit_view_of_50_nodes(page):
    open_editor(page)
    page.get_by_label("upload a graph document").set_input_files(
        files=[
            {
                "name": "fifty.json",
                "mimeType": "application/json",
                "buffer": json.dumps(fifty_node_document()).encode(),
            }
        ]
    )
    expect(page.get_by_test_id("node-x")).to_be_visible()
    # (a Forward pressed while the upload is still being placed can be dropped under load:
    # noted in the closing note; the test waits for the placed graph)
    page.wait_for_timeout(500)
    before = last_run(page)
    page.get_by_role("button", name="Forward", exact=True).click()
    wait_finished(page, before)
    # (only the nodes in view are drawn: whichever they are, their values are written)
    expect(page.locator('[data-testid^="value-n"]').first).to_be_visible()
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.wait_for_timeout(500)
    m = page.evaluate(MEASURE)
    # the fit stops where faces stay readable (canvas/fit.ts READABLE_ZOOM): the rest of the
    # 50 nodes is a pan away, and every name drawn is 11 px or more on screen
    assert m["zoom"] >= 0.5 - 1e-6, m
    assert m["names"] >= 1 and m["smallest"] >= 11, m
    expect(page.locator('[data-testid^="value-n"]').first).to_be_visible()
    page.screenshot(path=str(SHOTS / "fifty-fit.png"))
