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

/** The offer at a module instance (`key`: its run path, `b` or `a/b` inside an opened module)
 * whose trained values inside (its `state`, by inner path) are of an earlier size: its inner
 * nodes' problems, and the state entries to take out so that they start from fresh values of
 * the new size, as a new instance does. Null when no state entry is stale. */
export function instanceStaleOffer(
  problems: readonly NodeProblem[],
  node: { id: string; key: string; name: string; params: Record<string, unknown> },
): StaleOffer | null {
  const lead = `${node.key}/`;
  const state = (node.params.state ?? {}) as Record<string, unknown>;
  const mine = problems.filter((p) => p.code === STALE_VALUES && p.node?.startsWith(lead) && !p.edge);
  const reset = [...new Set(mine.map((p) => p.node!.slice(lead.length)))].filter((path) => path in state);
  if (!reset.length) return null;
  const inner = reset.length === 1 ? reset[0] : `${reset.length} layers`;
  return {
    node: node.id,
    reset,
    action: `reset ${inner} of ${node.name} to fresh values of the new size`,
    messages: [...new Set(mine.map((p) => p.message))],
  };
}

/** The instance's params once its offer is taken: the stale entries out of its `state`. */
export function instanceResetPatch(offer: StaleOffer, params: Record<string, unknown>): Record<string, unknown> {
  const state = { ...((params.state ?? {}) as Record<string, unknown>) };
  for (const path of offer.reset) delete state[path];
  return { state: Object.keys(state).length ? state : undefined };
}

/** The problems left once the stale values inside instance `key` are reset. */
export function withoutStaleInside(problems: readonly NodeProblem[], key: string): NodeProblem[] {
  return problems.filter((p) => !(p.code === STALE_VALUES && (p.node === key || p.node?.startsWith(`${key}/`))));
}
