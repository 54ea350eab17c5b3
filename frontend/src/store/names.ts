// What a person calls each node (canvas/faces.ts readableName): the texts people read (step
// mode, toasts, the chain rule, the autograd view, the target list) use it instead of the id.
import { readableName } from "../canvas/faces";
import { useEditor } from "./editor";

// A memo of a pure function of the editor's nodes (the names of the nodes it was made from):
// it holds no state of its own, and a new node list replaces it.
let cache: { nodes: unknown; names: Map<string, string> } | null = null;

/** The name of node `id` in the document open now (the id itself for a node not there). */
export function nameOf(id: string): string {
  const nodes = useEditor.getState().nodes;
  if (!cache || cache.nodes !== nodes)
    cache = { nodes, names: new Map(nodes.map((n) => [n.id, readableName({ id: n.id, ...n.data })])) };
  return cache.names.get(id) ?? id;
}
