// How much a node says at each zoom (level of detail). Zoomed in, everything: the face, ports
// with shapes, values, gradients. Zoomed out, text that small is unreadable, and costly to lay
// out and paint on every frame of a run, so a node keeps what matters most, its name and value
// (and gradient), in a font that grows as the zoom shrinks so that it stays legible on screen;
// far out, only stripes whose colours say what arrived. Presenter mode asks for 16 px on screen.
import { createContext, useContext } from "react";

export type Detail = "full" | "compact" | "none";

/** Below this zoom the editor leaves the full text out (its 11-12 px would be under 5 px). */
export const DETAIL_ZOOM = 0.45;
/** Below this zoom nodes carry no text at all (a whole graph of hundreds of nodes). */
export const NONE_ZOOM = 0.22;
/** The smallest text on screen, in px, that compact nodes keep: in the editor, presenting. */
export const EDITOR_PX = 10;
export const PRESENTER_PX = 16;
const NODE_FONT = 12; // .op-node's own font size, in flow px
const MIN_FONT = 12;
// two lines (name, value) of this size, and the gradient's line below them (kept to 30 px,
// styles.css), fill the smallest node (95 px, nodeSize.ts)
export const MAX_FONT = 34;

export interface LevelOfDetail {
  detail: Detail;
  font: number; // flow px of the compact lines
}

export function levelOfDetail(zoom: number, presenter: boolean): LevelOfDetail {
  if (zoom < NONE_ZOOM) return { detail: "none", font: MIN_FONT };
  const px = presenter ? PRESENTER_PX : EDITOR_PX;
  if (presenter ? zoom * NODE_FONT >= px : zoom >= DETAIL_ZOOM) return { detail: "full", font: NODE_FONT };
  const font = Math.min(MAX_FONT, Math.max(MIN_FONT, Math.ceil(px / zoom)));
  return { detail: "compact", font };
}

/** The canvas's level of detail. The canvas subscribes to React Flow's zoom once and hands
 * the level down: a subscription in each of a thousand nodes and edges would run on every
 * frame of a pan. */
export const DetailLevel = createContext<Detail>("full");

export const useDetail = () => useContext(DetailLevel);
/** Whether the full text is drawn (edges draw their labels only then). */
export const useDetailed = () => useContext(DetailLevel) === "full";
