import { describe, expect, it } from "vitest";
import type { Summary } from "../api/types";
import { explainChain, KNOWN_OPS, localDerivative, scalarChain, unknownFormula } from "./chainRule";

const summary = (shape: number[], preview: Summary["preview"]): Summary => ({
  shape,
  dtype: "float32",
  numel: shape.reduce((a, b) => a * b, 1),
  requires_grad: true,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: null,
  preview,
});

const base = {
  port: "input",
  op: "add",
  params: {},
  otherConnected: true,
  backwardDone: true,
};

describe("localDerivative", () => {
  it("knows the arithmetic ops per port", () => {
    expect(localDerivative("add", "input")?.formula).toBe("1");
    expect(localDerivative("add", "other")?.formula).toBe("1");
    expect(localDerivative("sub", "other")?.formula).toBe("−1");
    expect(localDerivative("mul", "input")?.formula).toBe("other");
    expect(localDerivative("mul", "other")?.formula).toBe("input");
    expect(localDerivative("div", "input")?.formula).toBe("1/other");
    expect(localDerivative("div", "other")?.formula).toBe("−input/other²");
  });

  it("fills in the scalar param when other is unconnected", () => {
    expect(localDerivative("pow", "input", { scalar: 2 }, false)?.formula).toBe("2·input");
    expect(localDerivative("pow", "input", { scalar: 3 }, false)?.formula).toBe("3·input^2");
    expect(localDerivative("pow", "input", { scalar: 0.5 }, false)?.formula).toBe("0.5·input^(−0.5)");
    expect(localDerivative("pow", "input", { scalar: 2 }, true)?.formula).toBe("other·input^(other−1)");
    expect(localDerivative("mul", "input", { scalar: 3 }, false)?.formula).toBe("3 (the scalar)");
    expect(localDerivative("div", "input", { scalar: 4 }, false)?.formula).toBe("1/4");
  });

  it("knows elementwise functions and reductions", () => {
    expect(localDerivative("exp", "input")?.formula).toBe("exp(input)");
    expect(localDerivative("log", "input")?.formula).toBe("1/input");
    expect(localDerivative("tanh", "input")?.formula).toBe("1 − tanh²(input)");
    expect(localDerivative("sigmoid", "input")?.formula).toBe("σ(input)·(1 − σ(input))");
    expect(localDerivative("relu", "input")?.formula).toMatch(/input > 0/);
    expect(localDerivative("neg", "input")?.formula).toBe("−1");
    expect(localDerivative("mean", "input")?.formula).toMatch(/^1\/n/);
    expect(localDerivative("sum", "input")?.formula).toMatch(/^1 /);
    for (const op of ["sqrt", "sin", "cos", "linear", "mse_loss"]) expect(KNOWN_OPS).toContain(op);
  });

  it("knows the other activations, with their params filled in", () => {
    expect(localDerivative("hardtanh", "input", { min_val: -0.5, max_val: 2 })?.formula).toBe(
      "1 where −0.5 < input < 2, else 0",
    );
    expect(localDerivative("hardtanh", "input")?.formula).toBe("1 where −1 < input < 1, else 0");
    expect(localDerivative("elu", "input", { alpha: 0.5 })?.formula).toBe("1 where input > 0, else 0.5·exp(input)");
    expect(localDerivative("silu", "input")?.formula).toBe("σ(input)·(1 + input·(1 − σ(input)))");
    expect(localDerivative("softsign", "input")?.formula).toBe("1/(1 + |input|)²");
    for (const op of ["softplus", "gelu", "selu", "celu", "relu6", "hardswish", "logsigmoid", "tanhshrink"])
      expect(KNOWN_OPS).toContain(op);
  });

  it("marks matrix products as giving the edge gradient directly", () => {
    expect(localDerivative("matmul", "input")).toEqual({ formula: "grad @ otherᵀ", direct: true });
    expect(localDerivative("matmul", "other")).toEqual({ formula: "inputᵀ @ grad", direct: true });
    expect(localDerivative("linear", "input")?.direct).toBe(true);
  });

  it("follows mse_loss's reduction", () => {
    expect(localDerivative("mse_loss", "input")?.formula).toBe("2·(input − target)/n");
    expect(localDerivative("mse_loss", "input", { reduction: "sum" })?.formula).toBe("2·(input − target)");
    expect(localDerivative("mse_loss", "target")?.formula).toBe("−2·(input − target)/n");
  });

  it("returns null for unknown ops and ports", () => {
    expect(localDerivative("softmax", "input")).toBeNull();
    expect(localDerivative("add", "condition")).toBeNull();
    expect(unknownFormula("input")).toBe("∂out/∂input (see the op's backward)");
  });
});

