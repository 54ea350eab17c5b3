// A run sent as an edit of the last graph the server ran for this page (docs/protocol.md,
// `run` with `edit`): when only some nodes' params, positions or labels changed, only those
// nodes travel, and the server reads only them again. Anything else (a node or edge added or
// removed, an op, the target, the name) and the whole graph is sent.
import type { DocNode, GraphDocument, NodeProblem } from "./types";

/** The nodes of `graph` that differ from `base`'s, when nothing else differs; else null. */
export function nodeEdits(base: GraphDocument, graph: GraphDocument): DocNode[] | null {
  if (base.nodes.length !== graph.nodes.length || base.edges.length !== graph.edges.length) {
    return null;
  }
  const { nodes: _bn, edges: baseEdges, ...baseRest } = base;
  const { nodes: _gn, edges: edges, ...rest } = graph;
  if (JSON.stringify(baseRest) !== JSON.stringify(rest)) return null;
  if (JSON.stringify(baseEdges) !== JSON.stringify(edges)) return null;
  const changed: DocNode[] = [];
  for (let i = 0; i < graph.nodes.length; i++) {
    const was = base.nodes[i];
    const now = graph.nodes[i];
    if (was.id !== now.id || was.op !== now.op) return null;
    if (JSON.stringify(was) !== JSON.stringify(now)) changed.push(now);
  }
  return changed;
}

export type RunAck =
  | { run_id: string }
  | { error: string; node_errors?: NodeProblem[]; code?: string };

/** Sends runs, each as an edit of the last one the server started when it can be. */
export class RunSender {
  // the graph of the last run the server started for this connection
  private last: { runId: string; graph: GraphDocument } | null = null;

  constructor(private readonly send: (payload: Record<string, unknown>) => Promise<RunAck>) {}

  /** `payload`: the run message without its graph (mode, target, options). */
  async run(graph: GraphDocument, payload: Record<string, unknown>): Promise<RunAck> {
    const last = this.last;
    const nodes = last ? nodeEdits(last.graph, graph) : null;
    let ack: RunAck;
    if (last && nodes) {
      ack = await this.send({ ...payload, edit: { base: last.runId, nodes } });
      if ("code" in ack && ack.code === "unknown_base") {
        ack = await this.send({ ...payload, graph }); // the server forgot that run
      }
    } else {
      ack = await this.send({ ...payload, graph });
    }
    if ("run_id" in ack) this.last = { runId: ack.run_id, graph };
    return ack;
  }

  /** A new connection is a new client: the server has no graph of it. */
  forget() {
    this.last = null;
  }
}
