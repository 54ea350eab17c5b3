// The chain rule on one edge, as pure functions the Explain panel renders: the symbolic local
// derivative of common ops, and the scalar arithmetic upstream × local = edge gradient.
// No React here, so the unit tests import it directly.
import type { Nested, Summary } from "../api/types";
import { formatNested, formatNumber, scalarOf } from "../format/annotate";

/** The local derivative ∂out/∂port of an op, written symbolically. `direct`: the formula
 * already is the edge's gradient in terms of the upstream `grad` (matrix products), rather
 * than a factor multiplied elementwise by the upstream gradient. */
export interface LocalDerivative {
  formula: string;
  direct?: boolean;
}

/** What a formula may depend on besides the port: the node's params, and the number used as
 * `other` while that port is unconnected (the arithmetic ops' `scalar` param). */
interface FormulaContext {
  params: Record<string, unknown>;
  scalar: number | null;
}

type Formula = string | LocalDerivative | ((c: FormulaContext) => string | LocalDerivative);

const fmt = (v: number) => formatNumber(v).replace(/^-/, "−");
const numberParam = (v: unknown, otherwise: number) => (typeof v === "number" ? v : otherwise);

/** scalar·input^(scalar−1) with the numbers filled in: 2·input for a square. */
function powerRule(s: number): string {
  const e = s - 1;
  if (e === 0) return fmt(s);
  if (e === 1) return `${fmt(s)}·input`;
  return `${fmt(s)}·input^${e < 0 || !Number.isInteger(e) ? `(${fmt(e)})` : fmt(e)}`;
}

const SAME_LAYOUT = "1 (the upstream gradient, reshaped back to input's shape)";

function reductionOf(p: Record<string, unknown>): string {
  return typeof p.reduction === "string" ? p.reduction : "mean";
}

/** op name -> port -> local derivative. Ports are the op's input names (docs/graph-format.md). */
const TABLE: Record<string, Record<string, Formula>> = {
  add: { input: "1", other: "1" },
  sub: { input: "1", other: "−1" },
  mul: {
    input: ({ scalar }) => (scalar !== null ? `${fmt(scalar)} (the scalar)` : "other"),
    other: "input",
  },
  div: {
    input: ({ scalar }) => (scalar !== null ? `1/${fmt(scalar)}` : "1/other"),
    other: "−input/other²",
  },
  pow: {
    input: ({ scalar }) => (scalar !== null ? powerRule(scalar) : "other·input^(other−1)"),
    other: "input^other · ln(input)",
  },
  neg: { input: "−1" },
  exp: { input: "exp(input)" },
  log: { input: "1/input" },
  sqrt: { input: "1/(2·√input)" },
  abs: { input: "sign(input)" },
  reciprocal: { input: "−1/input²" },
  sin: { input: "cos(input)" },
  cos: { input: "−sin(input)" },
  tanh: { input: "1 − tanh²(input)" },
  sigmoid: { input: "σ(input)·(1 − σ(input))" },
  relu: { input: "1 where input > 0, else 0" },
  leaky_relu: {
    input: ({ params }) =>
      `1 where input > 0, else ${fmt(typeof params.negative_slope === "number" ? params.negative_slope : 0.01)}`,
  },
  softplus: { input: "σ(beta·input) (1 past the threshold, where it is the input itself)" },
  silu: { input: "σ(input)·(1 + input·(1 − σ(input)))" },
  gelu: { input: "Φ(input) + input·φ(input) (Φ, φ: the normal CDF and density)" },
  elu: { input: ({ params }) => `1 where input > 0, else ${fmt(numberParam(params.alpha, 1))}·exp(input)` },
  celu: { input: ({ params }) => `1 where input > 0, else exp(input/${fmt(numberParam(params.alpha, 1))})` },
  selu: { input: "1.0507 where input > 0, else 1.0507·1.6733·exp(input)" },
  relu6: { input: "1 where 0 < input < 6, else 0" },
  hardtanh: {
    input: ({ params }) =>
      `1 where ${fmt(numberParam(params.min_val, -1))} < input < ${fmt(numberParam(params.max_val, 1))}, else 0`,
  },
  hardsigmoid: { input: "1/6 where −3 < input < 3, else 0" },
  hardswish: { input: "input/3 + ½ where −3 ≤ input ≤ 3, 1 above, 0 below" },
  logsigmoid: { input: "1 − σ(input)" },
  softsign: { input: "1/(1 + |input|)²" },
  tanhshrink: { input: "tanh²(input)" },
  clamp: { input: "1 where min ≤ input ≤ max, else 0" },
  maximum: { input: "1 where input > other, else 0 (½ on ties)", other: "1 where other > input, else 0 (½ on ties)" },
  minimum: { input: "1 where input < other, else 0 (½ on ties)", other: "1 where other < input, else 0 (½ on ties)" },
  where: { input: "1 where condition, else 0", other: "0 where condition, else 1" },
  if: {
    then: "1 (the branch taken passes the gradient through)",
    else: "1 (the branch taken passes the gradient through)",
  },
  sum: { input: "1 (ones: the upstream gradient is broadcast back to input's shape)" },
  mean: { input: "1/n (n: the number of elements averaged)" },
  matmul: {
    input: { formula: "grad @ otherᵀ", direct: true },
    other: { formula: "inputᵀ @ grad", direct: true },
  },
  linear: { input: { formula: "grad @ weight (out = input @ weightᵀ + bias)", direct: true } },
  mse_loss: {
    input: ({ params }) =>
      reductionOf(params) === "mean" ? "2·(input − target)/n" : "2·(input − target)",
    target: ({ params }) =>
      reductionOf(params) === "mean" ? "−2·(input − target)/n" : "−2·(input − target)",
  },
  l1_loss: {
    input: ({ params }) =>
      reductionOf(params) === "mean" ? "sign(input − target)/n" : "sign(input − target)",
  },
  transpose: { input: "1 (the upstream gradient, transposed back)" },
  permute: { input: "1 (the upstream gradient, permuted back)" },
  reshape: { input: SAME_LAYOUT },
  flatten: { input: SAME_LAYOUT },
  squeeze: { input: SAME_LAYOUT },
  unsqueeze: { input: SAME_LAYOUT },
  detach: { input: "0 (detach cuts the graph: no gradient flows back)" },
};

