// A node's face: what it computes, written as a line of PyTorch (`b = a * 3`,
// `L = mse_loss(y, t)`), built from the registry's op spec, the node's params and the names of
// the nodes wired into it. A label names the node; the op is always written after the `=`.
// Pure functions: the vitest cases import them directly.
import type { Nested, OpSpec } from "../api/types";
import { formatNumber } from "../format/annotate";

export interface FaceNode {
  id: string;
  op: string;
  params: Record<string, unknown>;
  label?: string | null;
}

/** For each input port of a node, what feeds it: the names of the nodes wired into it. */
export type Inputs = Record<string, string[]>;

/** Values with at most this many elements are written out on a face; bigger ones by shape. */
export const INLINE_ELEMENTS = 6;

const IDENT = /^[A-Za-z_][\w.]*$/;
const ASSIGNED = /^([A-Za-z_][\w.]*)\s*=(?!=)/;

/** The name a person gave a node, as a face writes it before its `=`: a label that is a name
 * ("loss"), or the name in a label written as an assignment ("a = x + y" names a), else a
 * leaf's `name` param, else its id. A label that is an expression ("x ** 2") names nothing. */
export function displayName(n: FaceNode): string {
  const label = (n.label ?? "").trim();
  const assigned = ASSIGNED.exec(label);
  if (assigned) return assigned[1];
  if (IDENT.test(label)) return label;
  const name = typeof n.params.name === "string" ? n.params.name.trim() : "";
  return name || n.id;
}

/** How a node is called in lists and sentences (targets, step texts, toasts): the name a
 * person gave it, or the label as written when it is an expression ("x ** 2"), else its id. */
export function readableName(n: FaceNode): string {
  const label = (n.label ?? "").trim();
  return !label || ASSIGNED.test(label) || IDENT.test(label) ? displayName(n) : label;
}

/** How a node reads where another node uses it: its name, or, for an unnamed scalar, its
 * number (`L = 10 - d`). */
export function operandName(n: FaceNode): string {
  if (n.op === "scalar" && !n.label && !n.params.name) {
    const v = n.params.value ?? 1;
    if (typeof v === "number") return formatNumber(v);
  }
  // a node labelled by an expression ("10 - d") reads as that expression, in parentheses
  const readable = readableName(n);
  return readable !== displayName(n) ? `(${readable})` : readable;
}

