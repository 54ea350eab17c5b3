// The fit view, readable: a graph that fits the canvas is shown whole; one that would only fit
// below READABLE_ZOOM (where a face would need more lines than its node has: canvas/detail.ts
// keeps the text at 11 px on screen by growing its font as the zoom shrinks) is shown from
// its start (top left) at READABLE_ZOOM, and the rest is a pan away. A view of specks that
// "fits" is no view of the graph. What is drawn over the canvas is kept clear of the graph: a
// panel over its left side (the overlay's), and the minimap (drawn in the bottom right, or the
// top right where a node would lie under the bottom right; under both, a graph shown whole is
// fitted beside or above it). Presenting, the graph is fitted whole, with its nodes sized for
// the projector's type (presenterType.ts).
import { getViewportForBounds, useReactFlow, useStoreApi } from "@xyflow/react";
import { useCallback } from "react";
import { useEditor } from "../store/editor";
import { useFaceType } from "../store/faceType";
import { type MinimapCorner, useMinimapCorner } from "../store/minimapCorner";
import { usePace } from "../store/pace";
import { READABLE_ZOOM } from "./detail";
import { NODE_WIDTH } from "./nodeSize";
import { presenterFit, spread } from "./presenterType";

export { READABLE_ZOOM };

export interface FitOptions {
  padding: number;
  maxZoom?: number;
  duration?: number;
  /** presenting fits whole, as before: the projector's own sizes are the classroom's */
  whole?: boolean;
}

/** How a presenting page fits its graph: whole, close to the canvas's edges. */
export const PRESENTER_FIT = { padding: 0.04, maxZoom: 1.25, whole: true };

/** How much of the canvas's left a panel drawn over it covers (a panel marked
 * `data-covers="left"`: the overlay's), in screen px: a fit keeps the graph right of it, so
 * that no node is under the panel at the fit view. `dom`: React Flow's own element. */
function coveredLeft(dom: HTMLElement | null | undefined): number {
  const canvas = dom?.parentElement;
  if (!canvas) return 0;
  const left = canvas.getBoundingClientRect().left;
  let covered = 0;
  for (const el of canvas.querySelectorAll<HTMLElement>("[data-covers='left']")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.height) covered = Math.max(covered, r.right - left);
  }
  return covered;
}

/** Presenting without a lesson's band, the run's notice and the teacher's "Ask the class…"
 * are drawn over the canvas's top (styles.css .notice: 10 px down, about 34 px tall;
 * lesson.css .quiz.closed): the graph is fitted below them, so that a run's end covers no
 * node's name on the projector. With a lesson, the notice sits in its header line. */
const NOTICE_BAND = 48;
function noticeBand(dom: HTMLElement | null | undefined) {
  const centre = dom?.parentElement?.parentElement;
  return centre?.querySelector(":scope > .lesson") ? 0 : NOTICE_BAND;
}

type Rect4 = { left: number; top: number; right: number; bottom: number };

/** The minimap's box in the canvas's px (React Flow's element as origin), and that box moved
 * to the other corner on the right (the same margins); null without a minimap. */
function minimapBoxes(dom: HTMLElement | null | undefined, corner: MinimapCorner) {
  const map = dom?.querySelector<HTMLElement>(".react-flow__minimap");
  if (!dom || !map) return null;
  const o = dom.getBoundingClientRect();
  const r = map.getBoundingClientRect();
  if (!r.width || !r.height) return null;
  const top = r.top - o.top;
  const bottom = o.bottom - r.bottom; // the margin below it
  const here = { left: r.left - o.left, right: r.right - o.left, top, bottom: r.bottom - o.top };
  const [low, high] =
    corner === "bottom-right"
      ? [here, { ...here, top: bottom, bottom: bottom + r.height }]
      : [{ ...here, top: o.height - top - r.height, bottom: o.height - top }, here];
  return { "bottom-right": low, "top-right": high } as Record<MinimapCorner, Rect4>;
}

/** Whether something drawn over the canvas (the breadcrumbs of an opened module, a lesson, a
 * question) lies in `box` (canvas px): the minimap does not go there. */
function taken(dom: HTMLElement, box: Rect4) {
  const canvas = dom.parentElement;
  if (!canvas) return false;
  const o = dom.getBoundingClientRect();
  return [...canvas.querySelectorAll<HTMLElement>(".breadcrumbs, .lesson, .quiz, .overlay-panel")].some((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.left - o.left < box.right && box.left < r.right - o.left && r.top - o.top < box.bottom && box.top < r.bottom - o.top;
  });
}

