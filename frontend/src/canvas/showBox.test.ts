import { describe, expect, it } from "vitest";
import { inView } from "./showBox";

const box = { x: 100, y: 50, width: 400, height: 200 };

describe("an expanded instance brought into view", () => {
  it("leaves a view that shows it whole", () => {
    expect(inView(box, { x: 0, y: 0, zoom: 1 }, 800, 600)).toBeNull();
  });

  it("pans the least where it fits at its zoom", () => {
    // its left side 76 px off the canvas at zoom 1: moved right to the 24 px margin
    expect(inView(box, { x: -176, y: 0, zoom: 1 }, 800, 600)).toEqual({ x: -76, y: 0, zoom: 1 });
    // past the bottom: moved up
    expect(inView(box, { x: 0, y: 400, zoom: 1 }, 800, 600)).toEqual({ x: 0, y: 326, zoom: 1 });
  });

  it("zooms out, centred, where it does not fit, and never zooms in", () => {
    const v = inView(box, { x: 0, y: 0, zoom: 2 }, 600, 400)!;
    expect(v.zoom).toBeCloseTo((600 - 48) / 400);
    expect(v.x + (box.x + box.width / 2) * v.zoom).toBeCloseTo(300);
    expect(v.y + (box.y + box.height / 2) * v.zoom).toBeCloseTo(200);
    expect(inView(box, { x: -500, y: 0, zoom: 0.5 }, 800, 600)!.zoom).toBe(0.5);
  });
});
