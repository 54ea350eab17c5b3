// Trained values of an earlier size (docs/graph-format.md, "Trained values of an earlier
// size"): validation marks them with the code "stale_values" at their param. The editor offers,
// at the node, to take them out, so that the node makes fresh values of its new size; that is
// one ordinary edit, undone like any other.
import type { NodeProblem } from "../api/types";

export const STALE_VALUES = "stale_values";

export interface StaleOffer {
  node: string;
  /** The params to take out: all of the node's stored trained values, not only the stale
   * ones (a layer's bias of the old size is no use beside a fresh weight). */
  reset: string[];
  /** The button's words. */
  action: string;
  /** The problems' messages (PyTorch's words), one per stale param. */
  messages: string[];
}

/** The params a node keeps its trained values in. */
export function trainedParams(op: string): string[] {
  if (op === "linear") return ["weight", "bias_value"];
  return ["value"];
}

/** The offer for node `node` (its op and the name people know it by), from the problems of
 * the latest validation; null when none of them is about stale values. */
export function staleOffer(
  problems: readonly NodeProblem[],
  node: { id: string; op: string; name: string; params: Record<string, unknown> },
): StaleOffer | null {
  const mine = problems.filter((p) => p.code === STALE_VALUES && p.node === node.id && !p.edge);
  if (!mine.length) return null;
  const stored = trainedParams(node.op).filter((p) => node.params[p] != null);
  const reset = stored.length ? stored : mine.map((p) => p.param).filter((p): p is string => Boolean(p));
  const action =
    node.op === "linear"
      ? `reset the weights of ${node.name} to the new size`
      : `reset ${node.name} to fresh values of the new size`;
  return { node: node.id, reset, action, messages: [...new Set(mine.map((p) => p.message))] };
}

/** The patch that takes the offer: each stored param out (`undefined` removes it). */
export function resetPatch(offer: StaleOffer): Record<string, undefined> {
  return Object.fromEntries(offer.reset.map((p) => [p, undefined]));
}

/** The problems left once node `id`'s stale values are reset (the others stay on screen
 * until the next validation). */
export function withoutStale(problems: readonly NodeProblem[], id: string): NodeProblem[] {
  return problems.filter((p) => !(p.code === STALE_VALUES && p.node === id));
}
