// What a run's trace records say about each node and edge, folded into lookup tables the
// canvas reads. Pure: the live run and step mode's replay both fold records through here.
import type { AutogradEntry, Summary, TraceRecord, VersionError } from "../api/types";

export interface Annotations {
  values: Record<string, Summary>; // node id -> its value
  cached: Record<string, true>; // node ids whose value came from the forward cache
  nodeGrads: Record<string, Summary>; // node id -> its total gradient
  leafGrads: Record<string, Summary>; // "node" or "node.weight" -> the leaf's .grad
  edgeGrads: Record<string, Summary>; // edge id -> what the consumer sent back along it
  notTaken: Record<string, string>; // edge id -> the `if` port whose branch did not run
  skipped: Record<string, string>; // node id -> why it did not run
  versions: Record<string, number>; // node id -> its tensor's version (with in-place ops)
  error: ({ node: string | null; message: string; type: string } & VersionError) | null;
  autograd: {
    nodes: AutogradEntry[];
    edges: { source: string; target: string; input: number }[];
  } | null;
}

export const emptyAnnotations = (): Annotations => ({
  values: {},
  cached: {},
  nodeGrads: {},
  leafGrads: {},
  edgeGrads: {},
  notTaken: {},
  skipped: {},
  versions: {},
  error: null,
  autograd: null,
});

/** `a` with `records` applied. Each table that changes is copied once per call, so a batch
 * of records costs one copy and components subscribed to untouched entries keep their props. */
export function applyRecords(a: Annotations, records: TraceRecord[]): Annotations {
  const next = { ...a };
  const copied = new Set<keyof Annotations>();
  const table = <K extends "values" | "cached" | "nodeGrads" | "leafGrads" | "edgeGrads" | "notTaken" | "skipped" | "versions">(
    k: K,
  ): Annotations[K] => {
    if (!copied.has(k)) {
      copied.add(k);
      (next as Annotations)[k] = { ...a[k] } as Annotations[K];
    }
    return next[k];
  };
  for (const r of records) {
    switch (r.kind) {
      case "value":
        table("values")[r.node] = r.summary;
        if (r.cached) table("cached")[r.node] = true;
        if (r.version !== undefined) table("versions")[r.node] = r.version;
        break;
      case "node_grad":
        table("nodeGrads")[r.node] = r.summary;
        break;
      case "leaf_grad":
        table("leafGrads")[r.param ? `${r.node}.${r.param}` : r.node] = r.summary;
        break;
      case "edge_grad":
        table("edgeGrads")[r.edge] = r.summary;
        break;
      case "branch_not_taken":
        table("notTaken")[r.edge] = r.port;
        break;
      case "skipped":
        table("skipped")[r.node] = r.reason;
        break;
      case "error":
        {
          const { kind: _kind, ...error } = r; // a version error's fields included
          next.error = error;
        }
        break;
      case "autograd":
        next.autograd = { nodes: r.nodes, edges: r.edges };
        break;
    }
  }
  return next;
}

/** The node or edge a record is about: what step mode highlights. */
export function recordFocus(r: TraceRecord): { node?: string; edge?: string } {
  switch (r.kind) {
    case "edge_grad":
    case "branch_not_taken":
      return { edge: r.edge };
    case "autograd":
      return {};
    case "error":
      return r.node ? { node: r.node } : {};
    default:
      return { node: r.node };
  }
}

/** A sentence for step mode's caption. */
export function describeRecord(r: TraceRecord, name: (id: string) => string = (id) => id): string {
  switch (r.kind) {
    case "value":
      return `forward: ${name(r.node)} computed${r.cached ? " (cached)" : ""}${
        r.version !== undefined ? ` (version ${r.version})` : ""
      }`;
    case "node_grad":
      return `backward: total gradient of ${name(r.node)}`;
    case "edge_grad":
      return `backward: ${name(r.target)} sends a gradient back to ${name(r.source)}`;
    case "leaf_grad":
      return `backward: ${name(r.node)}${r.param ? `.${r.param}` : ""}.grad accumulated`;
    case "branch_not_taken":
      return `${name(r.node)}: the '${r.port}' branch does not run`;
    case "skipped":
      return `${name(r.node)} skipped: ${r.reason}`;
    case "error":
      return `error${r.node ? ` at ${name(r.node)}` : ""}: ${r.message}`;
    case "autograd":
      return "the autograd graph the engine recorded";
  }
}
