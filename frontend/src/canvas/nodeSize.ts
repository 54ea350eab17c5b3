// A node's size on the canvas, known before it is drawn. Nodes have a fixed width and keep a
// line for every result a run can write (styles.css sizes them to match), so React Flow can fit
// the view and skip off-screen nodes without measuring them first, and nothing resizes while a
// run's records arrive.
import type { OpSpec } from "../api/types";

export const NODE_WIDTH = 183; // .op-node: 180px + borders
export const LINE = 17; // px: one annotation or port line

/** Lines a node keeps for its results: value and gradient, a leaf's .grad, a linear node's
 * weight.grad and bias.grad. */
export function annoLines(spec: OpSpec | undefined) {
  return 2 + (spec?.source ? 1 : 0) + (spec?.name === "linear" ? 2 : 0);
}

export function nodeSize(spec: OpSpec | undefined) {
  const ports = Math.max(spec?.inputs.length ?? 1, spec?.outputs.length ?? 1, 1);
  // title 24 + port rows + their padding 6 + result lines + padding 3 + borders 3
  return { width: NODE_WIDTH, height: 24 + ports * LINE + 6 + annoLines(spec) * LINE + 3 + 3 };
}
