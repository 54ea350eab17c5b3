import { describe, expect, it } from "vitest";
import type { OpSpec, Summary } from "../../api/types";
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

// The ops as GET /api/ops describes them (their ports' `no_grad` texts are the registry's:
// tests/server/test_ops_gradient_info.py checks the server sends exactly these).
const op = (name: string, ports: Record<string, string>): OpSpec => ({
  name,
  category: "test",
  doc: "",
  inputs: Object.entries(ports).map(([port, no_grad]) => ({
    name: port,
    optional: false,
    variadic: false,
    doc: "",
    ...(no_grad ? { no_grad } : {}),
  })),
  outputs: ["out"],
  params: [],
  source: false,
});
const CONDITION =
  "the condition of {op} has no gradient: it only picks which values pass, so nothing flows back to {source}.";
const SPECS: Record<string, OpSpec> = {
  detach: op("detach", { input: "detach sends no gradient back to its input: it cuts the graph here." }),
  gt: op("gt", {
    input: "a comparison ({op}) has no gradient: nothing flows back along this edge.",
    other: "a comparison ({op}) has no gradient: nothing flows back along this edge.",
  }),
  where: op("where", { condition: CONDITION, input: "", other: "" }),
  if: op("if", { condition: CONDITION, then: "", else: "" }),
  add: op("add", { input: "", other: "" }),
};

describe("why no gradient flowed along an edge", () => {
  it("names detach, not its input, when the input requires grad (detach-stops-gradient, y → z)", () => {
    const r = noGradientReason({
      source: "y",
      consumer: "z",
      op: "detach",
      port: "input",
      spec: SPECS.detach,
      sourceValue: value(true),
    });
    expect(r).toBe("detach sends no gradient back to its input: it cuts the graph here.");
    expect(r).not.toMatch(/does not require grad/);
  });

  it("names the comparison (branch-square-or-negate, x → cond)", () => {
    const r = noGradientReason({
      source: "x",
      consumer: "cond",
      op: "gt",
      port: "input",
      spec: SPECS.gt,
      sourceValue: value(true),
    });
    expect(r).toBe("a comparison (gt) has no gradient: nothing flows back along this edge.");
  });

  it("names a condition port of where and if", () => {
    for (const op of ["where", "if"])
      expect(
        noGradientReason({ source: "c", consumer: "s", op, port: "condition", spec: SPECS[op], sourceValue: value(false) }),
      ).toBe(`the condition of ${op} has no gradient: it only picks which values pass, so nothing flows back to c.`);
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

  it("takes the reason from the op's spec (GET /api/ops), not from a list of op names", () => {
    // an op the page has never heard of: its port's no_grad text is the reason
    const spec = op("frobnicate", { input: "", mask: "{op}'s mask is data: nothing flows back to {source}." });
    expect(
      noGradientReason({ source: "m", consumer: "f", op: "frobnicate", port: "mask", spec, sourceValue: value(true) }),
    ).toBe("frobnicate's mask is data: nothing flows back to m.");
    // its differentiable port, and detach without a spec: no reason of the op's own
    expect(
      noGradientReason({ source: "x", consumer: "f", op: "frobnicate", port: "input", spec, sourceValue: value(true) }),
    ).toBe("no gradient reached f itself: it is not on the way from the backward target to a leaf that requires grad.");
    expect(
      noGradientReason({ source: "y", consumer: "z", op: "detach", port: "input", sourceValue: value(false) }),
    ).toBe("y does not require grad, so autograd does not track it.");
  });
});
