"""Upload reads and checks the file before anything is replaced: a file that is not JSON or not
a graph is refused with its problems as a list, and "Discard the unsaved changes?" is asked only
about a file that is a graph (doc/uploadCheck.ts, panels/dialogs/UploadReport.tsx)."""

import json
import os
from pathlib import Path

from editor import drag_op, node_ids, open_editor
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def _upload(page, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    page.get_by_label("upload a graph document").set_input_files(str(path))


def test_upload_checks_the_file_before_asking_to_discard(page, tmp_path):
    asked = []  # the fixture accepts every dialog; this only notes what was asked
    page.on("dialog", lambda d: asked.append(d.message))
    open_editor(page, "square-of-a-sum")
    drag_op(page, "neg", 420, 420)  # an unsaved change
    before = sorted(node_ids(page))

    _upload(page, tmp_path, "wrong.json", json.dumps({"nodes": [{"id": "a"}], "edges": "x"}))
    report = page.get_by_role("dialog", name="Upload wrong.json")
    expect(report.get_by_role("alert")).to_contain_text(
        "wrong.json cannot be opened: it is not a Wiregrad graph document"
    )
    items = report.get_by_role("list", name="problems in the file").get_by_role("listitem")
    expect(items).to_have_text(
        ["nodes[0].op: field required", "edges: input should be a valid list"]
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "upload-problems.png"))
    page.keyboard.press("Escape")
    expect(report).to_have_count(0)
    assert asked == [] and sorted(node_ids(page)) == before

    _upload(page, tmp_path, "notes.json", '{"nodes": [,]}')
    report = page.get_by_role("dialog", name="Upload notes.json")
    expect(report.get_by_role("alert")).to_contain_text("it is not JSON")
    expect(report.get_by_role("listitem")).to_contain_text("Unexpected token")
    report.get_by_role("button", name="OK", exact=True).click()
    assert asked == [] and sorted(node_ids(page)) == before

    # a graph whose node has a problem: listed, then opened only when asked to (and only then
    # the unsaved changes are asked about)
    draft = {
        "format": "wiregrad.graph",
        "version": 1,
        "name": "draft with a problem",
        "nodes": [{"id": "bad", "op": "nope", "params": {}}],
        "edges": [],
    }
    _upload(page, tmp_path, "draft.json", json.dumps(draft))
    report = page.get_by_role("dialog", name="Upload draft.json")
    expect(report.get_by_role("listitem")).to_have_text(["node bad: unknown op 'nope'"])
    assert asked == []
    report.get_by_role("button", name="Open anyway").click()
    expect(page.get_by_label("graph name")).to_contain_text("draft with a problem")
    assert len(asked) == 1 and "Discard the unsaved changes" in asked[0], asked
    assert node_ids(page) == ["bad"]
