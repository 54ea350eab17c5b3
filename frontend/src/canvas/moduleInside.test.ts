import { describe, expect, it } from "vitest";
import { cardHeight, insideLayout } from "./ModuleInside";
import { NODE_WIDTH } from "./nodeSize";

const node = (id: string, x: number, y: number) => ({ id, op: "relu", params: {}, position: { x, y } });

describe("a module expanded in place", () => {
  it("draws its inner nodes at their places in the definition, from the box's corner", () => {
    const faces = { a: "a = relu(x)", b: "b = relu(a)" };
    const { at, width, height } = insideLayout({ nodes: [node("a", 300, 120), node("b", 520, 230)] }, faces);
    expect(at).toEqual({ a: { x: 10, y: 10 }, b: { x: 230, y: 120 } });
    expect(width).toBe(230 + NODE_WIDTH + 10);
    expect(height).toBe(120 + cardHeight(faces.b, "b") + 10);
  });

  it("puts a definition written without positions in one row, in its order", () => {
    const { at } = insideLayout({ nodes: [node("a", 0, 0), node("b", 0, 0), node("c", 0, 0)] }, {});
    expect([at.a.x, at.b.x, at.c.x]).toEqual([10, 10 + NODE_WIDTH + 40, 10 + 2 * (NODE_WIDTH + 40)]);
    expect(new Set([at.a.y, at.b.y, at.c.y])).toEqual(new Set([10]));
  });
});
