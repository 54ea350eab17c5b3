// Auto-layout of the canvas, layered: data flows left to right, as the texts draw it. Graphs
// people read closely get elkjs's careful layout; big ones the quick layout of
// layout/layered.ts. A long chain (a model: LeNet's 13 layers) would be one thin row that only
// fits the canvas at a zoom where nothing can be read: it wraps into rows, like lines of text,
// as many as make the graph largest on the canvas.
import type { XYPosition } from "@xyflow/react";
import type { OpNode, WireEdge } from "../doc/convert";
import { type Box, elkLayered, layersOf, type Link, placeLayers } from "../layout/layered";
import { NODE_WIDTH } from "./nodeSize";
import { asStacks, repeatedChains, stackedRows } from "./stacks";

// Past this many nodes elk takes about a second or more (500 nodes: 1-2 s on a first, cold
// call, even with one crossing-minimisation sweep), while quickLayout takes a few ms with
// about as many crossings (measured on bench/_editor_graph.py's graphs: 4% more at 500 nodes).
const ELK_MAX_NODES = 150;
const GAP_X = 90; // between layers
const GAP_Y = 40; // between the nodes of a layer
const GAP_ROW = 110; // between the rows of a wrapped chain: room for the wires back to the left
// a fit above this draws everything at full detail (canvas/detail.ts): no need to wrap
const FULL_ZOOM = 11 / 12;
const MAX_ZOOM = 1.25; // showOpened.ts's OPEN_FIT: small graphs are not blown up

export interface Frame {
  width: number;
  height: number;
}
const DEFAULT_FRAME: Frame = { width: 900, height: 800 }; // a laptop's canvas, between the panels

/** Whether the nodes all sit on one spot, as in a generated graph or a document written
 * without positions (they default to (0, 0)): such a graph needs laying out to be read. */
export function isStacked(nodes: OpNode[]) {
  return nodes.length > 1 && nodes.every((n) => n.position.x === nodes[0].position.x && n.position.y === nodes[0].position.y);
}

/** Positions for every node; `frame` is the canvas the graph is to be read on (its shape
 * decides how many rows a long chain wraps into). */
const boxesOf = (nodes: OpNode[]): Box[] =>
  nodes.map((n) => ({
    id: n.id,
    width: n.measured?.width ?? NODE_WIDTH,
    // a module instance is measured once drawn: its title, a port row and two result lines
    height: n.measured?.height ?? (n.data.op === "module" ? 100 : 80),
  }));

/** Where a stored layout is shown: its nodes pushed apart where they now overlap (a node is
 * as tall as its face: nodeSize.ts, and a layout stored before may not have room for it);
 * then, if it flows left to right (every wire goes rightwards, as a layered layout draws it)
 * and is unreadable at any zoom that shows it whole (below `readable`), wrapped into rows;
 * repeated blocks in such a row stacked (canvas/stacks.ts).
 * Null when it reads as it is. Any other layout is people's own and is kept: cutting a
 * layout whose wires turn back (a snake of rows) into columns would scramble its order. */
export function wrappedIfUnreadable(
  nodes: OpNode[],
  edges: WireEdge[],
  frame: Frame | undefined,
  readable: number,
) {
  const stored = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
  const boxes = boxesOf(nodes);
  let at = separated(stored, boxes);
  const flowsRight = edges.every((e) => !at[e.source] || !at[e.target] || at[e.source].x < at[e.target].x);
  // repeated blocks stored in a row (an imported model's) read as a stack, as laid out ones do
  if (flowsRight) at = separated(stackedRows(at, boxes, repeatedChains(nodes, edges)), boxes);
  const wrapped = flowsRight ? wrapRows(at, boxes, frame?.width && frame.height ? frame : DEFAULT_FRAME, readable) : at;
  return wrapped === stored ? null : wrapped;
}

const GAP_APART = 16; // between a node and one it was pushed below

/** `at` with every node that overlaps one above it moved down below that one (and so on down
 * the column), keeping x; `at` itself when nothing overlaps. One pass, top to bottom: a node
 * is checked against the nodes placed before it in the order of where they now are (a push
 * only moves it down, past each one it met), so a column of n nodes costs O(n²) at worst. */
