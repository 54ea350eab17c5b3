// "Train again" starts from fresh weights (issue 35): a lesson says "watch the loss fall", and
// a second training that went on from the first one's trained values would show a flat line.
// The seeded initial values are the document's params before its first training (a layer's
// weight left null is drawn from the training's seed, so null is fresh too); a node whose
// params the teacher changed after a training keeps them: only values a training wrote back
// and nobody touched since are put back.
import type { GraphDocument } from "../api/types";

export type NodeParams = Record<string, Record<string, unknown>>;

/** Every node's params, by node id. */
export function paramsOf(doc: GraphDocument): NodeParams {
  return Object.fromEntries(doc.nodes.map((n) => [n.id, n.params]));
}

/** JSON with sorted keys: two param objects compare by content, not key order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]]))
      : x,
  );
}

/** Whether a node's params `now` are the values a training wrote (`trained`) and differ from
 * those it had before (`before`): nobody has changed them since. */
export function isTrained(now: Record<string, unknown>, before: Record<string, unknown>, trained?: Record<string, unknown>) {
  if (!trained) return false;
  const at = canonical(now);
  return at === canonical(trained) && at !== canonical(before);
}

/** `doc` with the trained values (`written` by the last training's write-back, unchanged
 * since) back at their values before training (`seeded`); null when nothing is to change. */
export function freshDocument(doc: GraphDocument, seeded: NodeParams, written: NodeParams): GraphDocument | null {
  let changed = false;
  const nodes = doc.nodes.map((n) => {
    const before = seeded[n.id];
    const trained = written[n.id];
    if (!before || !trained) return n;
    if (!isTrained(n.params, before, trained)) return n;
    changed = true;
    return { ...n, params: { ...before } };
  });
  return changed ? { ...doc, nodes } : null;
}
