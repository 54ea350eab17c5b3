"""A graph of two module instances handed over as code and read back, driven as a person would:
Export shows an `nn.Module` class and one object per instance; Import of that code gives the
same module, the same two instances each with its own parameters, and the same numbers."""

import requests
from editor import run_backward, value_of
from playwright.sync_api import expect


def _edge(eid, source, target, target_port="input", source_port="out"):
    ends = {"source": source, "sourcePort": source_port, "target": target}
    return {"id": eid, **ends, "targetPort": target_port}


DOC = {
    "format": "wiregrad.graph",
    "version": 2,
    "name": "two affine blocks",
    "modules": [
        {
            "name": "Affine",
            "nodes": [
                {"id": "x", "op": "module_input", "position": {"x": 0, "y": 0}},
                {
                    "id": "w",
                    "op": "parameter",
                    "params": {"shape": [3], "init": "randn", "seed": 1},
                    "position": {"x": 0, "y": 150},
                },
                {"id": "m", "op": "mul", "position": {"x": 220, "y": 0}},
                {"id": "r", "op": "tanh", "position": {"x": 440, "y": 0}},
                {"id": "y", "op": "module_output", "position": {"x": 660, "y": 0}},
            ],
            "edges": [
                _edge("xm", "x", "m"),
                _edge("wm", "w", "m", "other"),
                _edge("mr", "m", "r"),
                _edge("ry", "r", "y"),
            ],
            "inputs": ["x"],
            "outputs": ["y"],
        }
    ],
    "nodes": [
        {
            "id": "inp",
            "op": "tensor",
            "params": {"value": [0.5, -1.0, 2.0], "requires_grad": True},
            "position": {"x": 0, "y": 0},
        },
        {
            "id": "l1",
            "op": "module",
            "params": {"module": "Affine"},
            "position": {"x": 250, "y": 0},
        },
        {
            "id": "l2",
            "op": "module",
            "params": {"module": "Affine", "seed": 7},
            "position": {"x": 500, "y": 0},
        },
        {"id": "s", "op": "sum", "position": {"x": 750, "y": 0}},
    ],
    "edges": [
        _edge("e_in", "inp", "l1", "x"),
        _edge("e_mid", "l1", "l2", "x", source_port="y"),
        _edge("e_out", "l2", "s", source_port="y"),
    ],
    "target": "s",
}


def _numbers(page):
    """What the page shows after a backward run: the sum, the input's gradient and each
    instance's output."""
    return (
        value_of(page, "s"),
        page.get_by_test_id("grad-inp").inner_text(),
        value_of(page, "l1/y"),
        value_of(page, "l2/y"),
    )


def test_a_module_graph_exported_as_classes_imports_back_with_the_same_numbers(page):
    saved = requests.post(page.server.url + "/api/graphs", json=DOC, timeout=10)
    assert saved.status_code == 201, saved.text
    page.goto(f"{page.server.url}/?graph={saved.json()['id']}")
    expect(page.get_by_label("graph name")).to_contain_text("two affine blocks")
    run_backward(page)
    before = _numbers(page)
    assert before[2] != before[3]  # l2 has its own parameters (seed 7)

    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text("class Affine(nn.Module):")
    expect(code).to_contain_text("def forward(self, x):")
    expect(code).to_contain_text("l1 = Affine()")
    expect(code).to_contain_text("l2 = Affine()")
    torch_code = code.inner_text()
    page.keyboard.press("Escape")

    page.get_by_role("button", name="New", exact=True).click()
    expect(page.get_by_label("module l1", exact=True)).to_have_count(0)
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(torch_code)
    page.get_by_role("dialog").get_by_role("button", name="import").click()
    expect(page.get_by_role("dialog")).to_have_count(0)

    # the module is back in the palette, the two instances on the canvas
    expect(page.get_by_role("button", name="module Affine", exact=True)).to_be_visible()
    expect(page.get_by_label("module l1", exact=True)).to_have_count(1)
    expect(page.get_by_label("module l2", exact=True)).to_have_count(1)
    run_backward(page)
    assert _numbers(page) == before

    # inside the second instance: its own parameter's gradient
    page.get_by_label("module l2", exact=True).dblclick()
    expect(page.get_by_label("breadcrumbs")).to_contain_text("l2 (Affine)")
    expect(page.get_by_test_id("grad-w")).not_to_be_empty()
