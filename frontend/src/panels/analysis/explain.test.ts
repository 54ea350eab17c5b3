import { describe, expect, it } from "vitest";
import { OPS } from "../../testing/opSpecs";
import { summary } from "../../testing/summaries";
import { explainChain, fillDerivative, localDerivative, scalarChain, unknownFormula } from "./chainRule";

const base = {
  port: "input",
  spec: OPS.add,
  params: {},
  scalarPortConnected: true,
  backwardDone: true,
};

/** The local derivative of op `name` (as the registry describes it) for `port`. */
const local = (name: string, port: string, params: Record<string, unknown> = {}, scalarPortConnected = true) =>
  localDerivative(OPS[name], port, params, scalarPortConnected);
const formula = (name: string, port = "input", params: Record<string, unknown> = {}) =>
  local(name, port, params)?.formula;

describe("localDerivative, from the op's spec", () => {
  it("knows the arithmetic ops per port", () => {
    expect(formula("add")).toBe("1");
    expect(formula("add", "other")).toBe("1");
    expect(formula("sub", "other")).toBe("−1");
    expect(formula("mul")).toBe("other");
    expect(formula("mul", "other")).toBe("input");
    expect(formula("div")).toBe("1/other");
    expect(formula("div", "other")).toBe("−input/other²");
  });

  it("fills in the scalar param when the port it stands in for is unconnected", () => {
    expect(local("pow", "input", { scalar: 2 }, false)?.formula).toBe("2·input");
    expect(local("pow", "input", { scalar: 3 }, false)?.formula).toBe("3·input^2");
    expect(local("pow", "input", { scalar: 0.5 }, false)?.formula).toBe("0.5·input^(−0.5)");
    expect(local("pow", "input", { scalar: 1 }, false)?.formula).toBe("1");
    expect(local("pow", "input", { scalar: 2 }, true)?.formula).toBe("other·input^(other−1)");
    expect(local("mul", "input", { scalar: 3 }, false)?.formula).toBe("3 (the scalar)");
    expect(local("div", "input", { scalar: 4 }, false)?.formula).toBe("1/4");
    expect(local("mul_", "input", { scalar: -2 }, false)?.formula).toBe("−2 (the scalar)");
    // no scalar set: the connected form
    expect(local("mul", "input", { scalar: null }, false)?.formula).toBe("other");
  });

  it("knows elementwise functions and reductions", () => {
    expect(formula("exp")).toBe("exp(input)");
    expect(formula("log")).toBe("1/input");
    expect(formula("tanh")).toBe("1 − tanh²(input)");
    expect(formula("sigmoid")).toBe("σ(input)·(1 − σ(input))");
    expect(formula("relu")).toMatch(/input > 0/);
    expect(formula("neg")).toBe("−1");
    expect(formula("mean")).toMatch(/^1\/n/);
    expect(formula("sum")).toMatch(/^1 /);
    expect(formula("var", "input", { correction: 0 })).toBe("2·(input − mean)/(n − 0)");
  });

  it("fills in the activations' params, or the op's defaults", () => {
    expect(formula("hardtanh", "input", { min_val: -0.5, max_val: 2 })).toBe("1 where −0.5 < input < 2, else 0");
    expect(formula("hardtanh")).toBe("1 where −1 < input < 1, else 0");
    expect(formula("elu", "input", { alpha: 0.5 })).toBe("1 where input > 0, else 0.5·exp(input)");
    expect(formula("leaky_relu")).toBe("1 where input > 0, else 0.01");
    expect(formula("silu")).toBe("σ(input)·(1 + input·(1 − σ(input)))");
    expect(formula("softsign")).toBe("1/(1 + |input|)²");
    expect(formula("gelu")).toBe("Φ(input) + input·φ(input) (Φ, φ: the normal CDF and density)");
    expect(formula("gelu", "input", { approximate: "tanh" })).toMatch(/density, in their tanh approximation\)$/);
  });

  it("has the ops the page's old hand table lacked", () => {
    expect(formula("mish")).toBe("tanh(softplus(input)) + input·σ(input)·(1 − tanh²(softplus(input)))");
    expect(local("softmax", "input", { dim: 1 })).toEqual({
      formula: expect.stringMatching(/^diag\(s\) − s·sᵀ \(s = softmax\(input\) along dim 1; a Jacobian/),
      kind: "jacobian",
    });
    expect(formula("log_softmax")).toMatch(/^I − 1·sᵀ \(s = softmax\(input\) along dim −1,/);
    expect(formula("cross_entropy")).toBe(
      "softmax(input) − onehot(target), ÷N (N: the rows averaged) (softmax over the class dim)",
    );
    expect(formula("cross_entropy", "input", { reduction: "sum" })).toBe(
      "softmax(input) − onehot(target) (softmax over the class dim)",
    );
    expect(formula("max")).toMatch(/^1 where input is the largest/);
    expect(local("cat", "tensors", { dim: 1 })).toEqual({
      formula: "1 for the slice along dim 1 that came from this input, 0 elsewhere (the edge gets that slice of grad)",
      kind: "jacobian",
    });
  });

  it("says which derivatives are the edge gradient itself (matrix products)", () => {
    expect(local("matmul", "input")).toEqual({ formula: "grad @ otherᵀ", kind: "grad" });
    expect(local("matmul", "other")).toEqual({ formula: "inputᵀ @ grad", kind: "grad" });
    expect(local("linear", "input")?.kind).toBe("grad");
    expect(formula("transpose", "input", { dim0: 0, dim1: 2 })).toMatch(/^grad\.transpose\(0, 2\)/);
    expect(formula("permute", "input", { dims: [2, 0, 1] })).toMatch(/inverse of \[2, 0, 1\]/);
  });

  it("follows a loss's reduction and kl_div's log_target", () => {
    expect(formula("mse_loss")).toBe("2·(input − target)/n");
    expect(formula("mse_loss", "input", { reduction: "sum" })).toBe("2·(input − target)");
    expect(formula("mse_loss", "target")).toBe("−2·(input − target)/n");
    expect(formula("kl_div")).toBe("−target/n");
    expect(formula("kl_div", "input", { log_target: true, reduction: "batchmean" })).toBe(
      "−exp(target)/N (N: input's first dim)",
    );
    expect(formula("huber_loss", "input", { delta: 2, reduction: "none" })).toBe(
      "(input − target where |input − target| < 2, else 2·sign(input − target))",
    );
  });

  it("gives every differentiable input of every op a text with its params filled in", () => {
    let ports = 0;
    for (const spec of Object.values(OPS))
      for (const p of spec.inputs) {
        if (p.no_grad) {
          expect(localDerivative(spec, p.name)).toBeNull();
          continue;
        }
        const d = localDerivative(spec, p.name, { scalar: 2 }, false);
        expect(d?.formula, `${spec.name}.${p.name}`).toMatch(/\S/);
        expect(d?.formula, `${spec.name}.${p.name}`).not.toMatch(/[{}]/);
        ports += 1;
      }
    expect(ports).toBeGreaterThan(100);
  });

  it("returns null for unknown ops and ports", () => {
    expect(localDerivative(undefined, "input")).toBeNull();
    expect(formula("add", "condition")).toBeUndefined();
    expect(formula("detach")).toBeUndefined();
    expect(unknownFormula("input")).toBe("∂out/∂input (see the op's backward)");
  });
});

describe("fillDerivative", () => {
  it("writes a param with no value by its name, lists in brackets, and an exponent's parts", () => {
    expect(fillDerivative("1 where {min} ≤ input", {})).toBe("1 where min ≤ input");
    expect(fillDerivative("by {dims}", { dims: [1, 0] })).toBe("by [1, 0]");
    expect(fillDerivative("{s}·x^{s-1}", { s: 3.5 })).toBe("3.5·x^(2.5)");
    expect(fillDerivative("{s}·x^{s-1}", {})).toBe("s·x^(s-1)");
    expect(fillDerivative("a{r|mean:/n|sum:}b", { r: "none" })).toBe("ab");
    expect(fillDerivative("{t|true:yes|false:no}", { t: false })).toBe("no");
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
    expect(explainChain({ ...base, spec: OPS.if, port: "else", notTaken: "else" })).toEqual({
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
    expect(xa).toMatchObject({
      kind: "scalar",
      upstream: 10,
      local: 1,
      edgeGrad: 10,
      product: "10 × 1 = 10",
      formula: "1",
      form: "elementwise",
      known: true,
    });
    // a -> z: z is the target (gradient 1), edge a-z carries 2a = 10
    const az = explainChain({
      ...base,
      spec: OPS.pow,
      params: { scalar: 2 },
      scalarPortConnected: false,
      upstream: summary([], 1),
      edgeGrad: summary([], 10),
    });
    expect(az).toMatchObject({ kind: "scalar", local: 10, product: "1 × 10 = 10", formula: "2·input" });
  });

  it("treats one-element tensors as scalars", () => {
    const c = explainChain({ ...base, upstream: summary([1], [4]), edgeGrad: summary([1, 1], [[2]]) });
    expect(c).toMatchObject({ kind: "scalar", upstream: 4, local: 0.5 });
  });

  it("gives shapes for tensors, and the fallback formula for an op without a spec", () => {
    const c = explainChain({
      ...base,
      spec: undefined,
      upstream: summary([2, 3], null),
      edgeGrad: summary([2, 3], null),
    });
    expect(c).toEqual({
      kind: "tensor",
      upstreamShape: [2, 3],
      edgeShape: [2, 3],
      formula: "∂out/∂input (see the op's backward)",
      form: "elementwise",
      known: false,
      numbers: null,
    });
    const m = explainChain({
      ...base,
      spec: OPS.matmul,
      port: "other",
      upstream: summary([2, 4], null),
      edgeGrad: summary([3, 4], null),
    });
    expect(m).toMatchObject({ kind: "tensor", formula: "inputᵀ @ grad", form: "grad", known: true });
  });

  it("shows no per-element local numbers for a Jacobian (softmax's edge ÷ upstream is not it)", () => {
    const up = summary([1, 3], [[1, 0, 0]]);
    const edge = summary([1, 3], [[0.2, -0.1, -0.1]]);
    const soft = explainChain({ ...base, spec: OPS.softmax, upstream: up, edgeGrad: edge });
    expect(soft).toMatchObject({ kind: "tensor", form: "jacobian", known: true });
    expect(soft.kind === "tensor" && soft.numbers).toMatchObject({ local: null, edge: "[[0.2, -0.1, -0.1]]" });
    // through an elementwise op the ratio is its local derivative, written per element
    const relu = explainChain({
      ...base,
      spec: OPS.relu,
      upstream: summary([1, 3], [[2, 4, 1]]),
      edgeGrad: summary([1, 3], [[2, 0, 1]]),
    });
    expect(relu.kind === "tensor" && relu.numbers?.local).toBe("[[1, 0, 1]]");
  });
});
