// The type a projector's nodes are sized for. Presenting, a node's large face must be 16 px on
// screen (detail.ts PRESENTER_PX) at the fit that shows the whole graph, and lie inside its
// node: the font in flow px is 16 / zoom, and the node must be as tall as its face wraps to in
// that font, while a taller node makes the graph taller and the fit's zoom smaller. So the
// font is the smallest that still gives 16 px at the zoom the graph fits at with nodes sized
// for it, nodes pushed apart where they grew into one another (layout.ts separated). A graph
// stacked in columns may find no such font (each node grows with the font, and the zoom falls
// as fast): wider nodes wrap their faces into fewer lines, so the nodes may widen too, the
// layout spread left to right to keep their gaps. A graph that no width and font show whole
// at 16 px gets those that draw it largest, under 16 px but inside its nodes: a face that hung
// over the node below it, or a number cut, would read wrong.
import { getViewportForBounds, type Viewport, type XYPosition } from "@xyflow/react";
import type { OpSpec } from "../api/types";
import type { OpNode, WireEdge } from "../doc/convert";
import { levelOfDetail, MAX_FONT, PRESENTER_PX } from "./detail";
import { separated } from "./layout";
import { type FaceType, NODE_WIDTH, PRESENTER_WEIGHT, sizedToFaces } from "./nodeSize";

export interface Frame {
  width: number;
  height: number;
}

export interface PresenterFit {
  type: FaceType;
  /** Where the nodes go: spread to the width of the type's nodes, then pushed down below a
   * node that grew into them (only those that move). */
  moved: Record<string, XYPosition>;
  viewport: Viewport;
}

/** The widths a projector's nodes may take, narrowest first: a wider node wraps its face
 * into fewer lines of the large type, so a graph stacked in columns gets shorter. */
export const PRESENTER_WIDTHS = [NODE_WIDTH, 225, 270];
/** Past this many nodes only the editor's width is tried (each try sizes every node). */
const WIDEN_MAX_NODES = 150;

/** `at` spread (or narrowed) left to right by `scale` from its leftmost node: the nodes of a
 * layout drawn `scale` times as wide keep their gaps and their order. */
export function spread(at: Record<string, XYPosition>, scale: number): Record<string, XYPosition> {
  if (scale === 1) return at;
  const left = Math.min(...Object.values(at).map((p) => p.x));
  return Object.fromEntries(Object.entries(at).map(([id, p]) => [id, { x: left + (p.x - left) * scale, y: p.y }]));
}

/** The graph as the editor holds it: its nodes and wires, the registry, the backward target. */
export interface Shown {
  nodes: OpNode[];
  edges: WireEdge[];
  ops: Record<string, OpSpec>;
  target: string | null;
}

function fitFor(type: FaceType, from: number, graph: Shown, frame: Frame, fit: { padding: number; maxZoom: number }) {
  const { nodes, edges, ops, target } = graph;
  const boxes = sizedToFaces(nodes, edges, ops, target, type).map((n) => ({
    id: n.id,
    width: n.measured?.width ?? NODE_WIDTH,
    height: n.measured?.height ?? 90,
  }));
  const stored = Object.fromEntries(nodes.map((n) => [n.id, n.position]));
  const at = separated(spread(stored, type.width / from), boxes);
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const b of boxes) {
    const p = at[b.id];
    [x0, y0] = [Math.min(x0, p.x), Math.min(y0, p.y)];
    [x1, y1] = [Math.max(x1, p.x + b.width), Math.max(y1, p.y + b.height)];
  }
  const bounds = { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
  const viewport = getViewportForBounds(bounds, frame.width, frame.height, 0.05, fit.maxZoom, fit.padding);
  const l = levelOfDetail(viewport.zoom, true);
  // 16 px on screen at this zoom needs no larger font than the nodes are sized for (full
  // detail has no large face)
  const legible = l.detail === "full" || Math.ceil(PRESENTER_PX / viewport.zoom) <= type.font;
  const px = (l.detail === "full" ? 12 : Math.min(type.font, l.font)) * viewport.zoom;
  const moved = Object.fromEntries(
    Object.entries(at).filter(([id, p]) => p.x !== stored[id].x || p.y !== stored[id].y),
  );
  return { type, moved, viewport, legible, px };
}

/** The projector's type for this graph on a canvas of `frame` (fitted whole with `fit`), where
 * the nodes go with it, and the viewport that shows them whole. `from`: the width the nodes
 * are drawn at now (their positions spread for it). */
export function presenterFit(
  graph: Shown,
  frame: Frame,
  fit: { padding: number; maxZoom: number },
  from = NODE_WIDTH,
): PresenterFit {
  // the narrowest nodes, and in them the smallest font (from 16 px at the largest zoom a fit
  // goes to), that are 16 px on screen at their own fit; failing all, the largest on screen
  let best: ReturnType<typeof fitFor> | null = null;
  const widths = graph.nodes.length > WIDEN_MAX_NODES ? [NODE_WIDTH] : PRESENTER_WIDTHS;
  for (const width of widths)
    for (let font = Math.ceil(PRESENTER_PX / fit.maxZoom); font <= MAX_FONT; font++) {
      const f = fitFor({ font, weight: PRESENTER_WEIGHT, width }, from, graph, frame, fit);
      if (f.legible) return f;
      if (!best || f.px > best.px + 0.01) best = f;
    }
  return best!;
}
