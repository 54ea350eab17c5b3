"""Nodes as tall as their faces (issue 34): at the fit view of a 1440x900 laptop, and zoomed in
to full detail, every face of `lenet-digits` and `transformer-block` lies inside its node (the
embedding's long face used to hang below it), its names break after an underscore rather than
mid-word (`binary_cross_` / `entropy`), and each handle sits on its port's row. After a
backward run, every value and gradient written on a node is whole, measured in the page: its
text no wider than its box (no ellipsis, which could turn -1.011e-5 into a "-1.01…" or
0.0001234 into a "0.00…" that reads as zero) and inside its node."""

import pytest
from editor import assert_numbers_whole, open_editor, run_backward, zoom_to_labels
from playwright.sync_api import expect
from test_layout_on_open import overlap

INSIDE = """() => [...document.querySelectorAll('.react-flow__node')].map((node) => {
  const box = node.querySelector('.op-node, .module-node') || node;
  const r = box.getBoundingClientRect();
  const face = node.querySelector('.lod') || node.querySelector('.op-node-title');
  const f = face.getBoundingClientRect();
  // the last line of text drawn in the face (a .lod's last child, or the title itself)
  const last = face.lastElementChild && face.classList.contains('lod')
    ? face.lastElementChild.getBoundingClientRect() : f;
  const ports = [...node.querySelectorAll('.port')].map((p) => {
    const pr = p.getBoundingClientRect();
    const h = p.querySelector('.react-flow__handle').getBoundingClientRect();
    return {top: pr.top, bottom: pr.bottom, centre: h.top + h.height / 2};
  });
  return {id: node.getAttribute('data-id'), top: r.top, bottom: r.bottom, left: r.left,
          right: r.right, faceBottom: Math.max(f.bottom, last.bottom), faceRight: f.right,
          textFits: face.scrollHeight <= face.clientHeight + 1, ports};
})"""

# Line breaks inside a name that could have gone whole to the next line: each face's characters
# with their line (a Range per character), a break between two characters that are neither a
# space nor after an underscore counted where the piece it cuts (between break opportunities)
# is no wider than the face (both on screen, at the canvas's zoom).
MID_WORD = """() => {
  const bad = [];
  for (const face of document.querySelectorAll('.lod-name, .op-node-title')) {
    const chars = [];
    const walk = document.createTreeWalker(face, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (let i = 0; i < n.data.length; i++) {
        const range = document.createRange();
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const r = range.getClientRects()[0];
        if (r) chars.push({ch: n.data[i], top: r.top, left: r.left, right: r.right, h: r.height});
      }
    }
    const opens = (k) => k === 0 || chars[k].ch === ' '
      || chars[k - 1].ch === ' ' || chars[k - 1].ch === '_';
    const style = getComputedStyle(face);
    const scale = face.getBoundingClientRect().width / face.offsetWidth;  // (the canvas's zoom)
    const room = (face.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight)) * scale;
    for (let k = 1; k < chars.length; k++) {
      if (chars[k].top - chars[k - 1].top < chars[k].h / 2 || opens(k)) continue;
      let a = k - 1, b = k;
      while (a > 0 && !opens(a)) a--;
      while (b < chars.length - 1 && !opens(b + 1)) b++;
      const piece = chars.slice(a, b + 1);
      const width = piece.reduce((w, c) => w + (c.right - c.left), 0);
      if (width <= room) bad.push(piece.map((c) => c.ch).join('') + ' in ' + face.textContent);
    }
  }
  return bad;
}"""


def _check(nodes):
    for n in nodes:
        assert n["faceBottom"] <= n["bottom"] + 0.5, n
        assert n["faceRight"] <= n["right"] + 0.5, n
        assert n["textFits"], n
        for p in n["ports"]:
            assert p["top"] - 0.5 <= p["centre"] <= p["bottom"] + 0.5, (n["id"], p)


@pytest.mark.parametrize("template", ["lenet-digits", "transformer-block"])
def test_every_face_lies_inside_its_node_at_every_zoom(page, template):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, template)
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    run_backward(page)
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.wait_for_timeout(500)
    expect(page.locator(".canvas.lod-compact")).to_have_count(1)  # the large faces
    at_fit = page.evaluate(INSIDE)
    _check(at_fit)
    assert page.evaluate(MID_WORD) == []
    assert_numbers_whole(page, at_least=len(at_fit))  # a value on every node, and gradients
    # grown, and still apart: no node on another
    boxes = [(n["left"], n["top"], n["right"] - n["left"], n["bottom"] - n["top"]) for n in at_fit]
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if overlap(a, b)]
    page.screenshot(path=f"e2e/artifacts/faces-fit-nodes-{template}.png")

    zoom_to_labels(page)  # full detail: the title line in the node's own 12 px monospace
    _check(page.evaluate(INSIDE))
    assert page.evaluate(MID_WORD) == []
    assert_numbers_whole(page)
    page.screenshot(path=f"e2e/artifacts/faces-fit-nodes-{template}-full.png")
