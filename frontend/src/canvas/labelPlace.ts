// Where an edge's label goes: the middle of its curve unless a node sits there (nodes placed
// close together, a wire that passes behind a third node), else the first point along the curve,
// or beside its middle, where the label covers no node. A label under a node is unreadable and
// hides the node's own numbers.

export interface Box {
  x: number; // left
  y: number; // top
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** The cubic curve React Flow draws for a bezier edge: "M sx,sy C c1x,c1y c2x,c2y tx,ty". */
export function curveOf(path: string): Point[] | null {
  const n = path.match(/-?\d+(?:\.\d+)?(?:e-?\d+)?/gi)?.map(Number);
  if (!n || n.length !== 8) return null;
  return [0, 2, 4, 6].map((i) => ({ x: n[i], y: n[i + 1] }));
}

export function pointAt([a, b, c, d]: Point[], t: number): Point {
  const u = 1 - t;
  const [w0, w1, w2, w3] = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
  return { x: w0 * a.x + w1 * b.x + w2 * c.x + w3 * d.x, y: w0 * a.y + w1 * b.y + w2 * c.y + w3 * d.y };
}

const GAP = 4; // px kept free between a label and a node
const ALONG = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78];
const BESIDE = [1, -1, 2, -2, 3, -3]; // label heights above (-) or below (+) the middle

function overlap(at: Point, size: { width: number; height: number }, n: Box): number {
  const w = Math.min(at.x + size.width / 2, n.x + n.width + GAP) - Math.max(at.x - size.width / 2, n.x - GAP);
  const h = Math.min(at.y + size.height / 2, n.y + n.height + GAP) - Math.max(at.y - size.height / 2, n.y - GAP);
  return w > 0 && h > 0 ? w * h : 0;
}

/** The centre for a label of `size` on the curve `path` that covers none of `nodes` (flow
 * coordinates), or, when every place tried covers one, the one that covers least. */
export function placeLabel(path: string, size: { width: number; height: number }, nodes: Iterable<Box>, middle: Point): Point {
  const curve = curveOf(path);
  if (!curve) return middle;
  // only the nodes near the curve can be under its label
  const xs = curve.map((p) => p.x);
  const ys = curve.map((p) => p.y);
  const reach = { width: size.width + 2 * GAP, height: size.height * 4 + 2 * GAP };
  const left = Math.min(...xs) - reach.width;
  const right = Math.max(...xs) + reach.width;
  const top = Math.min(...ys) - reach.height;
  const bottom = Math.max(...ys) + reach.height;
  const near: Box[] = [];
  for (const n of nodes)
    if (n.x < right && n.x + n.width > left && n.y < bottom && n.y + n.height > top) near.push(n);
  if (!near.length) return middle;
  const candidates = [
    ...ALONG.map((t) => pointAt(curve, t)),
    ...BESIDE.map((k) => ({ x: middle.x, y: middle.y + k * (size.height + GAP) })),
  ];
  let best = middle;
  let least = Infinity;
  for (const at of candidates) {
    let covered = 0;
    for (const n of near) covered += overlap(at, size, n);
    if (covered === 0) return at;
    if (covered < least) [best, least] = [at, covered];
  }
  return best;
}

/** A label's size, estimated from its lines (11 px monospace, styles.css .wire-label .anno)
 * so that it can be placed in the render that draws it. */
export function labelSize(lines: string[]): { width: number; height: number } {
  const longest = Math.max(4, ...lines.map((l) => l.length));
  return { width: Math.min(longest * 7.3 + 18, 460), height: lines.length * 17 + 4 };
}