/** Whether a node, drawn at `view` (shifted right by `inset`), lies under `box`. */
function covers(
  nodes: { position: { x: number; y: number }; measured?: { width?: number; height?: number } }[],
  view: { x: number; y: number; zoom: number },
  inset: number,
  box: { left: number; top: number; right: number; bottom: number },
) {
  return nodes.some((n) => {
    const left = inset + view.x + n.position.x * view.zoom;
    const top = view.y + n.position.y * view.zoom;
    const right = left + (n.measured?.width ?? 180) * view.zoom;
    const bottom = top + (n.measured?.height ?? 90) * view.zoom;
    return left < box.right && box.left < right && top < box.bottom && box.top < bottom;
  });
}

/** A function that fits the current graph readably (see above). */
export function useReadableFit() {
  const { fitView, getNodes, getNodesBounds, setViewport } = useReactFlow();
  const store = useStoreApi(); // read only: the canvas's size
  const fitNow = useCallback(
    (opts: FitOptions): void => {
      const nodes = getNodes();
      // nothing to fit: a fit asked for now would wait for the first node the user adds and
      // move the view away from it (an opened document is fitted by canvas/showOpened.ts)
      if (!nodes.length) return;
      // the canvas's size as laid out now: React Flow's own is taken from a resize observer,
      // a frame late when presenting has just tucked the panels away
      const { domNode } = store.getState();
      const drawn = domNode?.getBoundingClientRect();
      const { width: full, height } = drawn?.width && drawn.height ? drawn : store.getState();
      const presenting = opts.whole || usePace.getState().presenting;
      const was = useFaceType.getState().type;
      if (!presenting && was.width !== NODE_WIDTH) {
        // presenter mode left: the nodes narrow again, and the layout with them; fitted once
        // React Flow has them where they now are
        const ed = useEditor.getState();
        ed.placeOpened(spread(Object.fromEntries(ed.nodes.map((n) => [n.id, n.position])), NODE_WIDTH / was.width));
        useFaceType.getState().reset();
        return void requestAnimationFrame(() => fitNow(opts));
      }
      if (!presenting) useFaceType.getState().reset();
      // no canvas yet: React Flow's own fit waits for it
      if (!full || !height) return void fitView(opts);
      // the part of the canvas no panel covers
      const inset = Math.min(coveredLeft(domNode), full / 2);
      const width = full - inset;
      if (presenting) {
        const ed = useEditor.getState();
        const fit = { padding: opts.whole ? opts.padding : PRESENTER_FIT.padding, maxZoom: opts.maxZoom ?? 1.25 };
        const shown = { nodes: ed.nodes, edges: ed.edges, ops: ed.ops, target: ed.meta.target };
        const band = noticeBand(domNode);
        const p = presenterFit(shown, { width, height: height - band }, fit, was.width);
        useFaceType.getState().setType(p.type);
        if (Object.keys(p.moved).length) ed.placeOpened(p.moved);
        const at = { ...p.viewport, x: p.viewport.x + inset, y: p.viewport.y + band };
        return void setViewport(at, { duration: opts.duration });
      }
      const bounds = getNodesBounds(nodes);
      const fitIn = (w: number, h: number) => getViewportForBounds(bounds, w, h, 0.05, opts.maxZoom ?? 2, opts.padding);
      let whole = fitIn(width, height);
      const corners = minimapBoxes(domNode, useMinimapCorner.getState().corner);
      if (corners && domNode) {
        // the minimap where no node lies at this view: its bottom right corner, or the top
        // right; under both, the graph fitted beside it or above it in the bottom right,
        // whichever draws it larger (not where that would take it below the readable zoom:
        // a graph a pan away is worse)
        const free = (["bottom-right", "top-right"] as const).find(
          (c) => !covers(nodes, whole, inset, corners[c]) && (c === "bottom-right" || !taken(domNode, corners[c])),
        );
        useMinimapCorner.getState().set(free ?? "bottom-right");
        if (!free) {
          const map = corners["bottom-right"];
          const beside = fitIn(Math.max(map.left - inset, 1), height);
          const above = fitIn(width, Math.max(map.top, 1));
          const clear = beside.zoom >= above.zoom ? beside : above;
          if (clear.zoom >= READABLE_ZOOM || whole.zoom < READABLE_ZOOM) whole = clear;
        }
      }
      if (whole.zoom >= READABLE_ZOOM)
        return void setViewport({ ...whole, x: whole.x + inset }, { duration: opts.duration });
      const zoom = READABLE_ZOOM;
      const margin = 24;
      // along an axis that fits, centred; along one that does not, from the graph's start
      const along = (start: number, size: number, room: number) =>
        size * zoom + 2 * margin <= room ? (room - size * zoom) / 2 - start * zoom : margin - start * zoom;
      setViewport(
        { x: inset + along(bounds.x, bounds.width, width), y: along(bounds.y, bounds.height, height), zoom },
        { duration: opts.duration },
      );
    },
    [fitView, getNodes, getNodesBounds, setViewport, store],
  );
  return fitNow;
}
