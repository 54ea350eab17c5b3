// Each newly opened document is shown whole, fitted to the canvas. One whose nodes all sit on
// one spot (a generated graph, a document written without positions) is laid out first,
// before it is drawn at all: the canvas then draws its nodes once, where they belong, instead
// of a pile and then the graph (for 500 nodes, each drawing costs a few hundred ms). One stored
// as a long chain that no zoom showing it whole can read (a model's 13 layers in one row) is
// wrapped into rows before it is painted (canvas/layout.ts).
import { useReactFlow, useStoreApi } from "@xyflow/react";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { useEditor } from "../store/editor";
import { READABLE_ZOOM, useReadableFit } from "./fit";
import { isStacked, layoutPositions, wrappedIfUnreadable } from "./layout";

/** How an opened document is fitted: whole, with a margin, small graphs not blown up, and big
 * ones not shrunk below the readable zoom (canvas/fit.ts). */
export const OPEN_FIT = { padding: 0.15, maxZoom: 1.25, minZoom: READABLE_ZOOM };

/** Where an empty graph is shown: at zoom 1, its origin at the canvas's top left. */
export const EMPTY_VIEW = { x: 0, y: 0, zoom: 1 };

export interface ShowOpened {
  /** The document's layout is being computed: the canvas draws nothing meanwhile. */
  waits: boolean;
  /** ReactFlow's `fitView` prop: the first document is fitted before it is drawn (React Flow
   * holds that fit until there are nodes to fit). */
  firstFit: boolean;
  /** Give up that first fit (an empty document opened, or a node about to be put on an empty
   * canvas): otherwise the first node dropped there re-centres and zooms the view, and lands
   * away from the cursor. React Flow takes the prop's change in an effect of its own, which
   * runs before the canvas's effects of the same render. */
  dropFirstFit(): void;
}

/** The canvas's size as laid out now (React Flow's own comes from a resize observer, and
 * under load was a frame or more late: a long chain then wrapped into rows for another size,
 * one time in a few). */
function frameOf(rf: { domNode: Element | null; width: number; height: number }) {
  const r = rf.domNode?.getBoundingClientRect();
  return r?.width && r.height ? { width: r.width, height: r.height } : { width: rf.width, height: rf.height };
}

/** Lays out and fits each opened document. */
export function useShowOpened(): ShowOpened {
  const opened = useEditor((s) => s.opened);
  const fit = useReadableFit();
  const store = useStoreApi(); // read only: the canvas's size
  const { setViewport } = useReactFlow();
  const [firstFit, setFirstFit] = useState(true);
  const dropFirstFit = useCallback(() => setFirstFit(false), []);
  // decided in the render that brings the document, which must not draw it if it waits
  const [open, setOpen] = useState({ opened: -1, waits: false });
  let waits = open.waits;
  if (open.opened !== opened) {
    waits = isStacked(useEditor.getState().nodes);
    setOpen({ opened, waits });
  }

  useEffect(() => {
    if (!waits) return;
    let current = true; // another document may open before this layout is done
    const { nodes, edges } = useEditor.getState();
    layoutPositions(nodes, edges, frameOf(store.getState())) // long chains wrap to the canvas's shape
      .then((positions) => current && useEditor.getState().placeOpened(positions))
      .catch((e: Error) => useEditor.getState().notify(`cannot lay out the graph: ${e.message}`, "error"))
      .finally(() => current && setOpen({ opened, waits: false }));
    return () => {
      current = false;
    };
  }, [opened, waits, store]);

  // before the paint: the long row is never seen
  useLayoutEffect(() => {
    if (waits) return;
    const { nodes, edges } = useEditor.getState();
    const wrapped = wrappedIfUnreadable(nodes, edges, frameOf(store.getState()), READABLE_ZOOM);
    if (wrapped) useEditor.getState().placeOpened(wrapped);
  }, [opened, waits, store]);

  const fitted = useRef(-1);
  useEffect(() => {
    if (waits || fitted.current === opened) return;
    fitted.current = opened;
    if (!useEditor.getState().nodes.length) {
      // nothing to fit: a fit now would wait for the first node the user adds, and move it.
      // (Before the first document, opened 0, the `fitView` prop's fit waits for it.) An
      // empty graph (New) starts at zoom 1: the last graph's zoom (0.4 for a model) would
      // draw the new nodes tiny
      if (opened > 0) {
        dropFirstFit();
        requestAnimationFrame(() => setViewport(EMPTY_VIEW));
      }
      return;
    }
    // after React Flow has taken the new nodes into its store. (On the first open, React
    // Flow's own `fitView` has fitted them before drawing them, with the same options.)
    requestAnimationFrame(() => fit(OPEN_FIT));
  }, [opened, waits, fit, setViewport, dropFirstFit]);

  return { waits, firstFit, dropFirstFit };
}
