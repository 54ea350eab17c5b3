import { describe, expect, it } from "vitest";
import type { OpSpec } from "../api/types";
import type { OpNode } from "../doc/convert";
import { isStacked, quickLayout, separated, wrapRows } from "./layout";
import { compactHeight, nodeSize, titleHeight } from "./nodeSize";
import type { Measure } from "./textWrap";

const box = (id: string, height = 80) => ({ id, width: 180, height });
const link = (source: string, target: string) => ({ source, target });
const node = (id: string, x: number, y: number) => ({ id, position: { x, y } }) as OpNode;

describe("quickLayout", () => {
  // x, y feed a; a and w feed b; b feeds out
  const boxes = ["x", "y", "a", "w", "b", "out"].map((id) => box(id));
  const links = [link("x", "a"), link("y", "a"), link("a", "b"), link("w", "b"), link("b", "out")];

  it("draws data flowing left to right, an input in the layer before its first reader", () => {
    const at = quickLayout(boxes, links);
    for (const { source, target } of links) expect(at[source].x).toBeLessThan(at[target].x);
    expect(at.x.x).toBe(at.y.x);
    expect(at.w.x).toBe(at.a.x); // not with x and y, far from b
  });

  it("keeps the nodes of a layer apart", () => {
    const tall = [box("s", 300), ...["p", "q", "r"].map((id) => box(id))];
    const at = quickLayout(tall, [link("s", "p"), link("s", "q"), link("s", "r")]);
    const tops = ["p", "q", "r"].map((id) => at[id].y).sort((a, b) => a - b);
    expect(tops[1] - tops[0]).toBeGreaterThanOrEqual(80);
    expect(tops[2] - tops[1]).toBeGreaterThanOrEqual(80);
  });

  it("places every node, even on a cycle or with wires to nodes it does not know", () => {
    const at = quickLayout([box("a"), box("b"), box("c")], [link("a", "b"), link("b", "a"), link("c", "gone")]);
    expect(Object.keys(at).sort()).toEqual(["a", "b", "c"]);
    for (const p of Object.values(at)) expect(Number.isFinite(p.x) && Number.isFinite(p.y)).toBe(true);
  });
});

describe("isStacked", () => {
  it("is true when two or more nodes all sit on one spot", () => {
    expect(isStacked([node("a", 0, 0), node("b", 0, 0)])).toBe(true);
    expect(isStacked([node("a", 0, 0), node("b", 0, 5)])).toBe(false);
    expect(isStacked([node("a", 0, 0)])).toBe(false);
    expect(isStacked([])).toBe(false);
  });
});

describe("nodeSize", () => {
  const port = (name: string) => ({ name, optional: false, variadic: false, doc: "" });
  const add: OpSpec = {
    name: "add",
    category: "arithmetic",
    doc: "",
    inputs: [port("input"), port("other")],
    outputs: ["out"],
    params: [],
    source: false,
  };

  it("gives each port's handle on its row, inputs on the left, outputs on the right", () => {
    const { width, height, handles } = nodeSize(add);
    expect(width).toBe(180);
    expect(height).toBe(95); // as Chromium lays out .op-node (styles.css)
    expect(handles.map((h) => [h.type, h.id, h.x, h.y])).toEqual([
      ["target", "input", -3.5, 30],
      ["target", "other", -3.5, 45],
      ["source", "out", 174.5, 30],
    ]);
  });

  it("keeps a line for each result a run can write", () => {
    expect(nodeSize({ ...add, inputs: [], source: true }).height).toBe(97);
    expect(nodeSize({ ...add, name: "linear", inputs: [port("input")] }).height).toBe(129);
    expect(nodeSize({ ...add, inputs: [port("input")] }).height).toBe(95); // two rows kept
    // a conv's or a norm's own weight and bias have their .grad lines too
    const state = (name: string) => ({ name, type: "tensor" as const, default: null, doc: "" });
    const conv = { ...add, name: "conv2d", inputs: [port("input")], params: [state("weight"), state("bias_value")] };
    expect(nodeSize(conv).height).toBe(129);
    expect(nodeSize({ ...conv, name: "embedding", params: [state("weight")] }).height).toBe(112);
  });
});

