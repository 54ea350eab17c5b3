// Auto-layout, layered: data flows left to right, as the texts draw it. Graphs people read
// closely get elkjs's careful layout; big ones a quick layout of our own.
import type { XYPosition } from "@xyflow/react";
import type { ELK as Elk } from "elkjs/lib/elk-api";
import type { OpNode, WireEdge } from "../doc/convert";
import { type Box, quickLayout } from "./quickLayout";

// Past this many nodes elk takes about a second or more (500 nodes: 1-2 s on a first, cold
// call, even with one crossing-minimisation sweep), while quickLayout takes a few ms with
// about as many crossings (measured on bench/_editor_graph.py's graphs: 4% more at 500 nodes).
const ELK_MAX_NODES = 150;

// elk is 1.5 MB: loaded on first use, so that the editor opens without it
let elk: Promise<Elk> | null = null;
const loadElk = () =>
  (elk ??= import("elkjs/lib/elk.bundled.js").then((m) => new m.default()));

/** Whether the nodes all sit on one spot, as in a generated graph or a document written
 * without positions (they default to (0, 0)): such a graph needs laying out to be read. */
export function isStacked(nodes: OpNode[]) {
  return nodes.length > 1 && nodes.every((n) => n.position.x === nodes[0].position.x && n.position.y === nodes[0].position.y);
}

export async function layoutPositions(
  nodes: OpNode[],
  edges: WireEdge[],
): Promise<Record<string, XYPosition>> {
  const boxes = nodes.map((n) => ({
    id: n.id,
    width: n.measured?.width ?? 160,
    height: n.measured?.height ?? 80,
  }));
  return nodes.length > ELK_MAX_NODES ? quickLayout(boxes, edges) : elkLayout(boxes, edges);
}

async function elkLayout(boxes: Box[], edges: WireEdge[]): Promise<Record<string, XYPosition>> {
  const graph = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.spacing.nodeNode": "40",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
    },
    children: boxes,
    edges: edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
  const out = await (await loadElk()).layout(graph);
  const positions: Record<string, XYPosition> = {};
  for (const c of out.children ?? []) positions[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
  return positions;
}
