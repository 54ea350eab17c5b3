// Zoomed far out, text is unreadable, and costly to lay out and paint on every frame of a run:
// below DETAIL_ZOOM the canvas draws no labels, and nodes and wires say what arrived on them
// by their colour.
import { createContext, useContext } from "react";

/** Below this zoom, node and edge labels are not drawn. */
export const DETAIL_ZOOM = 0.45;

/** Whether the canvas is zoomed in enough for text. The canvas subscribes to React Flow's zoom
 * once and hands the answer down: a subscription in each of a thousand nodes and edges would
 * run on every frame of a pan. */
export const Detailed = createContext(true);

export const useDetailed = () => useContext(Detailed);
