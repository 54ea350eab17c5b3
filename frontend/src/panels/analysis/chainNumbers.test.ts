import { describe, expect, it } from "vitest";
import { OPS } from "../../testing/opSpecs";
import { summary } from "../../testing/summaries";
import { compactNested, explainChain, tensorNumbers } from "./chainRule";

describe("the chain rule on tensor edges, in numbers", () => {
  it("writes upstream ⊙ local = edge with one local number when it is the same everywhere", () => {
    // b = a * 3 with a = [2., 3.], L = b.mean(): upstream [0.5, 0.5], edge [1.5, 1.5]
    const c = explainChain({
      port: "input",
      spec: OPS.mul,
      params: { scalar: 3 },
      scalarPortConnected: false,
      backwardDone: true,
      upstream: summary([2], [0.5, 0.5]),
      edgeGrad: summary([2], [1.5, 1.5]),
    });
    expect(c.kind).toBe("tensor");
    if (c.kind !== "tensor") return;
    expect(c.numbers).toEqual({ upstream: "[0.5, 0.5]", local: "3", edge: "[1.5, 1.5]", full: true });
  });

  it("writes a local derivative that varies per element as a tensor, ? where upstream is 0", () => {
    const n = tensorNumbers(summary([2, 2], [[1, 2], [0, 4]]), summary([2, 2], [[2, 2], [0, 2]]), false);
    expect(n?.local).toBe("[[2, 1], [?, 0.5]]");
  });

  it("broadcasts a scalar upstream (sum), and gives no local through a reduction over broadcast dims", () => {
    expect(tensorNumbers(summary([], 1), summary([3], [1, 1, 1]), false)).toMatchObject({
      upstream: "1",
      local: "1",
      edge: "[1, 1, 1]",
    });
    // input [3] broadcast against [2, 3]: the edge sums the upstream over dim 0
    expect(tensorNumbers(summary([2, 3], [[1, 1, 1], [1, 1, 1]]), summary([3], [2, 2, 2]), false)?.local).toBeNull();
  });

  it("leaves the local out of matrix products: the edge is grad @ otherᵀ", () => {
    expect(tensorNumbers(summary([1, 2], [[1, 2]]), summary([1, 3], [[1, 2, 3]]), true)).toEqual({
      upstream: "[[1, 2]]",
      local: null,
      edge: "[[1, 2, 3]]",
      full: true,
    });
  });

  it("writes tensors past 16 elements in a compact matrix form", () => {
    const big = Array.from({ length: 8 }, (_, i) => Array.from({ length: 6 }, (_, j) => i * 6 + j));
    expect(compactNested(big)).toBe(
      "[[0, 1, …, 4, 5],\n [6, 7, …, 10, 11],\n [12, 13, …, 16, 17],\n …,\n [30, 31, …, 34, 35],\n [36, 37, …, 40, 41],\n [42, 43, …, 46, 47]]",
    );
    const n = tensorNumbers(summary([8, 6], big), summary([8, 6], big.map((r) => r.map((v) => 2 * v))), false);
    expect(n?.full).toBe(false);
    expect(n?.local).toBe("2");
    expect(n?.edge.startsWith("[[0, 2, …, 8, 10],")).toBe(true);
  });

  it("has no numbers when the run sent none (tensors past 1,024 elements)", () => {
    expect(tensorNumbers(summary([40, 40], null), summary([40, 40], null), false)).toBeNull();
  });
});
