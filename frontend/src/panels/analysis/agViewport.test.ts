import { describe, expect, it } from "vitest";
import { initialViewport, READABLE_ZOOM } from "./agViewport";

const box = (x: number, y: number, width: number, height: number) => ({ x, y, width, height });

describe("autograd view's first viewport", () => {
  it("fits a small graph to the panel, centred, no larger than 1.25", () => {
    const v = initialViewport(box(0, 0, 200, 100), null, 324, 400, "DOWN");
    expect(v.fitted).toBe(true);
    expect(v.zoom).toBe(1.25);
    expect(v.x).toBeCloseTo((324 - 250) / 2);
    expect(v.y).toBeCloseTo((400 - 125) / 2);
  });

  it("never starts below the readable zoom: text of 12 px stays at least 11 px", () => {
    const v = initialViewport(box(0, 0, 600, 1200), box(220, 0, 160, 60), 324, 400, "DOWN");
    expect(v.fitted).toBe(false);
    expect(v.zoom).toBeCloseTo(READABLE_ZOOM);
    expect(12 * v.zoom).toBeGreaterThanOrEqual(11);
    // the output's grad_fn at the top, centred across
    expect(v.y).toBeCloseTo(12);
    expect(v.x + (220 + 80) * v.zoom).toBeCloseTo(324 / 2);
  });

  it("flowing left, anchors the output at the right", () => {
    const v = initialViewport(box(0, 0, 2000, 300), box(1840, 100, 160, 60), 800, 300, "LEFT");
    expect(v.fitted).toBe(false);
    expect(v.x + 2000 * v.zoom).toBeCloseTo(800 - 12);
  });
});
