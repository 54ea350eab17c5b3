// Where the autograd view's nodes go: the layered layout of layout/layered.ts, with gradients
// flowing from the output's grad_fn (layer 0) toward the leaves. Teaching-sized graphs get
// elkjs, in the direction asked; bigger ones the linear-time layout, leftwards, wrapped into
// bands when they are deep.
import type { Annotations } from "../../store/annotations";
import { elkLayered, layersOf, placeLayers, type XY } from "../../layout/layered";
import type { AgDirection } from "./agViewport";

type Autograd = NonNullable<Annotations["autograd"]>;

export const WIDTH = 170; // of a node, in the view's own units
const GAP_X = 44; // between layers
const GAP_Y = 24; // between nodes of a layer
const BAND_GAP = 80; // between the bands a long graph is wrapped into
const WRAP_AFTER = 24; // layers: a deeper graph is wrapped
// elkjs's layered layout is worth its cost on teaching-sized graphs, but it grows with the
// dummy nodes long edges need (a 1,000-node chain with skip edges takes tens of seconds, on the
// main thread): past this many nodes + dummies a linear-time layering of our own is used
export const ELK_BUDGET = 120;

export interface AgPlacement {
  dir: AgDirection; // the direction drawn: the one asked, or LEFT for a big graph
  root: string | null; // the output's grad_fn: the view opens on it
  pos: Map<string, XY>;
}

/** Positions for `g`'s nodes (`heights`: each node's height; all are WIDTH wide). */
export async function agPositions(g: Autograd, heights: Map<string, number>, want: AgDirection): Promise<AgPlacement> {
  const boxes = g.nodes.map((n) => ({ id: n.id, width: WIDTH, height: heights.get(n.id)! }));
  // longest-path layers: 0 for the output's grad_fn (and other roots), growing toward the
  // leaves; each layer in the order first reached
  const { layer, layers } = layersOf(
    g.nodes.map((n) => n.id),
    g.edges,
    { order: "reached" },
  );
  let dummies = 0;
  for (const e of g.edges) dummies += Math.max(0, (layer.get(e.target) ?? 0) - (layer.get(e.source) ?? 0) - 1);
  const root = layers[0]?.[0] ?? null;
  if (g.nodes.length + dummies <= ELK_BUDGET)
    // an edge runs from a node to one of its next_functions: toward the leaves, leftwards
    // (or, in the narrow panel, downwards: the output's grad_fn at the top)
    return { dir: want, root, pos: await elkLayered(boxes, g.edges, { direction: want, gapX: GAP_X, gapY: GAP_Y }) };
  // linear time: one sweep, each node level with the average of the nodes that feed it a
  // gradient; the linear-time layout runs leftwards only
  const pos = placeLayers(boxes, g.edges, layers, {
    gapX: GAP_X,
    gapY: GAP_Y,
    sweeps: 1,
    flow: "left",
    wrapAfter: WRAP_AFTER,
    bandGap: BAND_GAP,
  });
  return { dir: "LEFT", root, pos };
}
