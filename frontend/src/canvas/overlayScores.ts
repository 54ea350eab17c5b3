// Overlays: one number per node or edge for a chosen statistic, read from what a run's trace
// records and the training snapshots already carry (store/annotations.ts, TrainSnapshot), and
// the colour that number is drawn in. Pure, so that the scores are checked without a page.
import type { Nested, Summary, TrainSnapshot } from "../api/types";
import { formatNumber } from "../format/annotate";
import type { Annotations } from "../store/annotations";

export type OverlayStat = "grad" | "range" | "dead" | "update";

export const OVERLAY_STATS: { id: OverlayStat; label: string; what: string }[] = [
  { id: "grad", label: "gradient norm", what: "‖∇‖₂ of each edge's and node's gradient" },
  { id: "range", label: "value range / NaN-Inf", what: "largest |x| of each node's value; NaN/Inf marked" },
  { id: "dead", label: "dead ReLUs", what: "share of zeros in each relu's output" },
  { id: "update", label: "update size |Δw|/|w|", what: "between the last two training snapshots" },
];

/** One scored node or edge. `bad`: it holds NaN or ±Inf (drawn in the alarm colour and
 * listed first). `value`: the statistic, finite. */
export interface Score {
  kind: "node" | "edge";
  id: string; // the run key (a module instance's inner nodes: `instance/node`)
  value: number;
  bad: number; // how many elements are NaN or ±Inf
  text: string; // the statistic as written in the worst-10 list
}

export interface OverlayResult {
  scores: Score[]; // worst first
  min: number; // of the finite values, for the legend
  max: number;
  /** The scale the colours follow: log for norms and magnitudes, linear for shares. */
  scale: "log" | "linear";
  unknown: string[]; // ids the statistic applies to but the data does not say (why in `note`)
  note: string | null;
}

/** What an overlay reads. `previous`: the training snapshot before `snapshot`. `ops`: node
 * run key -> its op name. */
export interface OverlayInput {
  annotations: Annotations;
  ops: Record<string, string>;
  snapshot?: TrainSnapshot | null;
  previous?: TrainSnapshot | null;
}

const fmt = formatNumber;

function badOf(s: Summary): number {
  return s.nan + s.inf;
}

function badText(s: Summary): string {
  return [s.nan ? `${s.nan} NaN` : "", s.inf ? `${s.inf} Inf` : ""].filter(Boolean).join(", ");
}

function gradScore(kind: "node" | "edge", id: string, s: Summary): Score {
  const bad = badOf(s);
  const value = s.stats?.norm ?? 0;
  return { kind, id, value, bad, text: bad ? badText(s) : `‖∇‖ ${fmt(value)}` };
}

/** The preview's numbers in order, NaN/Inf as numbers. */
export function flat(v: Nested | null | undefined, out: number[] = []): number[] {
  if (v === null || v === undefined) return out;
  if (Array.isArray(v)) for (const x of v) flat(x, out);
  else if (typeof v === "boolean") out.push(v ? 1 : 0);
  else if (typeof v === "string") out.push(Number(v.replace("inf", "Infinity")));
  else out.push(v);
  return out;
}

/** Share of exact zeros in a value, or null where its summary cannot say: the preview has
 * every element (up to 1,024); without one, a minimum above 0 means none and a maximum of 0
 * (a relu's output is never negative) means all. */
export function zeroShare(s: Summary): number | null {
  if (s.numel === 0) return null;
  if (s.preview !== undefined && s.preview !== null) {
    const xs = flat(s.preview);
    return xs.filter((x) => x === 0).length / xs.length;
  }
  if (s.stats && badOf(s) === 0) {
    if (s.stats.min > 0) return 0;
    if (s.stats.max === 0 && s.stats.min === 0) return 1;
  }
  return null;
}

const RELUS = new Set(["relu", "relu_"]);

/** The node a snapshot's parameter belongs to: `fc1.weight` is node fc1's. */
const paramNode = (name: string) => (name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name);

