// Layered layouts, the one implementation the canvas (canvas/layout.ts) and the autograd view
// (panels/analysis/agLayout.ts) both use: data or gradients flow along one axis, layer by layer.
// Graphs people read closely get elkjs's careful layout (`elkLayered`); graphs too big for elk
// to lay out while the user waits get a linear-time layout of our own: longest-path layers
// (`layersOf`), then each layer ordered and placed level with the nodes it is wired to, in
// barycentre sweeps, and laid out in columns (`placeLayers`).
import type { ELK as Elk } from "elkjs/lib/elk-api";

export interface Box {
  id: string;
  width: number;
  height: number;
}

export interface Link {
  source: string;
  target: string;
}

export type XY = { x: number; y: number };

// elk is 1.5 MB: loaded on first use, so that the editor opens without it (the loaded library,
// which keeps no state between layouts)
let elk: Promise<Elk> | null = null;
const loadElk = () => (elk ??= import("elkjs/lib/elk.bundled.js").then((m) => new m.default()));

/** elkjs's layered layout: layers `gapX` apart along `direction`, nodes `gapY` apart. */
export async function elkLayered(
  boxes: Box[],
  links: (Link & { id?: string })[],
  opts: { direction: "RIGHT" | "LEFT" | "DOWN"; gapX: number; gapY: number },
): Promise<Map<string, XY>> {
  const out = await (await loadElk()).layout({
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": opts.direction,
      "elk.layered.spacing.nodeNodeBetweenLayers": String(opts.gapX),
      "elk.spacing.nodeNode": String(opts.gapY),
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
    },
    children: boxes.map(({ id, width, height }) => ({ id, width, height })),
    edges: links.map((l, i) => ({ id: l.id ?? `e${i}`, sources: [l.source], targets: [l.target] })),
  });
  return new Map((out.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

interface Graph {
  preds: Map<string, string[]>;
  succs: Map<string, string[]>;
}

/** Each node's inputs and readers; a wire to itself or to a node not in `ids` is left out. */
function graphOf(ids: string[], links: Link[]): Graph {
  const preds = new Map(ids.map((id) => [id, [] as string[]]));
  const succs = new Map(ids.map((id) => [id, [] as string[]]));
  for (const { source, target } of links) {
    if (source === target || !preds.has(source) || !preds.has(target)) continue;
    preds.get(target)!.push(source);
    succs.get(source)!.push(target);
  }
  return { preds, succs };
}

export interface Layers {
  layer: Map<string, number>; // node id -> its layer
  layers: string[][]; // each layer's nodes, in order
}

/** Longest-path layers: 0 for the sources, each node one past its furthest input (found in
 * topological order: Kahn's algorithm, `ids` order among equals). Nodes on a cycle (neither
 * the editor nor autograd makes one) go to one last layer.
 * `sourcesNearReaders`: each source moves right, next to its first reader, as a person draws
 * an input where it is used. `order`: each layer in `ids` order ("document") or in the order
 * the topological walk reached its nodes ("reached"). */
export function layersOf(
  ids: string[],
  links: Link[],
  opts: { sourcesNearReaders?: boolean; order?: "document" | "reached" } = {},
): Layers {
  const { preds, succs } = graphOf(ids, links);
  const waiting = new Map(ids.map((id) => [id, preds.get(id)!.length]));
  const order = ids.filter((id) => waiting.get(id) === 0);
  const layer = new Map<string, number>(order.map((id) => [id, 0]));
  for (let i = 0; i < order.length; i++) {
    const l = layer.get(order[i])!;
    for (const s of succs.get(order[i])!) {
      if ((layer.get(s) ?? -1) < l + 1) layer.set(s, l + 1);
      const left = waiting.get(s)! - 1;
      waiting.set(s, left);
      if (left === 0) order.push(s);
    }
  }
  let last = 0;
  for (const l of layer.values()) last = Math.max(last, l);
  const reached = new Set(order);
  for (const id of ids) if (!reached.has(id)) layer.set(id, last + 1);
  if (opts.sourcesNearReaders)
    for (const id of order) {
      const readers = succs.get(id)!;
      if (preds.get(id)!.length || !readers.length) continue;
      layer.set(id, Math.min(...readers.map((r) => layer.get(r)!)) - 1);
    }
  const layers: string[][] = [];
  const walk = opts.order === "reached" ? [...order, ...ids.filter((id) => !reached.has(id))] : ids;
  for (const id of walk) (layers[layer.get(id)!] ??= []).push(id);
  return { layer, layers: Array.from(layers, (l) => l ?? []) };
}

/** Place one layer: each node wants its centre at `want`; in that order, they are stacked
 * without overlapping, and the stack is shifted to sit, on average, where its nodes want. */
function placeLayer(ids: string[], want: Map<string, number>, height: Map<string, number>, top: Map<string, number>, gapY: number) {
  const sorted = [...ids].sort((a, b) => want.get(a)! - want.get(b)!);
  let next = -Infinity;
  let drift = 0;
  const tops = sorted.map((id) => {
    const t = Math.max(want.get(id)! - height.get(id)! / 2, next);
    next = t + height.get(id)! + gapY;
    drift += t - (want.get(id)! - height.get(id)! / 2);
    return t;
  });
  const shift = drift / sorted.length;
  sorted.forEach((id, i) => top.set(id, tops[i] - shift));
}

export interface PlaceOptions {
  gapX: number; // between layers
  gapY: number; // between the nodes of a layer
  sweeps: number; // barycentre sweeps: forward (toward the inputs), back, forward, ...
  flow: "right" | "left"; // where layer 0 is: at the left, or at the right
  /** A graph of more layers than this is wrapped into bands of layers, one under the other
   * like lines of text, so that it keeps a screen-like shape instead of a thin strip. */
  wrapAfter?: number;
  bandGap?: number; // between bands
}

/** Each node's top-left corner: layers in columns as wide as the widest node, each layer
 * stacked in its order, then placed by `sweeps` barycentre sweeps. */
export function placeLayers(boxes: Box[], links: Link[], layers: string[][], opts: PlaceOptions): Map<string, XY> {
  const { preds, succs } = graphOf(
    boxes.map((b) => b.id),
    links,
  );
  const height = new Map(boxes.map((b) => [b.id, b.height]));
  const top = new Map<string, number>();
  for (const ids of layers) {
    let y = 0;
    for (const id of ids) {
      top.set(id, y);
      y += height.get(id)! + opts.gapY;
    }
  }
  const centre = (id: string) => top.get(id)! + height.get(id)! / 2;
  // a sweep: each layer in turn wants the mean centre of its neighbours on one side (a node
  // with none there stays where it is)
  const sweep = (order: string[][], side: Map<string, string[]>) => {
    for (const ids of order) {
      if (!ids.length) continue;
      const want = new Map<string, number>();
      for (const id of ids) {
        const ns = side.get(id)!;
        want.set(id, ns.length ? ns.reduce((sum, n) => sum + centre(n), 0) / ns.length : centre(id));
      }
      placeLayer(ids, want, height, top, opts.gapY);
    }
  };
  for (let k = 0; k < opts.sweeps; k++) {
    if (k % 2 === 0) sweep(layers, preds);
    else sweep([...layers].reverse(), succs);
  }

  const colW = Math.max(...boxes.map((b) => b.width)) + opts.gapX;
  const L = layers.length;
  const column = (k: number, count: number) => (opts.flow === "right" ? k : count - 1 - k) * colW;
  const pos = new Map<string, XY>();
  if (opts.wrapAfter === undefined) {
    layers.forEach((ids, k) => {
      for (const id of ids) pos.set(id, { x: column(k, L), y: top.get(id)! });
    });
    return pos;
  }
  // layers per band: about twice as wide as tall overall, and no wrapping for shallow graphs
  const bandGap = opts.bandGap ?? 0;
  const extent = layers.map((ids) => ({
    lo: Math.min(...ids.map((id) => top.get(id)!)),
    hi: Math.max(...ids.map((id) => top.get(id)! + height.get(id)!)),
  }));
  const meanH = extent.reduce((a, e) => a + (e.hi - e.lo), 0) / Math.max(1, L) + bandGap;
  const perBand =
    L <= opts.wrapAfter ? L : Math.max(opts.wrapAfter / 2, Math.ceil(Math.sqrt((2 * L * meanH) / colW)));
  let offset = 0;
  for (let b = 0; b * perBand < L; b++) {
    const band = layers.slice(b * perBand, (b + 1) * perBand);
    const ext = extent.slice(b * perBand, (b + 1) * perBand);
    const lo = Math.min(...ext.map((e) => e.lo));
    const hi = Math.max(...ext.map((e) => e.hi));
    band.forEach((ids, k) => {
      for (const id of ids) pos.set(id, { x: column(k, Math.min(perBand, L)), y: top.get(id)! - lo + offset });
    });
    offset += hi - lo + bandGap;
  }
  return pos;
}
