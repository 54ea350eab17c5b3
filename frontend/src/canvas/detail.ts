// How much a node says at each zoom (level of detail). Zoomed in, everything: the face, ports
// with shapes, values, gradients, at the node's own 12 px. As soon as that 12 px would be under
// the legible size on screen (11 px in the editor, 16 px presenting), a node keeps what matters
// most, its face line (name first), value and gradient, in a font that grows as the zoom
// shrinks so that it stays legible on screen, and drops the secondary lines (port names,
// shapes, .grad lines, edge labels). Its handles stay drawn and wireable down to WIRE_ZOOM;
// below that they are specks. Far out, only stripes whose colours say what arrived.
import { createContext, useContext } from "react";

export type Detail = "full" | "compact" | "none";

/** Below this zoom handles are not drawn (they would be 4 px targets). */
export const WIRE_ZOOM = 0.45;
/** Below this zoom nodes carry no text at all (a whole graph of hundreds of nodes). */
export const NONE_ZOOM = 0.22;
/** The smallest text on screen, in px, that nodes keep: in the editor, presenting. */
export const EDITOR_PX = 11;
/** The smallest zoom a fit goes to in the editor (fit.ts). At 0.5 a face's text is 22 flow px
 * for 11 px on screen: its name and op wrap to a few lines inside the node's 180 px. */
export const READABLE_ZOOM = 0.5;
export const PRESENTER_PX = 16;
const NODE_FONT = 12; // .op-node's own font size, in flow px
const MIN_FONT = 12;
// two lines (name, value) of this size fill the smallest node (95 px, nodeSize.ts): 38 px
// keeps 11 px on screen down to a zoom of 0.29, below the fit view of 50 nodes on a 1500x950
// page (0.32). Up to THREE_LINES the gradient's line fits below them; above, it is dropped.
export const MAX_FONT = 38;
export const THREE_LINES = 30;

export interface LevelOfDetail {
  detail: Detail;
  font: number; // flow px of the compact lines
  grads: boolean; // room for the gradient's line under name and value
  wiring: boolean; // handles drawn and wireable
}

/** `cap`: the largest font the faces may take (presenting: the font the nodes are sized for,
 * store/faceType.ts), so that no face outgrows its node. */
export function levelOfDetail(zoom: number, presenter: boolean, cap = MAX_FONT): LevelOfDetail {
  const wiring = zoom >= WIRE_ZOOM;
  if (zoom < NONE_ZOOM) return { detail: "none", font: MIN_FONT, grads: false, wiring };
  const px = presenter ? PRESENTER_PX : EDITOR_PX;
  // a hair of slack: a fit view that lands on 0.9166 for 11/12 is not worth a different face
  if (zoom * NODE_FONT >= px - 0.01) return { detail: "full", font: NODE_FONT, grads: true, wiring };
  const font = Math.min(MAX_FONT, cap, Math.max(MIN_FONT, Math.ceil(px / zoom)));
  // (capped, the nodes are sized for the font, their gradient's line included)
  return { detail: "compact", font, grads: font <= THREE_LINES || cap < MAX_FONT, wiring };
}

/** The smallest zoom at which `levelOfDetail` keeps `px` on screen: below it the font is capped. */
export const legibleDownTo = (px: number) => px / MAX_FONT;

/** The canvas's level of detail. The canvas subscribes to React Flow's zoom once and hands
 * the level down: a subscription in each of a thousand nodes and edges would run on every
 * frame of a pan. */
export const DetailLevel = createContext<Detail>("full");

export const useDetail = () => useContext(DetailLevel);
/** Whether the full text is drawn (edges draw their labels only then). */
export const useDetailed = () => useContext(DetailLevel) === "full";
