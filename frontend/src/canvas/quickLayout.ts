// A layered left-to-right layout in near-linear time, for graphs too big for elkjs to lay out
// while the user waits (elk takes about a second for 500 nodes, more on a first, cold call).
// Layers by longest path, sources next to their first reader; each layer ordered and placed
// level with the nodes it is wired to, sweeping forward, back and forward again.
import type { XYPosition } from "@xyflow/react";

export interface Box {
  id: string;
  width: number;
  height: number;
}

export interface Link {
  source: string;
  target: string;
}

const GAP_X = 90; // between layers
const GAP_Y = 40; // between the nodes of a layer

interface Graph {
  ids: string[];
  preds: Map<string, string[]>;
  succs: Map<string, string[]>;
}

function graphOf(nodes: Box[], links: Link[]): Graph {
  const ids = nodes.map((n) => n.id);
  const preds = new Map(ids.map((id) => [id, [] as string[]]));
  const succs = new Map(ids.map((id) => [id, [] as string[]]));
  for (const { source, target } of links) {
    if (source === target || !preds.has(source) || !preds.has(target)) continue;
    preds.get(target)!.push(source);
    succs.get(source)!.push(target);
  }
  return { ids, preds, succs };
}

/** Nodes in an order where each comes after its inputs (Kahn's algorithm, document order
 * among equals); nodes on a cycle, which the editor never makes, come last. */
function topoOrder({ ids, preds, succs }: Graph): string[] {
  const waiting = new Map(ids.map((id) => [id, preds.get(id)!.length]));
  const order = ids.filter((id) => waiting.get(id) === 0);
  for (let i = 0; i < order.length; i++) {
    for (const s of succs.get(order[i])!) {
      const left = waiting.get(s)! - 1;
      waiting.set(s, left);
      if (left === 0) order.push(s);
    }
  }
  const placed = new Set(order);
  return [...order, ...ids.filter((id) => !placed.has(id))];
}

/** Longest path from the sources; then each source moves right, next to its first reader, as
 * a person would draw an input where it is used. */
function layersOf(g: Graph, order: string[]): Map<string, number> {
  const layer = new Map<string, number>();
  for (const id of order) {
    let l = 0;
    for (const p of g.preds.get(id)!) l = Math.max(l, (layer.get(p) ?? -1) + 1);
    layer.set(id, l);
  }
  for (const id of order) {
    const readers = g.succs.get(id)!;
    if (g.preds.get(id)!.length || !readers.length) continue;
    layer.set(id, Math.min(...readers.map((r) => layer.get(r)!)) - 1);
  }
  return layer;
}

/** Place one layer: each node wants its centre at `want`; in that order, they are stacked
 * without overlapping, and the stack is shifted to sit, on average, where its nodes want. */
function placeLayer(ids: string[], want: Map<string, number>, height: Map<string, number>, top: Map<string, number>) {
  const sorted = [...ids].sort((a, b) => want.get(a)! - want.get(b)!);
  let next = -Infinity;
  let drift = 0;
  const tops = sorted.map((id) => {
    const t = Math.max(want.get(id)! - height.get(id)! / 2, next);
    next = t + height.get(id)! + GAP_Y;
    drift += t - (want.get(id)! - height.get(id)! / 2);
    return t;
  });
  const shift = drift / sorted.length;
  sorted.forEach((id, i) => top.set(id, tops[i] - shift));
}

export function quickLayout(nodes: Box[], links: Link[]): Record<string, XYPosition> {
  const g = graphOf(nodes, links);
  const layer = layersOf(g, topoOrder(g));
  const layers: string[][] = [];
  for (const id of g.ids) (layers[layer.get(id)!] ??= []).push(id);
  const height = new Map(nodes.map((n) => [n.id, n.height]));
  const width = Math.max(...nodes.map((n) => n.width));

  // start: each layer stacked in document order
  const top = new Map<string, number>();
  for (const ids of layers) {
    let y = 0;
    for (const id of ids ?? []) {
      top.set(id, y);
      y += height.get(id)! + GAP_Y;
    }
  }
  const centre = (id: string) => top.get(id)! + height.get(id)! / 2;
  // a sweep: each layer in turn wants the mean centre of its neighbours on one side (a node
  // with none there stays where it is)
  const sweep = (order: string[][], side: Map<string, string[]>) => {
    for (const ids of order) {
      if (!ids?.length) continue;
      const want = new Map<string, number>();
      for (const id of ids) {
        const ns = side.get(id)!;
        want.set(id, ns.length ? ns.reduce((sum, n) => sum + centre(n), 0) / ns.length : centre(id));
      }
      placeLayer(ids, want, height, top);
    }
  };
  sweep(layers, g.preds);
  sweep([...layers].reverse(), g.succs);
  sweep(layers, g.preds);

  const positions: Record<string, XYPosition> = {};
  for (const id of g.ids) positions[id] = { x: layer.get(id)! * (width + GAP_X), y: top.get(id)! };
  return positions;
}
