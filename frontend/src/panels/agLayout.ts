// Layered positions for the autograd view's graphs too big for elkjs: longest-path layers from
// the output's grad_fn toward the leaves, placed in linear time (AutogradView.tsx lays out the
// small ones with elkjs and draws both).
import type { Annotations } from "../store/annotations";

type Autograd = NonNullable<Annotations["autograd"]>;

export const WIDTH = 170; // of a node, in the view's own units

export type XY = { x: number; y: number };

export const GAP_X = 44; // between layers
export const GAP_Y = 24; // between nodes of a layer
const BAND_GAP = 80; // between the bands a long graph is wrapped into
const WRAP_AFTER = 24; // layers: a deeper graph is wrapped
// elkjs's layered layout is worth its cost on teaching-sized graphs, but it grows with the
// dummy nodes long edges need (a 1,000-node chain with skip edges takes tens of seconds, on the
// main thread): past this many nodes + dummies a linear-time layering of our own is used
export const ELK_BUDGET = 120;

/** Longest-path layers: 0 for the output's grad_fn (and other roots), growing toward the
 * leaves; and in each layer its nodes in the order first reached. */
export function layering(g: Autograd): { layer: Map<string, number>; layers: string[][] } {
  const ids = new Set(g.nodes.map((n) => n.id));
  const indeg = new Map(g.nodes.map((n) => [n.id, 0]));
  const out = new Map<string, string[]>(g.nodes.map((n) => [n.id, []]));
  for (const e of g.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) continue;
    out.get(e.source)!.push(e.target);
    indeg.set(e.target, indeg.get(e.target)! + 1);
  }
  const layer = new Map<string, number>();
  const queue = g.nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    const lv = layer.get(v)!;
    for (const t of out.get(v)!) {
      if ((layer.get(t) ?? -1) < lv + 1) layer.set(t, lv + 1);
      const d = indeg.get(t)! - 1;
      indeg.set(t, d);
      if (d === 0) queue.push(t);
    }
  }
  // a cycle (autograd graphs have none) would leave nodes unreached: put them last
  let max = 0;
  for (const l of layer.values()) max = Math.max(max, l);
  const layers: string[][] = [];
  for (const v of [...queue, ...g.nodes.map((n) => n.id).filter((id) => !layer.has(id))]) {
    if (!layer.has(v)) layer.set(v, max + 1);
    (layers[layer.get(v)!] ??= []).push(v);
  }
  return { layer, layers: Array.from(layers, (l) => l ?? []) };
}

/** Linear-time positions: layers right to left, each node placed level with the average of
 * the nodes that feed it a gradient, pushed apart where they would overlap. A long graph (a
 * deep chain) is wrapped into bands of layers, one under the other, like lines of text, so it
 * keeps a screen-like shape instead of a thin strip. */
export function quickPositions(g: Autograd, heights: Map<string, number>, layers: string[][]): Map<string, XY> {
  const parents = new Map<string, string[]>(g.nodes.map((n) => [n.id, []]));
  for (const e of g.edges) parents.get(e.target)?.push(e.source);
  const top = new Map<string, number>();
  const centre = (id: string) => top.get(id)! + heights.get(id)! / 2;
  const extent: { lo: number; hi: number }[] = [];
  for (const ids of layers) {
    const want = ids.map((id, i) => {
      const ps = parents.get(id)!.filter((p) => top.has(p));
      return {
        id,
        y: ps.length ? ps.reduce((a, p) => a + centre(p), 0) / ps.length : i * (heights.get(id)! + GAP_Y),
      };
    });
    want.sort((a, b) => a.y - b.y);
    let bottom = -Infinity;
    let drift = 0;
    const placed = want.map(({ id, y }) => {
      const h = heights.get(id)!;
      const t = Math.max(y - h / 2, bottom + GAP_Y);
      bottom = t + h;
      drift += t - (y - h / 2);
      return { id, t };
    });
    const shift = placed.length ? drift / placed.length : 0; // centre the layer on its targets
    let lo = Infinity;
    let hi = -Infinity;
    for (const { id, t } of placed) {
      top.set(id, t - shift);
      lo = Math.min(lo, t - shift);
      hi = Math.max(hi, t - shift + heights.get(id)!);
    }
    extent.push({ lo, hi });
  }

  // layers per band: about twice as wide as tall overall, and no wrapping for shallow graphs
  const L = layers.length;
  const colW = WIDTH + GAP_X;
  const meanH = extent.reduce((a, e) => a + (e.hi - e.lo), 0) / Math.max(1, L) + BAND_GAP;
  const perBand = L <= WRAP_AFTER ? L : Math.max(WRAP_AFTER / 2, Math.ceil(Math.sqrt((2 * L * meanH) / colW)));
  const pos = new Map<string, XY>();
  let offset = 0;
  for (let b = 0; b * perBand < L; b++) {
    const band = layers.slice(b * perBand, (b + 1) * perBand);
    const ext = extent.slice(b * perBand, (b + 1) * perBand);
    const lo = Math.min(...ext.map((e) => e.lo));
    const hi = Math.max(...ext.map((e) => e.hi));
    band.forEach((ids, k) => {
      const x = (Math.min(perBand, L) - 1 - k) * colW;
      for (const id of ids) pos.set(id, { x, y: top.get(id)! - lo + offset });
    });
    offset += hi - lo + BAND_GAP;
  }
  return pos;
}
