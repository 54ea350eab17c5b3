// Problems found as the graph is edited (store/shapes.ts): a node's own show before any run,
// a half-wired graph's missing inputs do not, and a refused run's problems that an edit fixed
// go.
import { describe, expect, it } from "vitest";
import type { NodeProblem } from "../api/types";
import { isEarly, stillFound } from "./shapes";

const matmul: NodeProblem = { node: "m", message: "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)" };
const missing: NodeProblem = { node: "a", port: "other", message: "input 'other' of add is not connected" };
const wire: NodeProblem = { node: "b", edge: "e1", port: "input", message: "input 'input' of neg already has an edge" };
const stale: NodeProblem = { node: "l", param: "weight", code: "stale_values", message: "size mismatch" };

describe("problems before a run", () => {
  it("are a node's own, not a missing input, a wire's, or stale values", () => {
    expect(isEarly(matmul)).toBe(true);
    expect(isEarly({ node: "c", message: "cycle: c -> d -> c" })).toBe(true);
    expect(isEarly(missing)).toBe(false);
    expect(isEarly(wire)).toBe(false);
    expect(isEarly(stale)).toBe(false);
    expect(isEarly({ message: "the graph has 10001 nodes; the limit is 10000" })).toBe(false);
  });

  it("keep a refused run's problems while validation still finds them, and only those", () => {
    const shown = [matmul, missing];
    expect(stillFound(shown, [{ ...missing }, { ...matmul }])).toBe(shown); // unchanged: the same list
    expect(stillFound(shown, [{ ...missing }])).toEqual([missing]); // the matmul was fixed
    expect(stillFound(shown, [])).toEqual([]);
    // the same message at another port is another problem
    expect(stillFound([missing], [{ ...missing, port: "input" }])).toEqual([]);
  });
});
