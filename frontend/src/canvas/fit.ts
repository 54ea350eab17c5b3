// The fit view, readable: a graph that fits the canvas is shown whole; one that would only fit
// below READABLE_ZOOM (where a face would need more lines than its node has: canvas/detail.ts
// keeps the text at 11 px on screen by growing its font as the zoom shrinks) is shown from
// its start (top left) at READABLE_ZOOM, and the rest is a pan away. A view of specks that
// "fits" is no view of the graph. A panel over the canvas's left side (the overlay's) is kept
// clear of the graph.
import { getViewportForBounds, useReactFlow, useStoreApi } from "@xyflow/react";
import { useCallback } from "react";

/** The smallest zoom a fit goes to in the editor. At 0.5 a face's text is 22 flow px for 11 px
 * on screen: its name and op wrap to a few lines inside the node's 180 px. */
export const READABLE_ZOOM = 0.5;

export interface FitOptions {
  padding: number;
  maxZoom?: number;
  duration?: number;
  /** presenting fits whole, as before: the projector's own sizes are the classroom's */
  whole?: boolean;
}

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

/** A function that fits the current graph readably (see above). */
export function useReadableFit() {
  const { fitView, getNodes, getNodesBounds, setViewport } = useReactFlow();
  const store = useStoreApi(); // read only: the canvas's size
  return useCallback(
    (opts: FitOptions) => {
      const nodes = getNodes();
      // nothing to fit: a fit asked for now would wait for the first node the user adds and
      // move the view away from it (an opened document is fitted by canvas/showOpened.ts)
      if (!nodes.length) return;
      const { width: full, height, domNode } = store.getState();
      // no canvas yet: React Flow's own fit waits for it
      if (opts.whole || !full || !height) return void fitView(opts);
      // the part of the canvas no panel covers
      const inset = Math.min(coveredLeft(domNode), full / 2);
      const width = full - inset;
      const bounds = getNodesBounds(nodes);
      const whole = getViewportForBounds(bounds, width, height, 0.05, opts.maxZoom ?? 2, opts.padding);
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
}
