import { describe, expect, it } from "vitest";
import { heatmapLayout, MIN_CELL } from "./heatmapLayout";

describe("heatmap layout", () => {
  it("keeps a 300x8 tensor's cells square and large enough to see (it scrolls)", () => {
    const l = heatmapLayout(300, 8);
    expect(l.cell).toBe(12);
    expect(l.width).toBe(96);
    expect(l.height).toBe(3600);
    expect(heatmapLayout(8, 300)).toEqual({ cell: 12, width: 3600, height: 96 });
  });

  it("fits square-ish matrices in about 320 px, cells between 6 and 24 px", () => {
    expect(heatmapLayout(4, 4)).toEqual({ cell: 24, width: 96, height: 96 });
    expect(heatmapLayout(32, 20)).toEqual({ cell: 10, width: 200, height: 320 });
    expect(heatmapLayout(100, 100).cell).toBe(MIN_CELL);
  });

  it("never draws a cell smaller than the minimum, however large the tensor", () => {
    for (const [r, c] of [
      [262, 1000],
      [1, 262_144],
      [512, 512],
      [1, 1],
    ]) {
      const l = heatmapLayout(r, c);
      expect(l.cell).toBeGreaterThanOrEqual(MIN_CELL);
      expect(l.width / c).toBe(l.height / r);
    }
  });
});
