// Auto-layout of the canvas, layered: data flows left to right, as the texts draw it. Graphs
// people read closely get elkjs's careful layout; big ones the quick layout of
// layout/layered.ts.
import type { XYPosition } from "@xyflow/react";
import type { OpNode, WireEdge } from "../doc/convert";
import { type Box, elkLayered, layersOf, type Link, placeLayers } from "../layout/layered";

// Past this many nodes elk takes about a second or more (500 nodes: 1-2 s on a first, cold
// call, even with one crossing-minimisation sweep), while quickLayout takes a few ms with
// about as many crossings (measured on bench/_editor_graph.py's graphs: 4% more at 500 nodes).
const ELK_MAX_NODES = 150;
const GAP_X = 90; // between layers
const GAP_Y = 40; // between the nodes of a layer

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
  if (nodes.length > ELK_MAX_NODES) return quickLayout(boxes, edges);
  const at = await elkLayered(boxes, edges, { direction: "RIGHT", gapX: GAP_X, gapY: GAP_Y });
  return Object.fromEntries(at);
}

/** The linear-time layout, in a few ms for 500 nodes: longest-path layers, sources next to
 * their first reader, and three sweeps (forward, back, forward) placing each layer level
 * with the nodes it is wired to. */
export function quickLayout(boxes: Box[], links: Link[]): Record<string, XYPosition> {
  const { layers } = layersOf(
    boxes.map((b) => b.id),
    links,
    { sourcesNearReaders: true, order: "document" },
  );
  return Object.fromEntries(placeLayers(boxes, links, layers, { gapX: GAP_X, gapY: GAP_Y, sweeps: 3, flow: "right" }));
}
