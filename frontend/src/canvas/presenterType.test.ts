import { describe, expect, it } from "vitest";
import type { OpSpec } from "../api/types";
import type { OpNode, WireEdge } from "../doc/convert";
import { PRESENTER_PX } from "./detail";
import { NODE_WIDTH, sizedToFaces } from "./nodeSize";
import { presenterFit, spread } from "./presenterType";

// (no canvas under vitest: text is measured at 0.6 em a glyph, textWrap.ts)
const tanh: OpSpec = {
  name: "tanh",
  category: "activations",
  doc: "",
  inputs: [{ name: "input", optional: false, variadic: false, doc: "" }],
  outputs: ["out"],
  params: [],
  source: false,
};
const OPS = { tanh };
const FIT = { padding: 0.04, maxZoom: 1.25 };

/** `n` tanh nodes, each reading the one before, in a column `gap` px apart (or a row). */
function chain(n: number, gap: number, row = false) {
  const nodes = Array.from(
    { length: n },
    (_, i) =>
      ({
        id: `hidden_layer_${i}`,
        type: "op",
        position: row ? { x: i * gap, y: 0 } : { x: 0, y: i * gap },
        data: { op: "tanh", params: {} },
      }) as OpNode,
  );
  const edges = nodes.slice(1).map(
    (t, i) => ({ id: `e${i}`, source: nodes[i].id, target: t.id, targetHandle: "input" }) as WireEdge,
  );
  return { nodes, edges };
}

/** The pairs of nodes that lie on one another at `fit`'s sizes, where it puts them. */
function overlaps(nodes: OpNode[], edges: WireEdge[], fit: ReturnType<typeof presenterFit>) {
  const boxes = sizedToFaces(nodes, edges, OPS, null, fit.type).map((n) => ({
    id: n.id,
    ...(fit.moved[n.id] ?? n.position),
    width: n.measured!.width!,
    height: n.measured!.height!,
  }));
  return boxes.flatMap((a, i) =>
    boxes
      .slice(i + 1)
      .filter((b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
      .map((b) => [a.id, b.id]),
  );
}

describe("the projector's type", () => {
  it("is the smallest font that is 16 px on screen at the fit of nodes sized for it", () => {
    const { nodes, edges } = chain(4, 200, true);
    const fit = presenterFit({ nodes, edges, ops: OPS, target: null }, { width: 1000, height: 600 }, FIT);
    const drawn = Math.ceil(PRESENTER_PX / fit.viewport.zoom);
    expect(drawn).toBeLessThanOrEqual(fit.type.font); // 16 px on screen, no larger than sized for
    expect(fit.type.font * fit.viewport.zoom).toBeGreaterThanOrEqual(PRESENTER_PX);
    expect(fit.type.width).toBe(NODE_WIDTH); // a row has room: the editor's width
    // one font less would not be 16 px at that zoom
    expect(Math.ceil(PRESENTER_PX / fit.viewport.zoom)).toBeGreaterThan(fit.type.font - 1);
  });

  it("pushes apart nodes that grew into one another", () => {
    // a column 96 px apart (a tanh node is 95 px tall in the editor): nodes sized for the
    // projector's type outgrow the gaps
    const { nodes, edges } = chain(6, 96);
    const fit = presenterFit({ nodes, edges, ops: OPS, target: null }, { width: 900, height: 700 }, FIT);
    expect(Object.keys(fit.moved).length).toBeGreaterThan(0);
    expect(Math.ceil(PRESENTER_PX / fit.viewport.zoom)).toBeLessThanOrEqual(fit.type.font);
    expect(overlaps(nodes, edges, fit)).toEqual([]);
  });

  it("gives a graph no font can show whole at 16 px the one that draws it largest", () => {
    const { nodes, edges } = chain(40, 100);
    const fit = presenterFit({ nodes, edges, ops: OPS, target: null }, { width: 1000, height: 600 }, FIT);
    expect(Math.ceil(PRESENTER_PX / fit.viewport.zoom)).toBeGreaterThan(fit.type.font);
    expect(fit.type.font * fit.viewport.zoom).toBeLessThan(PRESENTER_PX);
    expect(overlaps(nodes, edges, fit)).toEqual([]); // still no node on another
  });
});

describe("spread", () => {
  it("widens a layout from its leftmost node, and narrows it back", () => {
    const at = { a: { x: 100, y: 0 }, b: { x: 320, y: 5 }, c: { x: 540, y: 10 } };
    const wide = spread(at, 1.5);
    expect(wide).toEqual({ a: { x: 100, y: 0 }, b: { x: 430, y: 5 }, c: { x: 760, y: 10 } });
    expect(spread(wide, 1 / 1.5)).toEqual(at);
    expect(spread(at, 1)).toBe(at);
  });
});
