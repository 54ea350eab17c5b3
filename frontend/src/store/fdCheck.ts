// A finite-difference check of a leaf's .grad (issue 34's "gradcheck beside autograd"): one
// element of the leaf (its largest gradient) is moved by ±h in two forward runs the page does
// not show (store/probeRuns.ts), and (f(x+h) - f(x-h)) / 2h of the backward's target is set
// beside autograd's gradient of that element; then the backward shown is run again. The graph runs in float32 as drawn, so the two
// agree to about three digits, not to the float64 tolerance of torch.autograd.gradcheck.
import { create } from "zustand";
import type { GraphDocument, Nested } from "../api/types";
import { getConnection } from "./connection";
import { type EditorState, useEditor } from "./editor";
import { useRoom } from "./room";
import { useRun } from "./run";

export interface FdResult {
  node: string;
  index: number[]; // the element checked
  autograd: number;
  numeric: number;
  step: number; // the step actually taken, x+h - (x-h), after rounding to the leaf's dtype
  diff: number; // |numeric - autograd|
  ok: boolean;
}

const flat = (v: Nested): number[] => (Array.isArray(v) ? (v as Nested[]).flatMap(flat) : [Number(v)]);

/** Flat row-major values as nested lists of `shape` (a number for shape []). */
export function nest(values: number[], shape: number[]): Nested {
  if (!shape.length) return values[0];
  const [n, ...rest] = shape;
  const size = rest.reduce((p, k) => p * k, 1);
  return Array.from({ length: n }, (_, i) => nest(values.slice(i * size, (i + 1) * size), rest));
}

/** The flat index of the element with the largest |gradient| (the most telling to check). */
export function largest(grad: number[]): number {
  let best = 0;
  for (let i = 1; i < grad.length; i++) if (Math.abs(grad[i]) > Math.abs(grad[best])) best = i;
  return best;
}

/** `flatIndex` as an index of `shape`. */
export function unravel(flatIndex: number, shape: number[]): number[] {
  const out: number[] = [];
  let rest = flatIndex;
  for (let d = shape.length - 1; d >= 0; d--) {
    out.unshift(rest % shape[d]);
    rest = Math.floor(rest / shape[d]);
  }
  return out;
}

/** The step for an element of value `x`: relative to its size, as gradcheck scales eps, and
 * large enough for float32's 7 digits to leave three in the difference. */
export function stepFor(x: number, dtype: string): number {
  return (dtype === "float64" ? 1e-6 : 1e-2) * Math.max(1, Math.abs(x));
}

/** The central difference and its agreement with `autograd`: within 1% of the larger of the
 * two (or 1e-3 absolute, for a gradient near zero). */
export function verdict(autograd: number, fPlus: number, fMinus: number, step: number) {
  const numeric = (fPlus - fMinus) / step;
  const diff = Math.abs(numeric - autograd);
  return { numeric, diff, ok: diff <= Math.max(1e-3, 1e-2 * Math.max(Math.abs(numeric), Math.abs(autograd))) };
}

/** `doc` with leaf `node`'s values set to `values` (shape `shape`). */
export function withValues(doc: GraphDocument, node: string, values: number[], shape: number[]): GraphDocument {
  return {
    ...doc,
    nodes: doc.nodes.map((n) => (n.id === node ? { ...n, params: { ...n.params, value: nest(values, shape) } } : n)),
  };
}

/** Why leaf `node` cannot be checked now, or null: a backward that finished, from a target,
 * without the teaching options that make .grad other than one backward's gradient. */
export function cannotCheck(node: string): string | null {
  const run = useRun.getState();
  const ed = useEditor.getState();
  const spec = ed.ops[ed.nodes.find((n) => n.id === node)?.data.op ?? ""];
  if (!spec?.source || spec.name === "scalar") return "only a tensor or parameter leaf can be checked";
  if (ed.meta.open?.length) return "close the module first: the check runs the whole graph";
  // a room shows its owner's runs to the class: the probes' moved values would be shown too
  if (useRoom.getState().role) return "not in a room: the class would see the check's runs";
  if (run.mode !== "backward" || run.finished?.status !== "ok" || !run.target) return "run Backward first";
  if (!run.annotations.leafGrads[node]) return "this leaf has no .grad in the last backward";
  const o = run.options;
  if (o.accumulate_grad || o.backward_twice || o.gradient_ones || o.no_grad)
    return "turn the teaching options off: with them .grad is not one backward's gradient";
  return null;
}

