// Which node backward starts from, when the user has not said: the document's target, else the
// last node whose last value was a scalar, else the last sink (a node nothing reads).
import type { Summary } from "../api/types";

interface N {
  id: string;
}
interface E {
  source: string;
}

export function defaultTarget(
  nodes: N[],
  edges: E[],
  values: Record<string, Summary>,
  docTarget: string | null,
): string | null {
  if (docTarget && nodes.some((n) => n.id === docTarget)) return docTarget;
  for (let i = nodes.length - 1; i >= 0; i--) if (values[nodes[i].id]?.numel === 1) return nodes[i].id;
  const read = new Set(edges.map((e) => e.source));
  for (let i = nodes.length - 1; i >= 0; i--) if (!read.has(nodes[i].id)) return nodes[i].id;
  return null;
}

/** The nodes worth offering as targets: scalars of the last run first, then the sinks. */
export function targetChoices(nodes: N[], edges: E[], values: Record<string, Summary>): string[] {
  const read = new Set(edges.map((e) => e.source));
  const scalar = nodes.filter((n) => values[n.id]?.numel === 1).map((n) => n.id);
  const sinks = nodes.filter((n) => !read.has(n.id) && !scalar.includes(n.id)).map((n) => n.id);
  const rest = nodes.map((n) => n.id).filter((id) => !scalar.includes(id) && !sinks.includes(id));
  return [...scalar, ...sinks, ...rest];
}