describe("scalarChain", () => {
  it("recovers the local derivative as edge gradient ÷ upstream", () => {
    expect(scalarChain(10, 10)).toEqual({ local: 1, text: "10 × 1 = 10" });
    expect(scalarChain(1, 10)).toEqual({ local: 10, text: "1 × 10 = 10" });
    expect(scalarChain(10, -10).text).toBe("10 × -1 = -10");
    expect(scalarChain(3, 1).text).toBe("3 × 0.3333 = 1");
  });

  it("cannot recover it when upstream is 0", () => {
    expect(scalarChain(0, 0)).toEqual({ local: null, text: "0 × ? = 0" });
  });
});

describe("explainChain", () => {
  it("asks for a backward run when the edge has no gradient yet", () => {
    expect(explainChain({ ...base, backwardDone: false }).kind).toBe("needs-backward");
    expect(explainChain(base).kind).toBe("no-gradient");
  });

  it("says when the edge is on a branch not taken", () => {
    expect(explainChain({ ...base, op: "if", port: "else", notTaken: "else" })).toEqual({
      kind: "not-taken",
      port: "else",
    });
  });

  it("gives the numbers for scalars (square of a sum)", () => {
    // x -> a (add) -> z (pow 2): upstream at a is 10, edge x-a carries 10
    const xa = explainChain({
      ...base,
      upstream: summary([], 10),
      edgeGrad: summary([], 10),
    });
    expect(xa).toMatchObject({ kind: "scalar", upstream: 10, local: 1, edgeGrad: 10, product: "10 × 1 = 10", formula: "1", known: true });
    // a -> z: z is the target (gradient 1), edge a-z carries 2a = 10
    const az = explainChain({
      ...base,
      op: "pow",
      params: { scalar: 2 },
      otherConnected: false,
      upstream: summary([], 1),
      edgeGrad: summary([], 10),
    });
    expect(az).toMatchObject({ kind: "scalar", local: 10, product: "1 × 10 = 10", formula: "2·input" });
  });

  it("treats one-element tensors as scalars", () => {
    const c = explainChain({ ...base, upstream: summary([1], [4]), edgeGrad: summary([1, 1], [[2]]) });
    expect(c).toMatchObject({ kind: "scalar", upstream: 4, local: 0.5 });
  });

  it("gives shapes for tensors, and the fallback formula for unknown ops", () => {
    const c = explainChain({
      ...base,
      op: "softmax",
      upstream: summary([2, 3], null),
      edgeGrad: summary([2, 3], null),
    });
    expect(c).toEqual({
      kind: "tensor",
      upstreamShape: [2, 3],
      edgeShape: [2, 3],
      formula: "∂out/∂input (see the op's backward)",
      direct: false,
      known: false,
      numbers: null,
    });
    const m = explainChain({
      ...base,
      op: "matmul",
      port: "other",
      upstream: summary([2, 4], null),
      edgeGrad: summary([3, 4], null),
    });
    expect(m).toMatchObject({ kind: "tensor", formula: "inputᵀ @ grad", direct: true });
  });
});
