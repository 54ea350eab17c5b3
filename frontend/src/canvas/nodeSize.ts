// A node's size and the places of its handles on the canvas, known before it is drawn. Nodes
// have a fixed width, rows of fixed height, and keep a line for every result a run can write
// (styles.css sizes them to match), so React Flow needs no measuring pass: it can fit the view,
// skip off-screen nodes and draw the edges in the same render as the nodes, and nothing resizes
// while a run's records arrive. A node is as tall as its face needs (textWrap.ts counts its
// lines): at full detail its title wraps in the node's 12 px monospace; zoomed out to the
// readable floor of the fit view (fit.ts) its large face (detail.ts) wraps in 22 px type with
// the value and gradient lines under it. The node takes the taller of the two at every zoom,
// so that nothing moves or re-routes as the zoom changes and no face hangs out of its node.
import { type NodeHandle, Position, type XYPosition } from "@xyflow/react";
import { type Box, freeShift } from "../layout/freeSpace";
import type { OpSpec } from "../api/types";
import type { OpNode, WireEdge } from "../doc/convert";
import { allFaces, displayName } from "./faces";
import { EDITOR_PX, READABLE_ZOOM } from "./detail";
import { type Measure, measureText, wrappedLines } from "./textWrap";

export const NODE_WIDTH = 180; // .op-node, borders included
const BORDER = 1; // .op-node: whole pixels, so that the size is the same at every device pixel ratio
const TITLE = 23; // .op-node-title of one line, its bottom border included
const TITLE_LINE = 14; // .op-node-title's line height
const PADDING = 16; // .op-node-title's and .lod's, left and right
// the fonts of styles.css: the title's monospace, and the large face of .lod (body's family)
const TITLE_FONT = "12px ui-monospace, monospace";
const FACE_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** The large face's type at the fit view's readable floor: 11 px on screen at zoom 0.5. */
export const FACE_FONT = Math.ceil(EDITOR_PX / READABLE_ZOOM);

/** The type a node's large face is sized for: the font of its lines in flow px, the weight
 * of its value and gradient lines (600 presenting: styles.css `.app.presenter .lod`), and the
 * node's width. */
export interface FaceType {
  font: number;
  weight: number;
  width: number;
}
/** The editor's: 11 px on screen at the fit view's floor, in nodes 180 px wide. Presenting,
 * canvas/presenterType.ts picks the font that keeps 16 px on screen at the projector's fit,
 * and nodes wide enough for it. */
export const EDITOR_TYPE: FaceType = { font: FACE_FONT, weight: 400, width: NODE_WIDTH };
/** The width of the text inside a node `width` px wide. */
const textWidth = (width: number) => width - 2 * BORDER - PADDING;
export const PRESENTER_WEIGHT = 600;
/** The widest lines a run can write on a large face (format/annotate.ts formatCompact: a mean
 * of 4 significant digits at most 10 characters wide), sized for before any run so that a
 * number is never cut: the value's line and the gradient's. */
const WIDEST_VALUE = "μ -0.0001234";
const WIDEST_GRAD = "∇ μ -0.0001234";
const MIN_LINE_FONT = 8;
const LOD_PAD = 2; // .lod: above and below
const LOD_NAME_LINE = 1.2; // .lod-name's line height, in em; .lod-line's is 1
const PORTS_PAD = 3; // .op-node-ports: above and below the port rows
const PORT_ROW = 15; // .port
const HANDLE = 9; // .port .react-flow__handle
export const LINE = 17; // px: one annotation line

/** Lines a node keeps for its results: value and gradient, a leaf's .grad, a layer's
 * weight.grad and bias.grad (linear's; conv2d, batch_norm, layer_norm and embedding have them
 * where their stored state has a `weight` or `bias_value`). */
export function annoLines(spec: OpSpec | undefined) {
  const params = new Set((spec?.params ?? []).map((p) => p.name));
  const layer = spec?.name === "linear" ? 2 : Number(params.has("weight")) + Number(params.has("bias_value"));
  return 2 + (spec?.source ? 1 : 0) + layer;
}

/** What OpNodeView draws for an op the registry does not know: no inputs, one output. */
export function portsOf(spec: OpSpec | undefined) {
  return { inputs: spec?.inputs ?? [], outputs: spec?.outputs ?? ["out"] };
}

/** A handle centred on the left or right border of its port's row, as React Flow would
 * measure it. */
function handle(type: "source" | "target", id: string, row: number, title: number, width: number): NodeHandle {
  const centreY = BORDER + title + PORTS_PAD + row * PORT_ROW + PORT_ROW / 2;
  const centreX = type === "target" ? BORDER : width - BORDER;
  return {
    id,
    type,
    position: type === "target" ? Position.Left : Position.Right,
    x: centreX - HANDLE / 2,
    y: centreY - HANDLE / 2,
    width: HANDLE,
    height: HANDLE,
  };
}

/** A face as the node draws it: its name (bold), the rest of the line, and the target's mark. */
export interface FaceLine {
  face: string;
  name: string;
  target?: boolean;
}

function faceRuns(f: FaceLine, font: (weight: number) => string) {
  const rest = f.face.startsWith(f.name) ? f.face.slice(f.name.length) : f.face;
  const name = f.face.startsWith(f.name) ? f.name : "";
  return [
    { text: name, font: font(700), names: true },
    { text: rest + (f.target ? " ◎" : ""), font: font(400), names: true },
  ];
}

/** The height of the title line at full detail: one line, or as many as the face wraps to. */
export function titleHeight(f: FaceLine | undefined, measure: Measure = measureText, width = NODE_WIDTH): number {
  if (!f) return TITLE;
  const lines = wrappedLines(faceRuns(f, () => TITLE_FONT), textWidth(width), measure);
  return TITLE + (lines - 1) * TITLE_LINE;
}

