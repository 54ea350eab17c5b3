// Auto-layout with elkjs's layered algorithm: data flows left to right, as the texts draw it.
import type { XYPosition } from "@xyflow/react";
import type { ELK as Elk } from "elkjs/lib/elk-api";
import type { OpNode, WireEdge } from "../doc/convert";

// elk is 1.5 MB: loaded on first use, so that the editor opens without it
let elk: Promise<Elk> | null = null;
const loadElk = () =>
  (elk ??= import("elkjs/lib/elk.bundled.js").then((m) => new m.default()));

export async function layoutPositions(
  nodes: OpNode[],
  edges: WireEdge[],
): Promise<Record<string, XYPosition>> {
  const graph = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "90",
      "elk.spacing.nodeNode": "40",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      // Crossing minimisation is most of elk's time: on big graphs one sweep instead of seven
      // (and no greedy switch pass) lays out 500 nodes in ~0.3 s instead of ~1-2 s, with a few
      // more crossings; small graphs, the ones people read closely, get the thorough layout.
      ...(nodes.length > 150
        ? {
            "elk.layered.thoroughness": "1",
            "elk.layered.crossingMinimization.greedySwitch.type": "OFF",
          }
        : {}),
    },
    children: nodes.map((n) => ({
      id: n.id,
      width: n.measured?.width ?? 160,
      height: n.measured?.height ?? 80,
    })),
    edges: edges.map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
  const out = await (await loadElk()).layout(graph);
  const positions: Record<string, XYPosition> = {};
  for (const c of out.children ?? []) positions[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
  return positions;
}