export function scoreOverlay(stat: OverlayStat, input: OverlayInput): OverlayResult {
  const a = input.annotations;
  const scores: Score[] = [];
  const unknown: string[] = [];
  let note: string | null = null;
  let scale: OverlayResult["scale"] = "log";
  if (stat === "grad") {
    for (const [id, s] of Object.entries(a.edgeGrads)) scores.push(gradScore("edge", id, s));
    const nodes = new Set<string>();
    for (const [id, s] of Object.entries(a.nodeGrads)) {
      scores.push(gradScore("node", id, s));
      nodes.add(id);
    }
    // a leaf with no node gradient of its own (a parameter): its .grad; a linear layer's
    // weight and bias together, as one vector
    const leafNorms = new Map<string, { sq: number; bad: number; parts: Summary[] }>();
    for (const [key, s] of Object.entries(a.leafGrads)) {
      const id = key.endsWith(".weight") || key.endsWith(".bias") ? paramNode(key) : key;
      if (nodes.has(id)) continue;
      const e = leafNorms.get(id) ?? { sq: 0, bad: 0, parts: [] };
      e.sq += (s.stats?.norm ?? 0) ** 2;
      e.bad += badOf(s);
      e.parts.push(s);
      leafNorms.set(id, e);
    }
    for (const [id, e] of leafNorms) {
      const value = Math.sqrt(e.sq);
      const text = e.bad ? e.parts.map(badText).filter(Boolean).join(", ") : `‖.grad‖ ${fmt(value)}`;
      scores.push({ kind: "node", id, value, bad: e.bad, text });
    }
  } else if (stat === "range") {
    for (const [id, s] of Object.entries(a.values)) {
      const bad = badOf(s);
      const value = s.stats ? Math.max(Math.abs(s.stats.min), Math.abs(s.stats.max)) : 0;
      const text = bad ? badText(s) : s.stats ? `[${fmt(s.stats.min)}, ${fmt(s.stats.max)}]` : "empty";
      scores.push({ kind: "node", id, value, bad, text });
    }
    // a gradient that went NaN or Inf on a wire is as much an alarm as a value
    for (const [id, s] of Object.entries(a.edgeGrads))
      if (badOf(s)) scores.push({ kind: "edge", id, value: 0, bad: badOf(s), text: `∇ ${badText(s)}` });
  } else if (stat === "dead") {
    scale = "linear";
    for (const [id, s] of Object.entries(a.values)) {
      if (!RELUS.has(input.ops[id] ?? "")) continue;
      const share = zeroShare(s);
      if (share === null) unknown.push(id);
      else scores.push({ kind: "node", id, value: share, bad: 0, text: `${(share * 100).toFixed(1)}% zeros` });
    }
    if (unknown.length)
      note = `${unknown.length} relu output${unknown.length > 1 ? "s" : ""} over 1,024 elements: the run's summary does not count their zeros`;
  } else {
    const { snapshot, previous } = input;
    if (!snapshot || !previous) note = "needs two training snapshots (train the graph)";
    else {
      // |Δw| from the two snapshots' values where both carry every element (the preview)
      const byNode = new Map<string, { d2: number; w2: number }>();
      for (const [name, now] of Object.entries(snapshot.params)) {
        const before = previous.params[name];
        const id = paramNode(name);
        const xs = flat(now.preview);
        const ys = flat(before?.preview);
        if (!before || now.preview == null || before.preview == null || xs.length !== ys.length) {
          unknown.push(id);
          continue;
        }
        const e = byNode.get(id) ?? { d2: 0, w2: 0 };
        for (let i = 0; i < xs.length; i++) {
          e.d2 += (xs[i] - ys[i]) ** 2;
          e.w2 += ys[i] ** 2;
        }
        byNode.set(id, e);
      }
      for (const [id, e] of byNode) {
        if (unknown.includes(id)) continue; // a layer is scored whole or not at all
        const value = e.w2 > 0 ? Math.sqrt(e.d2 / e.w2) : Math.sqrt(e.d2) > 0 ? Infinity : 0;
        const bad = Number.isFinite(value) && !Number.isNaN(value) ? 0 : 1;
        scores.push({ kind: "node", id, value: bad ? 0 : value, bad, text: bad ? "from |w| = 0" : fmt(value) });
      }
      note = `steps ${previous.step} → ${snapshot.step}`;
      const u = [...new Set(unknown)];
      unknown.length = 0;
      unknown.push(...u);
      if (u.length) note += `; ${u.length} layer${u.length > 1 ? "s" : ""} with a parameter over 1,024 elements not known`;
    }
  }
  scores.sort((x, y) => Number(y.bad > 0) - Number(x.bad > 0) || y.bad - x.bad || y.value - x.value);
  const finite = scores.filter((s) => !s.bad).map((s) => s.value);
  // a share is read against 0..1, not against the other relus
  const shares = scale === "linear";
  return {
    scores,
    min: shares ? 0 : finite.length ? Math.min(...finite) : 0,
    max: shares ? 1 : finite.length ? Math.max(...finite) : 0,
    scale,
    unknown,
    note,
  };
}

// A sequential ramp, pale to dark; NaN/Inf in a colour off the ramp.
export const RAMP = ["#fde68a", "#fbbf24", "#f97316", "#dc2626", "#7f1d1d"];
export const BAD_COLOUR = "#c026d3";

/** Where `value` lies between the result's min and max, 0..1 (log scale: over the positive
 * values, a zero at the bottom). */
export function position(r: Pick<OverlayResult, "min" | "max" | "scale">, value: number): number {
  if (r.scale === "linear") return r.max > r.min ? (value - r.min) / (r.max - r.min) : value > 0 ? 1 : 0;
  if (value <= 0) return 0;
  const lo = Math.log10(Math.max(r.min, r.max * 1e-6, Number.MIN_VALUE));
  const hi = Math.log10(r.max);
  return hi > lo ? Math.min(1, Math.max(0, (Math.log10(value) - lo) / (hi - lo))) : 1;
}

export function colourOf(r: Pick<OverlayResult, "min" | "max" | "scale">, s: Pick<Score, "value" | "bad">): string {
  if (s.bad) return BAD_COLOUR;
  return RAMP[Math.min(RAMP.length - 1, Math.floor(position(r, s.value) * RAMP.length))];
}

/** Each scored node's and edge's colour, by id. */
export function coloursOf(r: OverlayResult): { nodes: Record<string, string>; edges: Record<string, string> } {
  const nodes: Record<string, string> = {};
  const edges: Record<string, string> = {};
  for (const s of r.scores) (s.kind === "node" ? nodes : edges)[s.id] = colourOf(r, s);
  return { nodes, edges };
}
