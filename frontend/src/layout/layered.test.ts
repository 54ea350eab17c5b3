// The linear-time layered layout both the canvas and the autograd view use (the canvas's
// preset is tested in canvas/layout.test.ts).
import { describe, expect, it } from "vitest";
import { layersOf, placeLayers } from "./layered";

const link = (source: string, target: string) => ({ source, target });
const box = (id: string, height = 50) => ({ id, width: 170, height });

describe("layersOf", () => {
  // a feeds b and c; b feeds d; c feeds d; e is alone; s is a source read only by d
  const ids = ["e", "d", "c", "b", "a", "s"];
  const links = [link("a", "b"), link("a", "c"), link("b", "d"), link("c", "d"), link("s", "d")];

  it("puts each node one layer past its furthest input", () => {
    const { layer } = layersOf(ids, links);
    expect([..."abcde"].map((id) => layer.get(id))).toEqual([0, 1, 1, 2, 0]);
    expect(layer.get("s")).toBe(0);
  });

  it("moves a source next to its first reader when asked", () => {
    expect(layersOf(ids, links, { sourcesNearReaders: true }).layer.get("s")).toBe(1);
  });

  it("orders each layer as the document does, or as the walk reached its nodes", () => {
    expect(layersOf(ids, links, { order: "document" }).layers).toEqual([["e", "a", "s"], ["c", "b"], ["d"]]);
    expect(layersOf(ids, links, { order: "reached" }).layers[1]).toEqual(["b", "c"]);
  });

  it("puts the nodes of a cycle in one last layer, and ignores wires to unknown nodes", () => {
    const { layer } = layersOf(["a", "b", "c"], [link("a", "b"), link("b", "a"), link("c", "gone")]);
    expect(layer.get("c")).toBe(0);
    expect(layer.get("a")).toBe(1);
    expect(layer.get("b")).toBe(1);
  });
});

describe("placeLayers", () => {
  it("flowing left: layer 0 at the right, each layer a column, nodes of a layer apart", () => {
    const links = [link("r", "p"), link("r", "q"), link("p", "l"), link("q", "l")];
    const { layers } = layersOf(["r", "p", "q", "l"], links, { order: "reached" });
    const at = placeLayers(["r", "p", "q", "l"].map((id) => box(id)), links, layers, { gapX: 44, gapY: 24, sweeps: 1, flow: "left" });
    expect(at.get("r")!.x).toBeGreaterThan(at.get("p")!.x);
    expect(at.get("p")!.x).toBe(at.get("q")!.x);
    expect(at.get("p")!.x - at.get("l")!.x).toBe(170 + 44);
    expect(Math.abs(at.get("p")!.y - at.get("q")!.y)).toBeGreaterThanOrEqual(50 + 24);
    // r sits level with what it feeds, on average
    expect(at.get("r")!.y).toBeCloseTo((at.get("p")!.y + at.get("q")!.y) / 2);
  });

  it("wraps a deep chain into bands, one under the other, each starting at the right", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `n${i}`);
    const links = ids.slice(1).map((id, i) => link(ids[i], id));
    const { layers } = layersOf(ids, links, { order: "reached" });
    const at = placeLayers(ids.map((id) => box(id)), links, layers, { gapX: 44, gapY: 24, sweeps: 1, flow: "left", wrapAfter: 24, bandGap: 80 });
    const xs = new Set(ids.map((id) => at.get(id)!.x));
    const ys = [...new Set(ids.map((id) => at.get(id)!.y))].sort((a, b) => a - b);
    expect(xs.size).toBeLessThan(200); // not one thin strip
    expect(ys.length).toBeGreaterThan(1);
    expect(ys[1] - ys[0]).toBe(50 + 80); // a band's height and the gap
    expect(at.get("n0")!.y).toBe(0);
    expect(at.get("n0")!.x).toBe(Math.max(...xs));
    // the next band starts again at the right
    const second = ids.find((id) => at.get(id)!.y === ys[1])!;
    expect(at.get(second)!.x).toBe(Math.max(...xs));
  });
});
