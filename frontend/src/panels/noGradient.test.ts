import { describe, expect, it } from "vitest";
import type { Summary } from "../api/types";
import { noGradientReason } from "./Explain";

const value = (requires_grad: boolean): Summary => ({
  shape: [],
  dtype: "float32",
  numel: 1,
  requires_grad,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: null,
});

describe("why no gradient flowed along an edge", () => {
  it("names detach, not its input, when the input requires grad (detach-stops-gradient, y → z)", () => {
    const r = noGradientReason({ source: "y", consumer: "z", op: "detach", port: "input", sourceValue: value(true) });
    expect(r).toBe("detach sends no gradient back to its input: it cuts the graph here.");
    expect(r).not.toMatch(/does not require grad/);
  });

  it("names the comparison (branch-square-or-negate, x → cond)", () => {
    const r = noGradientReason({
      source: "x",
      consumer: "cond",
      op: "gt",
      port: "input",
      sourceValue: value(true),
    });
    expect(r).toBe("a comparison (gt) has no gradient: nothing flows back along this edge.");
  });

  it("names a condition port of where and if", () => {
    for (const op of ["where", "if"])
      expect(
        noGradientReason({ source: "c", consumer: "s", op, port: "condition", sourceValue: value(false) }),
      ).toMatch(new RegExp(`^the condition of ${op} has no gradient`));
  });

  it("says the source does not require grad only when its value says so", () => {
    expect(
      noGradientReason({ source: "x", consumer: "a", op: "add", port: "input", sourceValue: value(false) }),
    ).toBe("x does not require grad, so autograd does not track it.");
    expect(
      noGradientReason({ source: "x", consumer: "a", op: "add", port: "input", sourceValue: value(true) }),
    ).toBe("no gradient reached a itself: it is not on the way from the backward target to a leaf that requires grad.");
    expect(
      noGradientReason({
        source: "x",
        consumer: "a",
        op: "add",
        port: "input",
        sourceValue: value(true),
        consumerGrad: value(false),
      }),
    ).toBe("a (add) sent no gradient back to x along this edge.");
  });
});