/** The fallback for ops and ports the table does not know. */
export function unknownFormula(port: string): string {
  return `∂out/∂${port} (see the op's backward)`;
}

/** The symbolic local derivative of `op` with respect to its input `port`, or null when the
 * table does not have it. `otherConnected`: whether the op's `other` port has an edge (if not,
 * the arithmetic ops use their `scalar` param as other). */
export function localDerivative(
  op: string,
  port: string,
  params: Record<string, unknown> = {},
  otherConnected = true,
): LocalDerivative | null {
  const f = TABLE[op]?.[port];
  if (f === undefined) return null;
  const scalar = !otherConnected && typeof params.scalar === "number" ? params.scalar : null;
  const v = typeof f === "function" ? f({ params, scalar }) : f;
  return typeof v === "string" ? { formula: v } : v;
}

/** The ops the table covers (for docs and tests). */
export const KNOWN_OPS = Object.keys(TABLE);

/** upstream × local = edge gradient for numbers. The local derivative is recovered as
 * edge gradient ÷ upstream; when upstream is 0 it cannot be (null), and the product is 0. */
export function scalarChain(
  upstream: number,
  edgeGrad: number,
): { local: number | null; text: string } {
  const local = upstream !== 0 && Number.isFinite(upstream) ? edgeGrad / upstream : null;
  return {
    local,
    text: `${formatNumber(upstream)} × ${local === null ? "?" : formatNumber(local)} = ${formatNumber(edgeGrad)}`,
  };
}

/** Everything the panel needs to know about one edge. */
export interface ChainInput {
  port: string; // the consumer's input port the edge enters
  op: string | null; // the consumer's op
  params: Record<string, unknown>;
  otherConnected: boolean;
  upstream?: Summary; // the consumer's total gradient (nodeGrads[consumer])
  edgeGrad?: Summary; // what the consumer sent back along the edge (edgeGrads[edge])
  notTaken?: string; // the `if` port whose branch did not run, if this edge is on it
  backwardDone: boolean; // a backward run has produced gradients
}

export type Chain =
  | { kind: "not-taken"; port: string }
  | { kind: "needs-backward" }
  | { kind: "no-gradient" }
  | {
      kind: "scalar";
      upstream: number | null;
      local: number | null;
      edgeGrad: number;
      product: string | null; // "10 × 1 = 10"; null without an upstream number
      formula: string;
      direct: boolean;
      known: boolean; // the formula came from the table
    }
  | {
      kind: "tensor";
      upstreamShape: number[] | null;
      edgeShape: number[];
      formula: string;
      direct: boolean;
      known: boolean;
      numbers: TensorNumbers | null; // null: the run sent no values (tensors past 1,024 elements)
    };

/** The chain rule on a tensor edge, in numbers: upstream ⊙ local = edge. Written in full up
 * to FULL_ELEMENTS elements, as a compact matrix (corners, with …) beyond. */
