// Edges that join the same two nodes (x * x: both of mul's inputs come from x) meet their
// target a port apart, so their labels, drawn at each curve's middle, would cover each other
// and hide one of the two numbers the lesson is about. Such edges get their labels stacked:
// each one's place among its siblings, in the order of the target's input ports.
import type { OpSpec } from "../api/types";

interface Wire {
  id: string;
  source: string;
  target: string;
  targetHandle?: string | null;
}

interface NodeOfOp {
  id: string;
  data: { op: string };
}

/** [position among its parallel edges, how many there are]; only edges that have siblings. */
export type Place = readonly [number, number];

export const LABEL_STEP = 34; // px between stacked labels: a value line and a gradient line

const cache = new WeakMap<readonly Wire[], Map<string, Place>>();

/** The places of `edges` that share their source and target with another edge. Computed once
 * per edges array (the editor makes a new one at each change), so each edge's view can look
 * itself up on every store update at the cost of two map reads, and gets the same Place object
 * until its siblings change. (A node's op never changes while its edges stay the same.) */
export function parallelPlaces(
  edges: readonly Wire[],
  nodes: readonly NodeOfOp[],
  ops: Record<string, OpSpec>,
): Map<string, Place> {
  const hit = cache.get(edges);
  if (hit) return hit;
  const groups = new Map<string, Wire[]>();
  for (const e of edges) {
    const key = `${e.source}\u0000${e.target}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  const places = new Map<string, Place>();
  let opOf: Map<string, string> | undefined; // node id -> op, made when a group needs it
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    opOf ??= new Map(nodes.map((n) => [n.id, n.data.op]));
    const ports = ops[opOf.get(group[0].target) ?? ""]?.inputs.map((p) => p.name) ?? [];
    const rank = (e: Wire) => {
      const i = ports.indexOf(e.targetHandle ?? "");
      return i < 0 ? ports.length : i;
    };
    // in port order; edges into one (variadic) port keep the order they were made in
    const ordered = group.map((e, k) => ({ e, k })).sort((a, b) => rank(a.e) - rank(b.e) || a.k - b.k);
    ordered.forEach(({ e }, i) => places.set(e.id, [i, group.length] as const));
  }
  cache.set(edges, places);
  return places;
}

/** How far (px, downwards) an edge's label moves from its curve's middle. */
export function labelShift(place: Place | undefined): number {
  return place ? (place[0] - (place[1] - 1) / 2) * LABEL_STEP : 0;
}