export function separated(at: Record<string, XYPosition>, boxes: Box[]): Record<string, XYPosition> {
  const order = boxes.filter((b) => at[b.id]).sort((a, b) => at[a.id].y - at[b.id].y || at[a.id].x - at[b.id].x);
  const y = new Map(order.map((b) => [b.id, at[b.id].y]));
  const placed: Box[] = []; // by where they now are, top first
  let moved = false;
  for (const b of order) {
    const x = at[b.id].x;
    let top = y.get(b.id)!;
    for (const p of placed) {
      const py = y.get(p.id)!;
      if (py >= top + b.height) break; // this one and all after it start below b
      const px = at[p.id].x;
      if (x < px + p.width && px < x + b.width && top < py + p.height) {
        top = py + p.height + GAP_APART;
        moved = true;
      }
    }
    y.set(b.id, top);
    // kept in order of where they now are
    let i = placed.length;
    while (i > 0 && y.get(placed[i - 1].id)! > top) i--;
    placed.splice(i, 0, b);
  }
  if (!moved) return at;
  return Object.fromEntries(Object.entries(at).map(([id, p]) => [id, y.has(id) ? { x: p.x, y: y.get(id)! } : p]));
}

export async function layoutPositions(
  nodes: OpNode[],
  edges: WireEdge[],
  frame?: Frame,
): Promise<Record<string, XYPosition>> {
  const fit = frame?.width && frame.height ? frame : DEFAULT_FRAME;
  // repeated blocks (blocks.0 … blocks.11) are laid out as one tall box, then opened into a stack
  const { boxes, links, unstack } = asStacks(boxesOf(nodes), edges, repeatedChains(nodes, edges));
  if (nodes.length > ELK_MAX_NODES) return unstack(wrapRows(quickLayout(boxes, links), boxes, fit));
  const at = await elkLayered(boxes, links, { direction: "RIGHT", gapX: GAP_X, gapY: GAP_Y });
  return unstack(wrapRows(Object.fromEntries(at), boxes, fit));
}

/** A left-to-right layout cut into rows, between its columns (nodes sharing a left edge),
 * when that draws it larger on `frame`: each row starts at the left, below the one before, so
 * that data flows left to right within a row and down from row to row. Rows are chosen to
 * make the zoom that fits the whole largest; a layout that fits at `keepAbove` (by default:
 * at full detail) stays as is. */
export function wrapRows(
  at: Record<string, XYPosition>,
  boxes: Box[],
  frame: Frame,
  keepAbove = FULL_ZOOM,
): Record<string, XYPosition> {
  const size = new Map(boxes.map((b) => [b.id, b]));
  const ids = Object.keys(at).filter((id) => size.has(id));
  if (ids.length < 2) return at;
  const columns = new Map<number, { x: number; right: number }>();
  for (const id of ids) {
    const x = Math.round(at[id].x);
    const c = columns.get(x) ?? { x, right: x };
    c.right = Math.max(c.right, x + size.get(id)!.width);
    columns.set(x, c);
  }
  const cols = [...columns.values()].sort((a, b) => a.x - b.x);
  const top = Math.min(...ids.map((id) => at[id].y));
  const height = Math.max(...ids.map((id) => at[id].y + size.get(id)!.height)) - top;
  // cols[i..j) in one row: its width
  const widthOf = (i: number, j: number) => Math.max(...cols.slice(i, j).map((c) => c.right)) - cols[i].x;
  // the columns each of `rows` rows starts at: as many columns in each (the last may have fewer)
  const cuts = (rows: number) => {
    const per = Math.ceil(cols.length / rows);
    return Array.from({ length: Math.ceil(cols.length / per) }, (_, r) => r * per);
  };
  const zoomOf = (starts: number[]) => {
    const w = Math.max(...starts.map((s, r) => widthOf(s, starts[r + 1] ?? cols.length)));
    const h = starts.length * height + (starts.length - 1) * GAP_ROW;
    return Math.min(MAX_ZOOM, frame.width / w, frame.height / h);
  };
  let best = [0];
  if (zoomOf(best) >= keepAbove) return at;
  for (let rows = 2; rows <= cols.length; rows++) {
    const starts = cuts(rows);
    if (zoomOf(starts) > zoomOf(best)) best = starts;
  }
  if (best.length === 1) return at;
  const rowOf = (x: number) => {
    let r = 0;
    while (r + 1 < best.length && cols[best[r + 1]].x <= x) r++;
    return r;
  };
  return Object.fromEntries(
    Object.entries(at).map(([id, p]) => {
      const r = rowOf(Math.round(p.x));
      const y = p.y + r * (height + GAP_ROW); // a node is as tall as its face: no spreading
      return [id, { x: p.x - cols[best[r]].x + cols[0].x, y }];
    }),
  );
}

/** The linear-time layout, in a few ms for 500 nodes: longest-path layers, sources next to
 * their first reader, and three sweeps (forward, back, forward) placing each layer level
 * with the nodes it is wired to. */
export function quickLayout(boxes: Box[], links: Link[]): Record<string, XYPosition> {
  const { layers } = layersOf(
    boxes.map((b) => b.id),
    links,
    { sourcesNearReaders: true, order: "document" },
  );
  return Object.fromEntries(placeLayers(boxes, links, layers, { gapX: GAP_X, gapY: GAP_Y, sweeps: 3, flow: "right" }));
}
