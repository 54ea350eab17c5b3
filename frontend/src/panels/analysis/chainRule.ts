// The chain rule on one edge, as pure functions the Explain panel renders: the local
// derivative of the consumer's op for the edge's port, as the op registry writes it (each
// input port's `derivative` in GET /api/ops: backend/graph/registry.py), with the node's params
// filled in; and the scalar arithmetic upstream × local = edge gradient.
// No React here, so the unit tests import it directly.
import type { DerivativeKind, Nested, OpSpec, Summary } from "../../api/types";
import { formatNested, formatNumber, scalarOf } from "../../format/annotate";

/** The local derivative ∂out/∂port of an op, its params filled in. `kind`: "elementwise", a
 * factor the upstream gradient is multiplied by elementwise; "grad", the edge's gradient
 * itself in terms of the upstream `grad` (matrix products); "jacobian", words for a Jacobian
 * that is no elementwise factor (softmax, a layer, a reshuffle of elements). */
export interface LocalDerivative {
  formula: string;
  kind: DerivativeKind;
}

const fmt = (v: number) => formatNumber(v).replace(/^-/, "−");

/** A param's value as a derivative text writes it: numbers with a real minus sign, lists in
 * brackets; null where the node and the op give none. */
function written(v: unknown): string | null {
  if (typeof v === "number") return fmt(v);
  if (typeof v === "boolean" || typeof v === "string") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => written(x) ?? "?").join(", ")}]`;
  return null;
}

const VALUE = /^(\w+)(?:-(\d+))?$/;
const CHOICE = /^(\w+)\|(.*)$/;

/** Fill in a registry derivative text's placeholders (registry.py, PLACEHOLDER): `{p}` is
 * param p's value, `{p-1}` that value minus 1, `x^{p-1}` an exponent (x^2, x^(−0.5), x for 1;
 * a factor `·x^{…}` drops for 0), `{p|mean:/n|sum:}` the text for p's value. A param with no
 * value (neither the node's nor the op's default) keeps its name. */
export function fillDerivative(text: string, params: Record<string, unknown>, spec?: OpSpec): string {
  const raw = (name: string): unknown => {
    const v = params[name];
    return v === undefined || v === null ? spec?.params.find((p) => p.name === name)?.default : v;
  };
  const value = (inner: string): unknown => {
    const m = VALUE.exec(inner);
    if (!m) return undefined;
    const v = raw(m[1]);
    return m[2] !== undefined && typeof v === "number" ? v - Number(m[2]) : v;
  };
  const powered = text.replace(/(·?)([^\s·(){}^]+)\^\{([^{}]*)\}/g, (_all, dot: string, base: string, inner: string) => {
    const e = value(inner);
    if (typeof e !== "number") return `${dot}${base}^(${inner})`;
    if (e === 0) return dot ? "" : "1";
    if (e === 1) return `${dot}${base}`;
    const bare = e > 0 && Number.isInteger(e);
    return `${dot}${base}^${bare ? fmt(e) : `(${fmt(e)})`}`;
  });
  return powered.replace(/\{([^{}]*)\}/g, (all, inner: string) => {
    const choice = CHOICE.exec(inner);
    if (choice) {
      const v = raw(choice[1]);
      const key = typeof v === "string" ? v : JSON.stringify(v);
      for (const c of choice[2].split("|")) {
        const at = c.indexOf(":");
        if (c.slice(0, at) === key) return c.slice(at + 1);
      }
      return "";
    }
    const m = VALUE.exec(inner);
    return (m ? written(value(inner)) : null) ?? (m ? m[1] : all);
  });
}

/** The fallback for a port the op's spec gives no derivative for. */
export function unknownFormula(port: string): string {
  return `∂out/∂${port} (see the op's backward)`;
}

/** The local derivative of `spec`'s op with respect to its input `port`, or null when the op
 * (or the port) has none. `scalarPortConnected`: whether the op's `scalar_for` port has an
 * edge (if not, its `scalar` param stands in for it, and the port's scalar text is used). */
export function localDerivative(
  spec: OpSpec | undefined,
  port: string,
  params: Record<string, unknown> = {},
  scalarPortConnected = true,
): LocalDerivative | null {
  const d = spec?.inputs.find((p) => p.name === port)?.derivative;
  if (!d) return null;
  const byScalar = spec?.scalar_for && !scalarPortConnected && typeof params.scalar === "number";
  const text = byScalar && d.scalar ? d.scalar : d.text;
  return { formula: fillDerivative(text, params, spec), kind: d.kind };
}

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
  spec?: OpSpec; // the consumer's op, as GET /api/ops describes it
  params: Record<string, unknown>;
  scalarPortConnected: boolean; // the consumer's `scalar_for` port has an edge
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
      form: DerivativeKind;
      known: boolean; // the formula came from the op's spec
    }
  | {
      kind: "tensor";
      upstreamShape: number[] | null;
      edgeShape: number[];
      formula: string;
      form: DerivativeKind;
      known: boolean;
      numbers: TensorNumbers | null; // null: the run sent no values (tensors past 1,024 elements)
    };

/** The chain rule on a tensor edge, in numbers: upstream ⊙ local = edge. Written in full up
 * to FULL_ELEMENTS elements, as a compact matrix (corners, with …) beyond. */
export interface TensorNumbers {
  upstream: string | null;
  local: string | null; // null: not recoverable (a reduction over broadcast dims, not elementwise)
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
 * every element has the same local derivative it is written once (`[0.5, 0.5] ⊙ 3`).
 * `notElementwise`: the derivative is no elementwise factor (a matrix product, a Jacobian), so
 * that ratio would not be it: no local numbers. */
export function tensorNumbers(
  upstream: Summary | undefined,
  edge: Summary,
  notElementwise: boolean,
): TensorNumbers | null {
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
  if (notElementwise || !up || !(up.length === e.length || up.length === 1)) return numbers;
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
  const d = localDerivative(c.spec, c.port, c.params, c.scalarPortConnected);
  const formula = d?.formula ?? unknownFormula(c.port);
  const form = d?.kind ?? "elementwise";
  const known = d !== null;
  const g = scalarOf(c.edgeGrad);
  const up = c.upstream ? scalarOf(c.upstream) : null;
  if (g !== null && (!c.upstream || up !== null)) {
    if (up === null)
      return { kind: "scalar", upstream: null, local: null, edgeGrad: g, product: null, formula, form, known };
    const { local, text } = scalarChain(up, g);
    return { kind: "scalar", upstream: up, local, edgeGrad: g, product: text, formula, form, known };
  }
  return {
    kind: "tensor",
    upstreamShape: c.upstream ? c.upstream.shape : null,
    edgeShape: c.edgeGrad.shape,
    formula,
    form,
    known,
    numbers: tensorNumbers(c.upstream, c.edgeGrad, form !== "elementwise"),
  };
}
