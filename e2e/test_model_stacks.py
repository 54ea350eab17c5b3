"""A traced model opens with its modules collapsed and its repeated blocks as a stack: a
document as `wg.trace` writes it (every node at (0, 0), `blocks.0` … `blocks.11` instances of
one Block) is laid out on open with each block one node, the twelve in one column, in order,
none on another; the model runs; opened, a block's definition (also written without
positions) is laid out left to right (wrapped into rows where that reads larger), not drawn on
one spot."""

import re

import requests
from editor import run_forward
from playwright.sync_api import expect
from test_layout_on_open import boxes, overlap

AT = {"x": 0, "y": 0}
BLOCKS = 12


def node(nid, op, **params):
    return {"id": nid, "op": op, "params": params, "position": AT}


def edge(source, target, port="input", out="out"):
    return {
        "id": f"{source}-{target}-{port}",
        "source": source,
        "sourcePort": out,
        "target": target,
        "targetPort": port,
    }


def traced_model():
    """x -> emb -> blocks.0 … blocks.11 -> head -> loss; a Block is x + fc(ln(x))."""
    block = {
        "name": "Block",
        "doc": "",
        "nodes": [
            node("x", "module_input"),
            node("ln", "layer_norm", normalized_shape=[8]),
            node("fc", "linear", out_features=8),
            node("add", "add"),
            node("out", "module_output"),
        ],
        "edges": [
            edge("x", "ln"),
            edge("ln", "fc"),
            edge("x", "add"),
            edge("fc", "add", "other"),
            edge("add", "out"),
        ],
        "inputs": ["x"],
        "outputs": ["out"],
    }
    names = [f"blocks.{i}" for i in range(BLOCKS)]
    nodes = [
        node("x", "tensor", shape=[2, 4], init="randn"),
        node("emb", "linear", out_features=8),
        *[node(b, "module", module="Block", seed=i) for i, b in enumerate(names)],
        node("head", "linear", out_features=3),
        node("loss", "sum"),
    ]
    chain = ["emb", *names, "head"]
    edges = [edge("x", "emb")]
    edges += [
        edge(a, b, "x" if b.startswith("blocks") else "input", "out")
        for a, b in zip(chain, chain[1:])
    ]
    edges.append(edge("head", "loss"))
    return {
        "version": 2,
        "name": "traced transformer",
        "nodes": nodes,
        "edges": edges,
        "modules": [block],
    }, names


def test_a_traced_model_opens_collapsed_with_its_blocks_as_a_stack(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    doc, names = traced_model()
    url = page.server.url
    graph_id = requests.post(f"{url}/api/graphs", json=doc, timeout=30).json()["id"]
    page.goto(f"{url}/?graph={graph_id}")
    expect(page.locator(".app.ready")).to_be_visible()
    expect(page.locator(".react-flow__node")).to_have_count(len(doc["nodes"]))
    for _ in range(10):  # out until the whole graph is drawn (only nodes in view are)
        at = boxes(page)
        if len(at) == len(doc["nodes"]):
            break
        page.get_by_role("button", name="zoom out").click()
        page.wait_for_timeout(150)

    # collapsed: each block is one node, the Block's own nodes are not on the graph
    for b in names:
        expect(page.get_by_label(f"module {b}", exact=True)).to_have_count(1)
    expect(page.get_by_test_id("node-ln")).to_have_count(0)
    at = boxes(page)
    ids = sorted(at)
    assert not [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if overlap(at[a], at[b])]
    # a stack: one column, in order, each under the one before
    xs = [at[b][0] for b in names]
    assert max(xs) - min(xs) < 1, xs
    ys = [at[b][1] for b in names]
    assert all(y1 > y0 + at[b][3] - 1 for (y0, y1, b) in zip(ys, ys[1:], names)), ys
    # the rest flows around it: emb before the stack, head after it
    assert at["emb"][0] + at["emb"][2] <= xs[0] and at["head"][0] >= xs[0] + at[names[0]][2]
    page.screenshot(path="e2e/artifacts/model-stack.png")

    run_forward(page)
    expect(page.get_by_test_id("value-loss")).to_contain_text(re.compile(r"\d"))

    # a block opened: its definition laid out, left to right, nothing on one spot
    page.get_by_label("module blocks.0", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text("blocks.0 (Block)")
    expect(page.locator(".react-flow__node")).to_have_count(5)
    page.wait_for_timeout(300)
    inner = boxes(page)
    keys = sorted(inner)
    assert not [
        (a, b) for i, a in enumerate(keys) for b in keys[i + 1 :] if overlap(inner[a], inner[b])
    ]
    assert len({(round(b[0]), round(b[1])) for b in inner.values()}) == 5  # not on one spot
    for e in doc["modules"][0]["edges"]:  # left to right in a row, or down to a later row
        (sx, sy, _, sh), (tx, ty, _, _) = inner[e["source"]], inner[e["target"]]
        assert sx < tx or sy + sh < ty, e
    page.screenshot(path="e2e/artifacts/model-stack-block-opened.png")


SCRIPT = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.ln(x))))


class Model(nn.Module):
    def __init__(self, d=8, n=6):
        super().__init__()
        self.emb = nn.Linear(4, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        x = self.emb(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


model = Model()
x = torch.randn(2, 5, 4)
loss = model(x).sum()
"""


def test_an_imported_models_blocks_open_as_a_stack(page):
    """An imported script's model is one collapsed instance; opened, its six blocks, which the
    importer writes in one row, are drawn as a stack."""
    from wiregrad import from_code

    page.set_viewport_size({"width": 1440, "height": 900})
    doc = from_code(SCRIPT)
    model = next(n["id"] for n in doc["nodes"] if n["op"] == "module")
    (outer,) = [m for m in doc["modules"] if m["name"] == "Model"]
    blocks = [n["id"] for n in outer["nodes"] if n["params"].get("module") == "Block"]
    assert len(blocks) == 6
    url = page.server.url
    graph_id = requests.post(f"{url}/api/graphs", json=doc, timeout=30).json()["id"]
    page.goto(f"{url}/?graph={graph_id}")
    expect(page.locator(".app.ready")).to_be_visible()
    expect(page.locator(".react-flow__node")).to_have_count(len(doc["nodes"]))  # collapsed

    page.get_by_label(f"module {model}", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text(f"{model} (Model)")
    expect(page.locator(".react-flow__node")).to_have_count(len(outer["nodes"]))
    page.wait_for_timeout(400)
    at = boxes(page)
    xs = [at[b][0] for b in blocks]
    ys = [at[b][1] for b in blocks]
    assert max(xs) - min(xs) < 1, xs
    assert all(y1 > y0 + at[b][3] - 1 for (y0, y1, b) in zip(ys, ys[1:], blocks)), ys
    ids = sorted(at)
    assert not [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if overlap(at[a], at[b])]
    page.screenshot(path="e2e/artifacts/model-stack-imported.png")