/** Check leaf `node`'s .grad of the last backward at its largest element. */
export async function checkLeafGrad(node: string): Promise<FdResult> {
  const why = cannotCheck(node);
  if (why) throw new Error(why);
  const { runId, target } = useRun.getState();
  const conn = getConnection();
  // the tensors of the run shown, fetched before the probes start newer runs
  const [grad, value] = await Promise.all([
    conn.tensor(runId!, { node }, "grad"),
    conn.tensor(runId!, { node }, "value"),
  ]);
  const g = flat(grad.values);
  const x = flat(value.values);
  const numel = value.shape.reduce((p, k) => p * k, 1);
  if (x.length !== numel || g.length !== numel) throw new Error("too big to check here: it does not come in one page");
  if (value.dtype !== "float32" && value.dtype !== "float64") throw new Error(`a ${value.dtype} leaf cannot be checked`);
  const i = largest(g);
  const round = value.dtype === "float64" ? (v: number) => v : Math.fround;
  const h = stepFor(x[i], value.dtype);
  const plus = x.slice();
  const minus = x.slice();
  plus[i] = round(x[i] + h);
  minus[i] = round(x[i] - h);
  const doc = useEditor.getState().document();
  const f = async (values: number[]) => {
    const probe = await useRun.getState().probeForward(withValues(doc, node, values, value.shape));
    const out = flat((await conn.tensor(probe, { node: target! }, "value")).values);
    if (out.length !== 1) throw new Error(`the target has ${out.length} elements: backward starts from a scalar`);
    return out[0];
  };
  const fPlus = await f(plus);
  const fMinus = await f(minus);
  // the backward shown is run again (the same graph, the same numbers): the server keeps a
  // client's last few runs, and the probes must not push out the one whose tensors the page
  // opens
  await useRun.getState().start("backward", target);
  const step = plus[i] - minus[i];
  return { node, index: unravel(i, value.shape), autograd: g[i], step, ...verdict(g[i], fPlus, fMinus, step) };
}

/** The check the inspector shows: of one leaf, while the graph stays as it was checked. It
 * lives here, not in the inspector: the backward run again at the end empties the inspector's
 * run results for a moment. */
export const useFdCheck = create<{ node: string | null; busy: boolean; result: FdResult | null; error: string | null }>()(
  () => ({ node: null, busy: false, result: null, error: null }),
);

/** Run the check of `node` and keep its result (or why it failed) for the inspector. */
export async function runFdCheck(node: string) {
  useFdCheck.setState({ node, busy: true, result: null, error: null });
  try {
    const result = await checkLeafGrad(node);
    if (useFdCheck.getState().node === node) useFdCheck.setState({ busy: false, result });
  } catch (e) {
    if (useFdCheck.getState().node === node) useFdCheck.setState({ busy: false, error: (e as Error).message });
  }
}

/** The editor changed from `prev` to `s` (store/reactions.ts tells): an edit of the graph (a
 * param, a wire; not a move) makes a finished check's result a different graph's. */
export function forgetIfEdited(s: Pick<EditorState, "nodes" | "edges">, prev: Pick<EditorState, "nodes" | "edges">) {
  if (!useFdCheck.getState().node || useFdCheck.getState().busy) return;
  const changed =
    s.edges.length !== prev.edges.length ||
    s.edges.some((e, i) => e.source !== prev.edges[i].source || e.target !== prev.edges[i].target) ||
    s.nodes.length !== prev.nodes.length ||
    s.nodes.some((n, i) => n.data !== prev.nodes[i].data);
  if (changed) useFdCheck.setState({ node: null, result: null, error: null });
}