const lineFontOf = (type: FaceType, size = type.font) => `${type.weight} ${size}px ${FACE_FAMILY}`;

/** The lines a value or gradient line takes on the large face in `type`: it wraps at its
 * spaces, so that a number goes whole to the next line (styles.css `.lod-line`). */
export function numberLines(text: string, type: FaceType, measure: Measure = measureText): number {
  return wrappedLines([{ text, font: lineFontOf(type) }], textWidth(type.width), measure);
}

/** The lines the large face keeps for the value and for the gradient in `type`. */
export function reservedLines(type: FaceType, measure: Measure = measureText) {
  return { value: numberLines(WIDEST_VALUE, type, measure), grad: numberLines(WIDEST_GRAD, type, measure) };
}

/** The font (flow px) a value or gradient line is drawn in on the large face: `type`'s, or,
 * for a text longer than the lines kept for it (a vector's three numbers), the largest that
 * fits them with every number whole on a line: never cut, never hanging out of the node. */
export function lineFont(text: string, lines: number, type: FaceType, measure: Measure = measureText): number {
  const words = text.split(/ +/).filter(Boolean);
  for (let size = type.font; size > MIN_LINE_FONT; size--) {
    const font = lineFontOf(type, size);
    const whole = words.every((w) => measure(w, font) <= textWidth(type.width));
    if (whole && wrappedLines([{ text, font }], textWidth(type.width), measure) <= lines) return size;
  }
  return MIN_LINE_FONT;
}

const ANNO_PX = 12; // .anno: the result lines at full detail, in the title's monospace

/** The font size (px) of a result line at full detail (.anno: one line of the node's 12 px
 * monospace, a line kept for it): 12, or, for a longer text (a big tensor's shape and mean, a
 * layer's weight.grad), the size at which it fits the node's width, so that no number ends in
 * an ellipsis (the tooltip and the tensor viewer write it large). */
export function annoFontSize(text: string, width = NODE_WIDTH, measure: Measure = measureText): number {
  const wide = measure(text, TITLE_FONT);
  return wide <= textWidth(width) ? ANNO_PX : Math.floor((ANNO_PX * textWidth(width) * 10) / wide) / 10;
}

/** The height the large face needs in `type` (by default the editor's, at the readable
 * floor): its wrapped name and op, then the lines kept for the value and the gradient
 * (whether or not a run has written them). */
export function compactHeight(f: FaceLine, measure: Measure = measureText, type: FaceType = EDITOR_TYPE): number {
  const lines = wrappedLines(faceRuns(f, (w) => `${w} ${type.font}px ${FACE_FAMILY}`), textWidth(type.width), measure);
  const kept = reservedLines(type, measure);
  return 2 * BORDER + LOD_PAD + Math.ceil(lines * LOD_NAME_LINE * type.font) + (kept.value + kept.grad) * type.font;
}

/** The node's box and handles; with its face, as tall as the face needs at every zoom (its
 * large face in `type`). */
export function nodeSize(
  spec: OpSpec | undefined,
  face?: FaceLine,
  measure: Measure = measureText,
  type: FaceType = EDITOR_TYPE,
) {
  const { inputs, outputs } = portsOf(spec);
  // an op keeps two port rows even with one input: its compact face (canvas/detail.ts) needs
  // the room for three lines of large type; a leaf has its .grad line for that
  const rows = Math.max(inputs.length, outputs.length, spec?.source ? 1 : 2);
  const title = titleHeight(face, measure, type.width);
  const full = 2 * BORDER + title + 2 * PORTS_PAD + rows * PORT_ROW + annoLines(spec) * LINE;
  const height = face ? Math.max(full, compactHeight(face, measure, type)) : full;
  const handles = [
    ...inputs.map((p, i) => handle("target", p.name, i, title, type.width)),
    ...outputs.map((o, i) => handle("source", o, i, title, type.width)),
  ];
  return { width: type.width, height, title, handles };
}

/** `nodes` with the sizes and handles their faces need (a document as it opens: its layout
 * and its fit view use them before anything is drawn). A module instance is measured when
 * drawn, and keeps what it has. */
export function sizedToFaces(
  nodes: OpNode[],
  edges: WireEdge[],
  ops: Record<string, OpSpec>,
  target: string | null,
  type: FaceType = EDITOR_TYPE,
): OpNode[] {
  const faces = allFaces({ nodes, edges }, ops);
  return nodes.map((n) => {
    if (n.data.op === "module") return n;
    const face = { face: faces[n.id], name: displayName({ id: n.id, ...n.data }), target: n.id === target };
    const { width, height, handles } = nodeSize(ops[n.data.op], face, measureText, type);
    return { ...n, measured: { width, height }, handles };
  });
}

/** A node's box on the canvas: its place and the size it was measured at (or will be drawn
 * at); a module instance not yet drawn counts as a node of three rows. */
export function boxOf(n: { position: XYPosition; measured?: { width?: number; height?: number } }): Box {
  return { x: n.position.x, y: n.position.y, width: n.measured?.width ?? NODE_WIDTH, height: n.measured?.height ?? 90 };
}

/** `added` moved together to the nearest place where they cover none of `others` (layout/
 * freeSpace.ts): what is unpacked or pasted lands in free space, beside where it was asked for. */
export function placedFree<N extends { position: XYPosition; measured?: { width?: number; height?: number } }>(
  added: N[],
  others: readonly N[],
): N[] {
  const shift = freeShift(added.map(boxOf), others.map(boxOf));
  if (!shift.x && !shift.y) return added;
  return added.map((n) => ({ ...n, position: { x: n.position.x + shift.x, y: n.position.y + shift.y } }));
}
