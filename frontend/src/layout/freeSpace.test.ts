import { describe, expect, it } from "vitest";
import { freeShift } from "./freeSpace";

const box = (x: number, y: number, width = 100, height = 50) => ({ x, y, width, height });
const hits = (a: ReturnType<typeof box>, b: ReturnType<typeof box>) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe("freeShift", () => {
  it("leaves a group where it is when nothing is in the way", () => {
    expect(freeShift([box(0, 0)], [box(500, 500)])).toEqual({ x: 0, y: 0 });
    expect(freeShift([box(0, 0)], [])).toEqual({ x: 0, y: 0 });
  });

  it("moves a group off the nodes it would cover, to the nearest free place", () => {
    const others = [box(0, 0), box(200, 0), box(0, 100)];
    const group = [box(10, 10), box(150, 10)];
    const s = freeShift(group, others);
    for (const g of group) for (const o of others) expect(hits({ ...g, x: g.x + s.x, y: g.y + s.y }, o)).toBe(false);
    expect(Math.hypot(s.x, s.y)).toBeLessThan(400);
  });

  it("finds room in a crowded row", () => {
    const row = Array.from({ length: 20 }, (_, i) => box(i * 150, 0));
    const s = freeShift([box(300, 0)], row);
    expect(s.y).not.toBe(0);
  });
});
