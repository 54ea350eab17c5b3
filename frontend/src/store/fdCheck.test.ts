import { describe, expect, it } from "vitest";
import type { GraphDocument } from "../api/types";
import { largest, nest, stepFor, unravel, verdict, withValues } from "./fdCheck";

describe("the finite-difference check", () => {
  it("nests flat values in a shape and finds an element's index", () => {
    expect(nest([1, 2, 3, 4, 5, 6], [2, 3])).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(nest([7], [])).toBe(7);
    expect(unravel(5, [2, 3])).toEqual([1, 2]);
    expect(unravel(0, [])).toEqual([]);
    expect(unravel(7, [2, 2, 2])).toEqual([1, 1, 1]);
  });

  it("checks the element with the largest gradient, whatever its sign", () => {
    expect(largest([0.1, -3, 2])).toBe(1);
    expect(largest([0])).toBe(0);
  });

  it("steps relative to the value, larger in float32", () => {
    expect(stepFor(0.5, "float32")).toBe(1e-2);
    expect(stepFor(-200, "float32")).toBe(2);
    expect(stepFor(3, "float64")).toBeCloseTo(3e-6, 15);
  });

  it("agrees on f = x^3 at x = 2 (f' = 12) and disagrees with a wrong gradient", () => {
    const x = 2;
    const h = stepFor(x, "float64");
    const f = (v: number) => v ** 3;
    const good = verdict(12, f(x + h), f(x - h), 2 * h);
    expect(good.numeric).toBeCloseTo(12, 6);
    expect(good.ok).toBe(true);
    expect(verdict(11.5, f(x + h), f(x - h), 2 * h).ok).toBe(false);
    // near zero, an absolute tolerance
    expect(verdict(0, 1e-4, 0, 1).ok).toBe(true);
  });

  it("sets the leaf's values in a copy of the document, the rest untouched", () => {
    const doc = {
      format: "wiregrad.graph",
      version: 1,
      name: "t",
      nodes: [
        { id: "w", op: "tensor", params: { shape: [2], init: "randn", requires_grad: true } },
        { id: "y", op: "sum", params: {} },
      ],
      edges: [],
    } as unknown as GraphDocument;
    const out = withValues(doc, "w", [1.5, -2], [2]);
    expect(out.nodes[0].params).toEqual({ shape: [2], init: "randn", requires_grad: true, value: [1.5, -2] });
    expect(out.nodes[1]).toBe(doc.nodes[1]);
    expect(doc.nodes[0].params.value).toBeUndefined();
  });
});
