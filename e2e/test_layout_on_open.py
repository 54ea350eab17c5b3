"""Opening a document whose nodes all sit on one spot (generated, or written without positions):
the editor lays it out before drawing it, left to right, with no node on another; opening is
not an edit (nothing to undo, not marked changed). Small graphs get elkjs's layout, big ones
the editor's quick layered layout: both are checked, through a real server and the real page.
A long chain wraps into rows (left to right in a row, down from row to row), and a graph too
big to read whole opens at the readable zoom (canvas/fit.ts), whole a few zoom-outs away."""

import random

import pytest
import requests
from editor import run_forward
from playwright.sync_api import expect


def stacked_graph(layers, width, seed=0):
    """`width` tensors, then `layers` layers of `width` adds, each reading two nodes of the layer
    before, and a sum of the last add; every node at (0, 0)."""
    rng = random.Random(seed)
    at = {"x": 0, "y": 0}
    nodes = [
        {"id": f"x{k}", "op": "tensor", "params": {"value": [float(k + 1)]}, "position": at}
        for k in range(width)
    ]
    edges = []
    before = [n["id"] for n in nodes]
    for layer in range(layers):
        ids = []
        for k in range(width):
            nid = f"n{layer}_{k}"
            a, b = rng.sample(before, 2)
            nodes.append({"id": nid, "op": "add", "params": {}, "position": at})
            edges.append({"id": f"{nid}a", "source": a, "target": nid, "targetPort": "input"})
            edges.append({"id": f"{nid}b", "source": b, "target": nid, "targetPort": "other"})
            ids.append(nid)
        before = ids
    nodes.append({"id": "total", "op": "sum", "params": {}, "position": at})
    edges.append({"id": "s", "source": before[0], "target": "total", "targetPort": "input"})
    return {"name": f"stacked {len(nodes)}", "nodes": nodes, "edges": edges}


def boxes(page):
    """Each drawn node's box on the screen, by node id."""
    return page.locator(".react-flow__node").evaluate_all(
        """els => Object.fromEntries(els.map(e => {
            const r = e.getBoundingClientRect();
            return [e.getAttribute('data-id'), [r.x, r.y, r.width, r.height]];
        }))"""
    )


def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


@pytest.mark.parametrize("layers, width", [(3, 2), (19, 10)], ids=["elk", "quick layout"])
def test_a_stacked_document_opens_laid_out(page, layers, width):
    doc = stacked_graph(layers, width)
    n_nodes = len(doc["nodes"])
    url = page.server.url
    graph_id = requests.post(f"{url}/api/graphs", json=doc, timeout=30).json()["id"]
    page.goto(f"{url}/?graph={graph_id}")
    expect(page.locator(".app.ready")).to_be_visible()
    expect(page.locator(".react-flow__node").first).to_be_visible()
    zoom = (
        "new DOMMatrixReadOnly("
        "getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a"
    )
    assert page.evaluate(zoom) >= 0.5 - 1e-3  # opened readable, however big
    canvas = page.get_by_label("graph canvas").bounding_box()

    def in_view(x, y, w, h):
        return (
            canvas["x"] <= x
            and x + w <= canvas["x"] + canvas["width"]
            and (canvas["y"] <= y and y + h <= canvas["y"] + canvas["height"])
        )

    for _ in range(20):  # out until the whole graph is drawn (only nodes in view are) and in view
        if page.locator(".react-flow__node").count() == n_nodes and all(
            in_view(*box) for box in boxes(page).values()
        ):
            break
        page.get_by_role("button", name="zoom out").click()
        page.wait_for_timeout(150)
    expect(page.locator(".react-flow__node")).to_have_count(n_nodes)

    at = boxes(page)
    assert len(at) == n_nodes
    ids = sorted(at)
    overlapping = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if overlap(at[a], at[b])]
    assert overlapping == []
    for e in doc["edges"]:  # data flows left to right in a row, or down to a later row
        (sx, sy, _, sh), (tx, ty, _, _) = at[e["source"]], at[e["target"]]
        assert sx < tx or sy + sh < ty, e
    # the whole graph is in view
    for box in at.values():
        assert in_view(*box), (box, canvas)

    # opening is not an edit
    expect(page.get_by_role("button", name="Undo")).to_be_disabled()
    # (a graph opened by its link shows its stored revision, as one opened from the dialog)
    expect(page.get_by_label("graph name")).to_have_text(f"{doc['name']} r1")

    if n_nodes < 150:  # elk's size, and readable: it runs, and its sum is on the canvas
        run_forward(page)
        expect(page.get_by_test_id("value-total")).to_contain_text(f"{total_of(doc):g}")


def total_of(doc):
    """What the graph computes, added up here by hand."""
    value = {n["id"]: n["params"]["value"][0] for n in doc["nodes"] if n["op"] == "tensor"}
    for e in doc["edges"]:  # edges come layer by layer, after their inputs' edges
        value[e["target"]] = value.get(e["target"], 0.0) + value[e["source"]]
    return value["total"]