describe("nodeSize from the face", () => {
  const port = (name: string) => ({ name, optional: false, variadic: false, doc: "" });
  const state = (name: string) => ({ name, type: "tensor" as const, default: null, doc: "" });
  const embedding: OpSpec = {
    name: "embedding",
    category: "layers",
    doc: "",
    inputs: [port("input")],
    outputs: ["out"],
    params: [state("weight")],
    source: false,
  };
  // every glyph 0.6 em wide (DejaVu Sans Mono's advance; the page measures its own fonts)
  const em: Measure = (text, font) => text.length * 0.6 * Number(/(\d+)px/.exec(font)![1]);

  it("keeps the plain size for a face of one line at every zoom", () => {
    const face = { face: "a = x + y", name: "a" };
    expect(nodeSize(embedding, face, em)).toEqual(nodeSize(embedding, undefined, em));
    expect(titleHeight(face, em)).toBe(23);
  });

  it("grows the title by a line for each line the face wraps to, and moves the handles down", () => {
    // 162 px of 7.2 px glyphs: 22 a line; "embed = embedding(tokens, num_embeddings=8, embedding_dim=16)"
    // breaks as "embed = " | "embedding(tokens, " | "num_embeddings=8, " | "embedding_dim=16)"
    const face = { face: "embed = embedding(tokens, num_embeddings=8, embedding_dim=16)", name: "embed" };
    expect(titleHeight(face, em)).toBe(23 + 3 * 14);
    const plain = nodeSize(embedding, undefined, em);
    const grown = nodeSize(embedding, face, em);
    expect(grown.handles[0].y - plain.handles[0].y).toBe(42);
    expect(grown.title).toBe(65);
    // and its large face at the readable floor (22 px type, 13.2 px glyphs: 12 a line)
    // wraps to 6 lines of 26.4 px ("embed = " | "embedding(to" | "kens, num_" |
    // "embeddings=8" | ", embedding_" | "dim=16)": after an underscore where it can), then
    // the value and gradient lines kept for the widest numbers: "μ -0.0001234" on one line,
    // and "∇ μ -0.0001234" (158.4 px) on two: 2 + 2 + 158.4 + 3 * 22
    expect(compactHeight(face, em)).toBe(229);
    expect(grown.height).toBe(229);
  });

  it("counts the target's mark on the title line", () => {
    const face = { face: "loss = cross_entropy(l)", name: "loss" }; // 23 glyphs: two lines already
    const mark = { ...face, face: "loss = ce(logits, y)" }; // 20 glyphs, 22 with " ◎"
    expect(titleHeight({ ...mark, target: false }, em)).toBe(23);
    expect(titleHeight({ ...mark, target: true }, em)).toBe(23);
    expect(titleHeight({ ...mark, face: "loss = ce(logits, ys)", target: true }, em)).toBe(37);
    expect(titleHeight(face, em)).toBe(37);
  });
});

describe("wrapRows", () => {
  // a chain of 13 nodes in one row, 220 apart: LeNet's shape
  const ids = Array.from({ length: 13 }, (_, i) => `n${i}`);
  const at = Object.fromEntries(ids.map((id, i) => [id, { x: i * 220, y: 0 }]));
  const boxes = ids.map((id) => ({ id, width: 180, height: 100 }));

  it("wraps a long chain into rows that fit a laptop's canvas larger", () => {
    const out = wrapRows(at, boxes, { width: 900, height: 850 });
    const rows = new Set(Object.values(out).map((p) => p.y));
    expect(rows.size).toBeGreaterThan(1);
    const right = Math.max(...Object.values(out).map((p) => p.x)) + 180;
    expect(right).toBeLessThan(13 * 220 / 2);
    // in reading order: each node right of the one before, or on a later row
    for (let i = 1; i < 13; i++) {
      const [a, b] = [out[ids[i - 1]], out[ids[i]]];
      expect(b.x > a.x || b.y > a.y).toBe(true);
    }
  });

  it("keeps a layout that already fits at full detail", () => {
    const short = Object.fromEntries(ids.slice(0, 3).map((id) => [id, at[id]]));
    expect(wrapRows(short, boxes, { width: 900, height: 850 })).toBe(short);
  });
});

describe("separated", () => {
  const box = (id: string, height = 100) => ({ id, width: 180, height });

  it("leaves a layout whose nodes do not overlap as it is", () => {
    const at = { a: { x: 0, y: 0 }, b: { x: 0, y: 120 }, c: { x: 200, y: 0 } };
    expect(separated(at, [box("a"), box("b"), box("c")])).toBe(at);
  });

  it("pushes a node below a grown one above it, and the column below it in turn", () => {
    // the embedding grew to 233 px: pos (under it) and what was under pos move down
    const at = { embed: { x: 0, y: 0 }, pos: { x: 0, y: 120 }, under: { x: 0, y: 240 }, x: { x: 220, y: 0 } };
    const out = separated(at, [box("embed", 233), box("pos"), box("under"), box("x")]);
    expect(out.embed).toEqual({ x: 0, y: 0 });
    expect(out.pos).toEqual({ x: 0, y: 249 });
    expect(out.under).toEqual({ x: 0, y: 365 });
    expect(out.x).toEqual({ x: 220, y: 0 }); // another column: untouched
  });

  it("stacks a column of 2,000 overlapping nodes apart in one pass", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `n${i}`);
    const at = Object.fromEntries(ids.map((id, i) => [id, { x: 0, y: i * 10 }]));
    const started = performance.now();
    const out = separated(at, ids.map((id) => box(id)));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(ids.map((id) => out[id].y)).toEqual(ids.map((_, i) => i * 116));
  });

  it("moves only nodes that overlap horizontally too", () => {
    const at = { a: { x: 0, y: 0 }, b: { x: 150, y: 50 } };
    const out = separated(at, [box("a"), box("b")]);
    expect(out.b).toEqual({ x: 150, y: 116 });
    const apart = { a: { x: 0, y: 0 }, b: { x: 180, y: 50 } }; // edge to edge: no overlap
    expect(separated(apart, [box("a"), box("b")])).toBe(apart);
  });
});