/** A value as a PyTorch literal, short: 2, [2, 3], [[1, 0], [0, 1]]. */
export function literal(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(literal).join(", ")}]`;
  if (typeof v === "number" || typeof v === "boolean") return formatNumber(v);
  if (typeof v === "string") return v === "nan" || v.endsWith("inf") ? `float('${v}')` : `'${v}'`;
  return String(v);
}

function numel(v: unknown): number {
  return Array.isArray(v) ? v.reduce((a: number, x) => a + numel(x), 0) : 1;
}

function shapeOfNested(v: unknown): number[] {
  const out: number[] = [];
  let cur = v;
  while (Array.isArray(cur)) {
    out.push(cur.length);
    cur = cur[0];
  }
  return out;
}

/** `k=v` for each param that differs from the registry's default (so a face stays short). */
function kwargs(spec: OpSpec | undefined, params: Record<string, unknown>, skip: string[] = []) {
  const out: string[] = [];
  for (const p of spec?.params ?? []) {
    if (skip.includes(p.name) || !(p.name in params)) continue;
    const v = params[p.name];
    if (JSON.stringify(v) === JSON.stringify(p.default)) continue;
    if (v === null || v === undefined) continue;
    out.push(`${p.name}=${p.type === "dims" && Array.isArray(v) ? `(${v.join(", ")})` : literal(v)}`);
  }
  return out;
}

const call = (fn: string, args: string[]) => `${fn}(${args.join(", ")})`;

/** What a source node holds before any run: its literal value when small, else how it is made
 * (`randn(3, 2)`), else its shape. */
function sourceText(n: FaceNode): string {
  const p = n.params;
  if (n.op === "scalar") return literal(p.value ?? 1);
  if (n.op === "dataset") {
    const kind = typeof p.kind === "string" ? p.kind : "circle";
    return kind === "csv" ? "csv dataset" : `${kind} dataset (n=${p.n ?? 200})`;
  }
  if (p.value !== undefined && p.value !== null) {
    if (numel(p.value) <= INLINE_ELEMENTS) return `tensor(${literal(p.value)})`;
    return `tensor(…${shapeOfNested(p.value).join("×")})`;
  }
  const shape = Array.isArray(p.shape) ? (p.shape as number[]) : [];
  const init = typeof p.init === "string" ? p.init : "zeros";
  return `${init}(${shape.join(", ")})`;
}

/** The right-hand side: what the node computes from its inputs, in PyTorch notation. */
export function expression(n: FaceNode, spec: OpSpec | undefined, inputs: Inputs): string {
  if (spec?.source) return sourceText(n);
  const ports = spec?.inputs ?? [];
  const arg = (port: string) => {
    const feeds = inputs[port] ?? [];
    if (feeds.length) return ports.find((p) => p.name === port)?.variadic ? `[${feeds.join(", ")}]` : feeds[0];
    // an arithmetic op's unconnected `other` is its `scalar` param
    if (port === "other" && typeof n.params.scalar === "number") return formatNumber(n.params.scalar);
    return "?";
  };
  const op = n.op;
  // the registry's call form says how PyTorch code writes the op: `a + b`, `x.sum(dim=1)`
  const operator = spec?.call?.operator;
  if (operator) return `${arg("input")} ${operator} ${arg("other")}`;
  if (op === "neg") return `-${arg("input")}`;
  if (spec?.branches) {
    // control flow: `then if condition else other`, the ports in the registry's order
    const [cond, first, second] = spec.inputs.map((p) => arg(p.name));
    return `${first} if ${cond} else ${second}`;
  }
  if (op === "where") return call("where", [arg("condition"), arg("input"), arg("other")]);
  if (op === "linear") {
    const W = `W${formatParamShape(n)}`;
    return `${arg("input")} @ ${W}.T${n.params.bias === false ? "" : " + b"}`;
  }
  if (op === "transpose" && kwargs(spec, n.params).length === 0) return `${arg("input")}.T`;
  if (op === "reshape") {
    const shape = Array.isArray(n.params.shape) ? (n.params.shape as number[]) : [-1];
    return `${arg("input")}.reshape(${shape.join(", ")})`;
  }
  if (op === "permute") {
    const dims = Array.isArray(n.params.dims) ? (n.params.dims as number[]) : [1, 0];
    return `${arg("input")}.permute(${dims.join(", ")})`;
  }
  if (spec?.call?.usual === "method") return `${arg("input")}.${op}(${kwargs(spec, n.params).join(", ")})`;
  if (op === "leaky_relu" && typeof n.params.negative_slope === "number" && n.params.negative_slope !== 0.01)
    return call(op, [arg("input"), formatNumber(n.params.negative_slope)]);
  const args = ports.map((p) => arg(p.name));
  return call(op, [...args, ...kwargs(spec, n.params, ["scalar", "seed", "weight", "bias_value", "csv"])]);
}

/** A linear node's weight, by its out_features: W[3] reads "3 outputs". */
function formatParamShape(n: FaceNode): string {
  const out = n.params.out_features;
  return typeof out === "number" && out !== 1 ? `[${out}]` : "";
}

/** The whole face line: `name = expression`. */
export function faceText(n: FaceNode, spec: OpSpec | undefined, inputs: Inputs): string {
  return `${displayName(n)} = ${expression(n, spec, inputs)}`;
}

/** A short tag for what kind of leaf a source node is, or null for others. */
export function leafTag(n: FaceNode, spec: OpSpec | undefined): string | null {
  if (!spec?.source) return null;
  if (n.op === "parameter") return "parameter";
  if (n.op === "tensor" && n.params.requires_grad) return "requires_grad";
  return null;
}

/** The value a leaf shows before any run, or null when it has none of its own (a random or
 * zero init is shown by its shape in the face line already). */
export function leafValue(n: FaceNode, spec: OpSpec | undefined): string | null {
  if (!spec?.source) return null;
  if (n.op === "scalar") return literal(n.params.value ?? 1);
  const v = n.params.value as Nested | null | undefined;
  if (v === undefined || v === null) return null;
  return numel(v) <= INLINE_ELEMENTS ? literal(v) : `${shapeOfNested(v).join("×")} tensor`;
}

/** A shape as a port shows it: "scalar", "2×3". */
export function shapeText(shape: number[] | undefined): string | null {
  if (!shape) return null;
  return shape.length === 0 ? "scalar" : shape.join("×");
}

interface GraphLike {
  nodes: { id: string; data: { op: string; params: Record<string, unknown>; label?: string | null } }[];
  edges: { source: string; target: string; targetHandle?: string | null }[];
}

/** Every node's face line, computed for the whole graph at once (O(nodes + edges)). */
export function allFaces(g: GraphLike, ops: Record<string, OpSpec>): Record<string, string> {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const inputs = new Map<string, Inputs>();
  for (const e of g.edges) {
    const src = byId.get(e.source);
    if (!src) continue;
    const port = e.targetHandle ?? "input";
    const into = inputs.get(e.target) ?? {};
    (into[port] ??= []).push(operandName({ id: src.id, ...src.data }));
    inputs.set(e.target, into);
  }
  const out: Record<string, string> = {};
  for (const n of g.nodes) {
    const fn: FaceNode = { id: n.id, ...n.data };
    out[n.id] = faceText(fn, ops[n.data.op], inputs.get(n.id) ?? {});
  }
  return out;
}
