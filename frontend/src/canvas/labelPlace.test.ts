import { describe, expect, it } from "vitest";
import { curveOf, labelSize, placeLabel, pointAt } from "./labelPlace";

const path = (sx: number, sy: number, tx: number, ty: number) => {
  const dx = (tx - sx) / 2;
  return `M${sx},${sy} C${sx + dx},${sy} ${tx - dx},${ty} ${tx},${ty}`;
};
const covers = (at: { x: number; y: number }, size: { width: number; height: number }, n: { x: number; y: number; width: number; height: number }) =>
  at.x + size.width / 2 > n.x && at.x - size.width / 2 < n.x + n.width && at.y + size.height / 2 > n.y && at.y - size.height / 2 < n.y + n.height;

describe("edge label placement", () => {
  it("reads React Flow's bezier path and walks along it", () => {
    const c = curveOf(path(0, 0, 200, 100))!;
    expect(c).toHaveLength(4);
    expect(pointAt(c, 0)).toEqual({ x: 0, y: 0 });
    expect(pointAt(c, 1)).toEqual({ x: 200, y: 100 });
    expect(pointAt(c, 0.5)).toEqual({ x: 100, y: 50 });
    expect(curveOf("M0,0 L1,1")).toBeNull();
  });

  it("keeps the middle when no node is near", () => {
    const size = labelSize(["[0.5, 0.5]"]);
    const far = [{ x: 1000, y: 1000, width: 180, height: 95 }];
    expect(placeLabel(path(0, 0, 300, 0), size, far, { x: 150, y: 0 })).toEqual({ x: 150, y: 0 });
  });

  it("moves a label off a node that sits on the middle of the wire", () => {
    const size = labelSize(["[0.5, 0.5]", "∇ [1.5, 1.5]"]);
    // a third node right over the wire's middle
    const blocker = { x: 230, y: -40, width: 180, height: 95 };
    const ends = [
      { x: -180, y: -40, width: 180, height: 95 },
      { x: 600, y: -40, width: 180, height: 95 },
    ];
    const at = placeLabel(path(0, 0, 600, 0), size, [blocker, ...ends], { x: 300, y: 0 });
    for (const n of [blocker, ...ends]) expect(covers(at, size, n)).toBe(false);
  });

  it("puts the label beside the wire when the nodes are too close for any point along it", () => {
    const size = labelSize(["[0.5, 0.5]"]);
    const ends = [
      { x: -180, y: -40, width: 180, height: 95 },
      { x: 40, y: -40, width: 180, height: 95 },
    ];
    const at = placeLabel(path(0, 0, 40, 0), size, ends, { x: 20, y: 0 });
    expect(at.y).not.toBe(0);
    // the least covered place is chosen even when none is free
    expect(Number.isFinite(at.x) && Number.isFinite(at.y)).toBe(true);
  });
});
