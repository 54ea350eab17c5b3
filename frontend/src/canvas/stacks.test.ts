import { describe, expect, it } from "vitest";
import { asStacks, repeatedChains, STACK_GAP, stackedRows } from "./stacks";

const inst = (id: string, module = "Block") => ({ id, data: { op: "module", params: { module } } });
const op = (id: string) => ({ id, data: { op: "linear", params: {} } });
const link = (source: string, target: string) => ({ source, target });

describe("repeated blocks", () => {
  const blocks = ["b0", "b1", "b2", "b3"];
  const nodes = [op("emb"), ...blocks.map((b) => inst(b)), op("head")];
  const links = [link("emb", "b0"), link("b0", "b1"), link("b1", "b2"), link("b2", "b3"), link("b3", "head")];

  it("finds a chain of instances of one module, each feeding the next", () => {
    expect(repeatedChains(nodes, links)).toEqual([blocks]);
    // two are a row, not a stack; another module breaks the chain; a fork is no chain
    expect(repeatedChains(nodes.slice(0, 3), links.slice(0, 2))).toEqual([]);
    const mixed = [op("emb"), inst("b0"), inst("b1"), inst("c", "Other"), inst("b3")];
    expect(repeatedChains(mixed, [link("b0", "b1"), link("b1", "c"), link("c", "b3")])).toEqual([]);
    const fork = [inst("a"), inst("b"), inst("c"), inst("d")];
    expect(repeatedChains(fork, [link("a", "b"), link("a", "c"), link("b", "d")])).toEqual([]);
  });

  it("lays a chain out as one tall box, then opens it into a column", () => {
    const boxes = [...nodes.map((n) => ({ id: n.id, width: 180, height: 60 }))];
    const { boxes: out, links: joined, unstack } = asStacks(boxes, links, [blocks]);
    expect(out.map((b) => b.id)).toEqual(["emb", "b0", "head"]);
    expect(out[1].height).toBe(4 * 60 + 3 * STACK_GAP);
    expect(joined).toEqual([link("emb", "b0"), link("b0", "head")]);
    const at = unstack({ emb: { x: 0, y: 0 }, b0: { x: 300, y: -100 }, head: { x: 600, y: 0 } });
    expect(blocks.map((b) => at[b])).toEqual(blocks.map((_, i) => ({ x: 300, y: -100 + i * (60 + STACK_GAP) })));
  });
});

describe("repeated blocks stored in a row", () => {
  it("stack at the first block's place, what follows moved left by the row they took", () => {
    const ids = ["emb", "b0", "b1", "b2", "head"];
    const at = Object.fromEntries(ids.map((id, i) => [id, { x: 220 * i, y: 0 }]));
    const boxes = ids.map((id) => ({ id, width: 180, height: 60 }));
    const out = stackedRows(at, boxes, [["b0", "b1", "b2"]]);
    expect(out.emb).toEqual({ x: 0, y: 0 });
    expect(["b0", "b1", "b2"].map((b) => out[b])).toEqual([0, 1, 2].map((i) => ({ x: 220, y: i * (60 + STACK_GAP) })));
    expect(out.head).toEqual({ x: 440, y: 0 });
    // a chain not in one row is a layout of someone's own: kept
    const moved = { ...at, b1: { x: 440, y: 300 } };
    expect(stackedRows(moved, boxes, [["b0", "b1", "b2"]])).toBe(moved);
  });
});
