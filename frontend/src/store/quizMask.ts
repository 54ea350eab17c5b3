// Predict, then reveal (store/quiz.ts): while a room's question is open, a student's page must
// not show the number asked about, nor the numbers it can be read off directly. The run's
// annotations are the one place the canvas, the inspector and the chain rule read numbers
// from, so the number is taken out of them (and out again whenever a record or step mode
// rebuilds them) and put back at the reveal.
import type { Summary } from "../api/types";
import type { Annotations } from "./annotations";

export interface QuizTarget {
  // an edge's gradient, a node's value, a leaf's .grad, a node's total gradient
  kind: "grad" | "value" | "leaf_grad" | "node_grad";
  id: string; // the edge's id, or the node's ("node" or "node.weight" for a leaf's .grad)
  label: string;
}

type Table = "values" | "nodeGrads" | "leafGrads" | "edgeGrads";
export type Hidden = Partial<Record<Table, Record<string, Summary>>>;

interface Wire {
  id: string;
  source: string;
  target: string;
}

/** Which entries of which tables give the target away. An edge's gradient: the edge, and its
 * producer's total gradient and .grad when that is the only wire out (they are the same
 * number). A leaf's .grad or a node's total gradient: both, and every wire out of the node
 * (the question is what adding them gives). A node's value: the value, which every wire out of the
 * node shows. */
export function hiddenKeys(target: QuizTarget, edges: Wire[]): Partial<Record<Table, string[]>> {
  if (target.kind === "value") return { values: [target.id] };
  if (target.kind === "leaf_grad" || target.kind === "node_grad") {
    const node = target.id.split(".")[0];
    return {
      leafGrads: [target.id],
      nodeGrads: [node],
      edgeGrads: edges.filter((e) => e.source === node).map((e) => e.id),
    };
  }
  const edge = edges.find((e) => e.id === target.id);
  if (!edge) return { edgeGrads: [target.id] };
  const alone = edges.filter((e) => e.source === edge.source).length === 1;
  return {
    edgeGrads: [target.id],
    ...(alone ? { nodeGrads: [edge.source], leafGrads: [edge.source] } : {}),
  };
}

/** What a lesson step's question hides (docs/graph-format.md, "Lesson steps that ask"): more
 * than `hiddenKeys`, so that no number nearby gives the answer away. A gradient: every
 * gradient of the run (those further from the loss are made from it, and a fan-out's or a
 * symmetric graph's neighbours are equal to it); a value: that node's value, every value
 * computed from it, and every gradient. `a`: the annotations now (the leaves' .grad keys). */
export function lessonKeys(target: QuizTarget, edges: Wire[], a: Annotations): Partial<Record<Table, string[]>> {
  const grads = {
    edgeGrads: [...new Set([...edges.map((e) => e.id), ...Object.keys(a.edgeGrads)])],
    nodeGrads: Object.keys(a.nodeGrads),
    leafGrads: Object.keys(a.leafGrads),
  };
  if (target.kind !== "value") return grads;
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.source, [...(out.get(e.source) ?? []), e.target]);
  const below = new Set([target.id]);
  const queue = [target.id];
  while (queue.length)
    for (const next of out.get(queue.pop()!) ?? [])
      if (!below.has(next)) {
        below.add(next);
        queue.push(next);
      }
  return { ...grads, values: [...below] };
}

/** `a` without the hidden entries (null when it has none of them: nothing to do), and the
 * entries taken out. */
export function mask(a: Annotations, keys: Partial<Record<Table, string[]>>): { masked: Annotations; taken: Hidden } | null {
  let next: Annotations | null = null;
  const taken: Hidden = {};
  for (const [table, ids] of Object.entries(keys) as [Table, string[]][]) {
    for (const id of ids) {
      if (!(id in a[table])) continue;
      next ??= { ...a };
      if (next[table] === a[table]) next[table] = { ...a[table] };
      (taken[table] ??= {})[id] = a[table][id];
      delete next[table][id];
    }
  }
  return next ? { masked: next, taken } : null;
}

/** `a` with what `mask` took out put back, where nothing newer has come meanwhile. */
export function unmask(a: Annotations, taken: Hidden): Annotations {
  const next = { ...a };
  for (const [table, entries] of Object.entries(taken) as [Table, Record<string, Summary>][]) {
    next[table] = { ...entries, ...a[table] };
  }
  return next;
}
