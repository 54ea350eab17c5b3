// A node's size and the places of its handles on the canvas, known before it is drawn. Nodes
// have a fixed width, rows of fixed height, and keep a line for every result a run can write
// (styles.css sizes them to match), so React Flow needs no measuring pass: it can fit the view,
// skip off-screen nodes and draw the edges in the same render as the nodes, and nothing resizes
// while a run's records arrive.
import { type NodeHandle, Position } from "@xyflow/react";
import type { OpSpec } from "../api/types";

export const NODE_WIDTH = 180; // .op-node, borders included
const BORDER = 1; // .op-node: whole pixels, so that the size is the same at every device pixel ratio
const TITLE = 23; // .op-node-title, its bottom border included
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
function handle(type: "source" | "target", id: string, row: number): NodeHandle {
  const centreY = BORDER + TITLE + PORTS_PAD + row * PORT_ROW + PORT_ROW / 2;
  const centreX = type === "target" ? BORDER : NODE_WIDTH - BORDER;
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

export function nodeSize(spec: OpSpec | undefined) {
  const { inputs, outputs } = portsOf(spec);
  // an op keeps two port rows even with one input: its compact face (canvas/detail.ts) needs
  // the room for three lines of large type; a leaf has its .grad line for that
  const rows = Math.max(inputs.length, outputs.length, spec?.source ? 1 : 2);
  const height = 2 * BORDER + TITLE + 2 * PORTS_PAD + rows * PORT_ROW + annoLines(spec) * LINE;
  const handles = [
    ...inputs.map((p, i) => handle("target", p.name, i)),
    ...outputs.map((o, i) => handle("source", o, i)),
  ];
  return { width: NODE_WIDTH, height, handles };
}
