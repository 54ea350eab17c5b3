// Graph documents (the server's format) <-> React Flow's nodes and edges. The document is the
// truth that is saved, exported and run; React Flow's objects carry it for the canvas.
import type { Edge, Node, NodeHandle } from "@xyflow/react";
import type { DocEdge, DocNode, GraphDocument, ModuleDef } from "../api/types";

export interface OpNodeData extends Record<string, unknown> {
  op: string;
  params: Record<string, unknown>;
  label?: string | null;
}

export type OpNode = Node<OpNodeData, "op">;
export type WireEdge = Edge<Record<string, unknown>, "wire">;

export interface DocMeta {
  name: string;
  description: string;
  target: string | null;
  lesson: GraphDocument["lesson"];
  training: GraphDocument["training"];
  version?: 1 | 2;
  modules?: ModuleDef[]; // the definitions (one open on the canvas is current in `open`)
  open?: Frame[]; // the modules opened, outermost first (doc/modules.ts); none: the graph
}

/** A module opened on the canvas: the instance and the level it was opened from (its nodes and
 * edges, as they were), which the canvas shows again when the module is closed. */
export interface Frame {
  instance: string;
  module: string;
  nodes: OpNode[];
  edges: WireEdge[];
}

export function emptyDocument(name = "untitled"): GraphDocument {
  return {
    format: "wiregrad.graph",
    version: 1,
    name,
    description: "",
    nodes: [],
    edges: [],
    target: null,
    lesson: [],
  };
}

export type SizeOf = (op: string) => { width: number; height: number; handles: NodeHandle[] } | undefined;

export function toFlowNode(n: DocNode, sizeOf?: SizeOf): OpNode {
  // a module instance's ports come from its definition: React Flow measures it when drawn
  const size = n.op === "module" ? undefined : sizeOf?.(n.op);
  return {
    id: n.id,
    type: "op",
    position: { x: n.position?.x ?? 0, y: n.position?.y ?? 0 },
    data: { op: n.op, params: { ...(n.params ?? {}) }, label: n.label ?? null },
    // what React Flow would measure, given up front: it then draws nodes and edges in one
    // render (a node whose box turns out otherwise is still measured and corrected)
    ...(size ? { measured: { width: size.width, height: size.height }, handles: size.handles } : {}),
  };
}

export function toFlowEdge(e: DocEdge): WireEdge {
  return {
    id: e.id,
    type: "wire",
    source: e.source,
    sourceHandle: e.sourcePort || "out",
    target: e.target,
    targetHandle: e.targetPort,
  };
}

/** `sizeOf` gives nodes their size and handles before they are drawn (see canvas/nodeSize.ts). */
export function fromDocument(doc: GraphDocument, sizeOf?: SizeOf) {
  return {
    nodes: doc.nodes.map((n) => toFlowNode(n, sizeOf)),
    edges: doc.edges.map(toFlowEdge),
    meta: {
      name: doc.name ?? "untitled",
      description: doc.description ?? "",
      target: doc.target ?? null,
      lesson: doc.lesson ?? [],
      training: doc.training ?? null,
      version: doc.version ?? 1,
      modules: doc.modules ?? [],
      open: [],
    } as DocMeta,
  };
}

// Positions are rounded: a document should not change because a node moved by a subpixel.
export function toDocument(nodes: OpNode[], edges: WireEdge[], meta: DocMeta): GraphDocument {
  const ids = new Set(nodes.map((n) => n.id));
  const doc: GraphDocument = {
    format: "wiregrad.graph",
    version: 1,
    name: meta.name || "untitled",
    description: meta.description ?? "",
    nodes: nodes.map((n) => {
      const out: DocNode = {
        id: n.id,
        op: n.data.op,
        params: { ...n.data.params },
        position: { x: Math.round(n.position.x), y: Math.round(n.position.y) },
      };
      if (n.data.label) out.label = n.data.label;
      return out;
    }),
    edges: edges
      .filter((e) => ids.has(e.source) && ids.has(e.target))
      .map((e) => ({
        id: e.id,
        source: e.source,
        sourcePort: e.sourceHandle || "out",
        target: e.target,
        targetPort: e.targetHandle || "input",
      })),
    target: meta.target && ids.has(meta.target) ? meta.target : null,
    lesson: meta.lesson ?? [],
  };
  if (meta.training) doc.training = meta.training; // absent, not null, when there is none
  if (meta.modules?.length) doc.modules = meta.modules;
  if (meta.modules?.length || meta.version === 2) doc.version = 2;
  return doc;
}

/** A fresh id like `add3` that no node (or edge) in `taken` has. */
export function freshId(base: string, taken: Set<string>): string {
  const stem = base.replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, 56) || "n";
  for (let i = 1; ; i++) {
    const id = `${stem}${i}`;
    if (!taken.has(id)) return id;
  }
}

export function edgeId(source: string, target: string, port: string, taken: Set<string>) {
  const base = `${source}-${target}${port === "input" ? "" : `-${port}`}`.slice(0, 60);
  if (!taken.has(base)) return base;
  return freshId(`${base}_`, taken);
}