export interface TensorNumbers {
  upstream: string | null;
  local: string | null; // null: not recoverable (a reduction over broadcast dims, a matrix product)
  edge: string;
  full: boolean; // every number is written
}

export const FULL_ELEMENTS = 16;
const ROWS = 3; // the compact form: rows and columns kept at each end
const COLS = 2;

function flat(v: Nested): (number | string | boolean)[] {
  return Array.isArray(v) ? v.flatMap(flat) : [v];
}

/** Nested values in a few lines' room: first and last rows and columns, … between. */
export function compactNested(v: Nested, rows = ROWS, cols = COLS): string {
  if (!Array.isArray(v)) return formatNumber(v);
  const keep = (xs: Nested[], n: number) =>
    xs.length <= 2 * n ? xs : [...xs.slice(0, n), "…" as unknown as Nested, ...xs.slice(-n)];
  const inner = (x: Nested): string =>
    (x as unknown) === "…" ? "…" : Array.isArray(x) ? `[${keep(x, cols).map(inner).join(", ")}]` : formatNumber(x);
  const outer = keep(v, rows);
  return Array.isArray(v[0]) ? `[${outer.map(inner).join(",\n ")}]` : inner(v);
}

function writeOut(v: Nested, numel: number): string {
  return numel <= FULL_ELEMENTS ? formatNested(v) : compactNested(v);
}

/** Put flat numbers back into `shape` (nested lists). */
function nest(values: (number | null)[], shape: number[]): Nested {
  if (shape.length === 0) return (values[0] ?? Number.NaN) as number;
  const size = shape.slice(1).reduce((a, b) => a * b, 1);
  return Array.from({ length: shape[0] }, (_, i) => nest(values.slice(i * size, (i + 1) * size), shape.slice(1)));
}

/** upstream ⊙ local = edge with the numbers the run sent. The local derivative is recovered
 * elementwise as edge ÷ upstream where the shapes line up (or upstream is one number); when
 * every element has the same local derivative it is written once (`[0.5, 0.5] ⊙ 3`). */
export function tensorNumbers(upstream: Summary | undefined, edge: Summary, direct: boolean): TensorNumbers | null {
  if (edge.preview === undefined || edge.preview === null) return null;
  const e = flat(edge.preview).map(Number);
  const up = upstream?.preview != null ? flat(upstream.preview).map(Number) : null;
  const full = edge.numel <= FULL_ELEMENTS && (!upstream || upstream.numel <= FULL_ELEMENTS);
  const numbers: TensorNumbers = {
    upstream: up && upstream ? writeOut(upstream.preview as Nested, upstream.numel) : null,
    local: null,
    edge: writeOut(edge.preview, edge.numel),
    full,
  };
  if (direct || !up || !(up.length === e.length || up.length === 1)) return numbers;
  const local = e.map((g, i) => {
    const u = up.length === 1 ? up[0] : up[i];
    return u !== 0 && Number.isFinite(u) ? g / u : null;
  });
  if (local.every((l) => l === null)) return numbers;
  // where upstream is 0 the local derivative cannot be read off, and does not matter
  const known = local.filter((l): l is number => l !== null);
  const first = known[0];
  const same = known.every((l) => Math.abs(l - first) <= 1e-6 * Math.max(1, Math.abs(first)));
  numbers.local = same
    ? formatNumber(first)
    : writeOut(nest(local, edge.shape), edge.numel).replace(/\bnan\b/g, "?");
  return numbers;
}

/** What the chain rule says about an edge, from what the run recorded. */
export function explainChain(c: ChainInput): Chain {
  if (c.notTaken) return { kind: "not-taken", port: c.notTaken };
  if (!c.edgeGrad) return c.backwardDone ? { kind: "no-gradient" } : { kind: "needs-backward" };
  const d = c.op ? localDerivative(c.op, c.port, c.params, c.otherConnected) : null;
  const formula = d?.formula ?? unknownFormula(c.port);
  const direct = d?.direct ?? false;
  const known = d !== null;
  const g = scalarOf(c.edgeGrad);
  const up = c.upstream ? scalarOf(c.upstream) : null;
  if (g !== null && (!c.upstream || up !== null)) {
    if (up === null)
      return { kind: "scalar", upstream: null, local: null, edgeGrad: g, product: null, formula, direct, known };
    const { local, text } = scalarChain(up, g);
    return { kind: "scalar", upstream: up, local, edgeGrad: g, product: text, formula, direct, known };
  }
  return {
    kind: "tensor",
    upstreamShape: c.upstream ? c.upstream.shape : null,
    edgeShape: c.edgeGrad.shape,
    formula,
    direct,
    known,
    numbers: tensorNumbers(c.upstream, c.edgeGrad, direct),
  };
}
