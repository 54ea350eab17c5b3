// The autograd graph the engine recorded in the last run: grad_fn nodes (MulBackward0, ...) and
// AccumulateGrad leaves, read-only, laid out by elkjs with the loss on the right as the texts
// draw it. Clicking a node selects the editor node that made it.
import {
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
} from "@xyflow/react";
import ELK from "elkjs/lib/elk.bundled.js";
import { memo, useEffect, useMemo, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { AutogradEntry } from "../api/types";
import { formatShape } from "../format/annotate";
import type { Annotations } from "../store/annotations";
import { useEditor } from "../store/editor";
import { nameOf } from "../store/names";
import { useRun } from "../store/run";
import "./analysis.css";

type Autograd = NonNullable<Annotations["autograd"]>;

interface AgData extends Record<string, unknown> {
  entry: AutogradEntry;
  lines: string[];
}
type AgNode = Node<AgData, "ag">;

const WIDTH = 180;
const LINE = 16;
const PAD = 14;

/** What a node says under its name: whose it is, and the shapes it holds. */
function linesOf(e: AutogradEntry): string[] {
  const lines: string[] = [];
  if (e.node) lines.push(`of ${nameOf(e.node)}${e.param ? `.${e.param}` : ""}`);
  if (e.variable_shape) lines.push(`variable ${formatShape(e.variable_shape)}`);
  if (e.saved?.length) {
    const shapes = e.saved.map((s) => formatShape(s.shape));
    const shown = shapes.length > 4 ? [...shapes.slice(0, 4), `+${shapes.length - 4}`] : shapes;
    lines.push(`saved ${shown.join(", ")}`);
  }
  return lines;
}

const heightOf = (lines: string[]) => PAD + LINE * (1 + lines.length);

interface Layout {
  key: number; // a fresh React Flow (and its fitView) for each recorded graph
  nodes: AgNode[];
  edges: Edge[];
}

let layoutCount = 0;

const elk = new ELK();
// one layout per recorded graph: a remount, or a re-render, reuses it
const layouts = new WeakMap<Autograd, Promise<Layout>>();

function layoutOf(g: Autograd): Promise<Layout> {
  let p = layouts.get(g);
  if (!p) {
    p = computeLayout(g);
    layouts.set(g, p);
  }
  return p;
}

type XY = { x: number; y: number };

const GAP_X = 60; // between layers
const GAP_Y = 24; // between nodes of a layer
const BAND_GAP = 80; // between the bands a long graph is wrapped into
const WRAP_AFTER = 24; // layers: a deeper graph is wrapped
// elkjs's layered layout is worth its cost on teaching-sized graphs, but it grows with the
// dummy nodes long edges need (a 1,000-node chain with skip edges takes tens of seconds, on the
// main thread): past this many nodes + dummies a linear-time layering of our own is used
const ELK_BUDGET = 120;

/** Longest-path layers: 0 for the output's grad_fn (and other roots), growing toward the
 * leaves; and in each layer its nodes in the order first reached. */
function layering(g: Autograd): { layer: Map<string, number>; layers: string[][] } {
  const ids = new Set(g.nodes.map((n) => n.id));
  const indeg = new Map(g.nodes.map((n) => [n.id, 0]));
  const out = new Map<string, string[]>(g.nodes.map((n) => [n.id, []]));
  for (const e of g.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) continue;
    out.get(e.source)!.push(e.target);
    indeg.set(e.target, indeg.get(e.target)! + 1);
  }
  const layer = new Map<string, number>();
  const queue = g.nodes.filter((n) => indeg.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i];
    const lv = layer.get(v)!;
    for (const t of out.get(v)!) {
      if ((layer.get(t) ?? -1) < lv + 1) layer.set(t, lv + 1);
      const d = indeg.get(t)! - 1;
      indeg.set(t, d);
      if (d === 0) queue.push(t);
    }
  }
  // a cycle (autograd graphs have none) would leave nodes unreached: put them last
  let max = 0;
  for (const l of layer.values()) max = Math.max(max, l);
  const layers: string[][] = [];
  for (const v of [...queue, ...g.nodes.map((n) => n.id).filter((id) => !layer.has(id))]) {
    if (!layer.has(v)) layer.set(v, max + 1);
    (layers[layer.get(v)!] ??= []).push(v);
  }
  return { layer, layers: Array.from(layers, (l) => l ?? []) };
}

/** Linear-time positions: layers right to left, each node placed level with the average of
 * the nodes that feed it a gradient, pushed apart where they would overlap. A long graph (a
 * deep chain) is wrapped into bands of layers, one under the other, like lines of text, so it
 * keeps a screen-like shape instead of a thin strip. */
function quickPositions(g: Autograd, heights: Map<string, number>, layers: string[][]): Map<string, XY> {
  const parents = new Map<string, string[]>(g.nodes.map((n) => [n.id, []]));
  for (const e of g.edges) parents.get(e.target)?.push(e.source);
  const top = new Map<string, number>();
  const centre = (id: string) => top.get(id)! + heights.get(id)! / 2;
  const extent: { lo: number; hi: number }[] = [];
  for (const ids of layers) {
    const want = ids.map((id, i) => {
      const ps = parents.get(id)!.filter((p) => top.has(p));
      return {
        id,
        y: ps.length ? ps.reduce((a, p) => a + centre(p), 0) / ps.length : i * (heights.get(id)! + GAP_Y),
      };
    });
    want.sort((a, b) => a.y - b.y);
    let bottom = -Infinity;
    let drift = 0;
    const placed = want.map(({ id, y }) => {
      const h = heights.get(id)!;
      const t = Math.max(y - h / 2, bottom + GAP_Y);
      bottom = t + h;
      drift += t - (y - h / 2);
      return { id, t };
    });
    const shift = placed.length ? drift / placed.length : 0; // centre the layer on its targets
    let lo = Infinity;
    let hi = -Infinity;
    for (const { id, t } of placed) {
      top.set(id, t - shift);
      lo = Math.min(lo, t - shift);
      hi = Math.max(hi, t - shift + heights.get(id)!);
    }
    extent.push({ lo, hi });
  }

  // layers per band: about twice as wide as tall overall, and no wrapping for shallow graphs
  const L = layers.length;
  const colW = WIDTH + GAP_X;
  const meanH = extent.reduce((a, e) => a + (e.hi - e.lo), 0) / Math.max(1, L) + BAND_GAP;
  const perBand = L <= WRAP_AFTER ? L : Math.max(WRAP_AFTER / 2, Math.ceil(Math.sqrt((2 * L * meanH) / colW)));
  const pos = new Map<string, XY>();
  let offset = 0;
  for (let b = 0; b * perBand < L; b++) {
    const band = layers.slice(b * perBand, (b + 1) * perBand);
    const ext = extent.slice(b * perBand, (b + 1) * perBand);
    const lo = Math.min(...ext.map((e) => e.lo));
    const hi = Math.max(...ext.map((e) => e.hi));
    band.forEach((ids, k) => {
      const x = (Math.min(perBand, L) - 1 - k) * colW;
      for (const id of ids) pos.set(id, { x, y: top.get(id)! - lo + offset });
    });
    offset += hi - lo + BAND_GAP;
  }
  return pos;
}

async function elkPositions(g: Autograd, heights: Map<string, number>): Promise<Map<string, XY>> {
  const out = await elk.layout({
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      // an edge runs from a node to one of its next_functions: toward the leaves, leftwards
      "elk.direction": "LEFT",
      "elk.layered.spacing.nodeNodeBetweenLayers": String(GAP_X),
      "elk.spacing.nodeNode": String(GAP_Y),
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
    },
    children: g.nodes.map((n) => ({ id: n.id, width: WIDTH, height: heights.get(n.id)! })),
    edges: g.edges.map((e, i) => ({ id: `e${i}`, sources: [e.source], targets: [e.target] })),
  });
  return new Map((out.children ?? []).map((c) => [c.id, { x: c.x ?? 0, y: c.y ?? 0 }]));
}

async function computeLayout(g: Autograd): Promise<Layout> {
  const lines = new Map(g.nodes.map((n) => [n.id, linesOf(n)]));
  const heights = new Map(g.nodes.map((n) => [n.id, heightOf(lines.get(n.id)!)]));
  const fanOut = new Map<string, number>();
  for (const e of g.edges) fanOut.set(e.source, (fanOut.get(e.source) ?? 0) + 1);
  const { layer, layers } = layering(g);
  let dummies = 0;
  for (const e of g.edges) dummies += Math.max(0, (layer.get(e.target) ?? 0) - (layer.get(e.source) ?? 0) - 1);
  const pos =
    g.nodes.length + dummies <= ELK_BUDGET
      ? await elkPositions(g, heights)
      : quickPositions(g, heights, layers);
  return {
    key: ++layoutCount,
    nodes: g.nodes.map((n) => ({
      id: n.id,
      type: "ag",
      position: pos.get(n.id) ?? { x: 0, y: 0 },
      width: WIDTH,
      height: heights.get(n.id)!,
      data: { entry: n, lines: lines.get(n.id)! },
      draggable: false,
      connectable: false,
      ariaLabel: `${n.name}${n.node ? ` of ${nameOf(n.node)}` : ""}`,
    })),
    edges: g.edges.map((e, i) => ({
      id: `e${i}`,
      source: e.source,
      target: e.target,
      // which next_functions slot, where a node has several
      label: (fanOut.get(e.source) ?? 0) > 1 ? String(e.input) : undefined,
      className: "ag-edge",
      markerEnd: { type: MarkerType.ArrowClosed, color: "#dc2626", width: 14, height: 14 },
    })),
  };
}

const AgNodeView = memo(function AgNodeView({ data }: NodeProps<AgNode>) {
  const { entry, lines } = data;
  const leaf = entry.name === "AccumulateGrad";
  return (
    <div className={`ag-node${leaf ? " ag-leaf" : ""}`} title={entry.node ? `click to select ${nameOf(entry.node)}` : undefined}>
      {/* gradients flow in on the right (from the loss) and out on the left (to the leaves) */}
      <Handle type="target" position={Position.Right} isConnectable={false} className="ag-handle" />
      <div className="ag-name">{entry.name}</div>
      {lines.map((l, i) => (
        <div key={i} className="ag-line">
          {l}
        </div>
      ))}
      <Handle type="source" position={Position.Left} isConnectable={false} className="ag-handle" />
    </div>
  );
});

const nodeTypes = { ag: AgNodeView };

function Graph({ layout }: { layout: Layout }) {
  const [hover, setHover] = useState<string | null>(null);
  // editor nodes selected on the canvas light up their autograd nodes
  const selected = useEditor(
    useShallow((s) => s.nodes.filter((n) => n.selected).map((n) => n.id)),
  );

  const nodes = useMemo(() => {
    if (!hover && !selected.length) return layout.nodes;
    const sel = new Set(selected);
    const near = new Set<string>();
    if (hover)
      for (const e of layout.edges) {
        if (e.source === hover) near.add(e.target);
        if (e.target === hover) near.add(e.source);
      }
    // untouched nodes keep their objects, so React Flow re-renders only the changed ones
    return layout.nodes.map((n) => {
      const cls = [
        n.id === hover ? "ag-hover" : near.has(n.id) ? "ag-near" : "",
        n.data.entry.node && sel.has(n.data.entry.node) ? "ag-selected" : "",
      ]
        .filter(Boolean)
        .join(" ");
      return cls ? { ...n, className: cls } : n;
    });
  }, [layout, hover, selected]);

  const edges = useMemo(
    () =>
      hover
        ? layout.edges.map((e) =>
            e.source === hover || e.target === hover ? { ...e, className: "ag-edge ag-edge-hover" } : e,
          )
        : layout.edges,
    [layout, hover],
  );

  return (
    <ReactFlow<AgNode>
      id="autograd-flow"
      nodes={nodes}
      edges={edges}
      nodeTypes={nodeTypes}
      fitView
      fitViewOptions={{ maxZoom: 1, padding: 0.1 }}
      minZoom={0.05}
      nodesDraggable={false}
      nodesConnectable={false}
      elementsSelectable={false}
      edgesFocusable={false}
      deleteKeyCode={null}
      onlyRenderVisibleElements={layout.nodes.length > 200}
      proOptions={{ hideAttribution: true }}
      onNodeClick={(_, n) => {
        const owner = n.data.entry.node;
        if (owner) useEditor.getState().select([owner]);
      }}
      onNodeMouseEnter={(_, n) => setHover(n.id)}
      onNodeMouseLeave={() => setHover(null)}
    />
  );
}

export default function AutogradView() {
  const autograd = useRun((s) => s.annotations.autograd);
  const [laid, setLaid] = useState<{ of: Autograd; layout: Layout } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    if (!autograd) return;
    let live = true;
    setFailed(null);
    layoutOf(autograd).then(
      (layout) => live && setLaid({ of: autograd, layout }),
      (err: unknown) => live && setFailed(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [autograd]);

  const current = laid && laid.of === autograd ? laid.layout : null;
  return (
    <section className="ag-panel" role="region" aria-label="autograd graph">
      {!autograd ? (
        <p className="ag-empty">Run backward to see the graph autograd recorded</p>
      ) : failed ? (
        <p className="ag-empty" role="alert">
          Could not lay out the autograd graph: {failed}
        </p>
      ) : !current ? (
        <p className="ag-empty">Laying out {autograd.nodes.length} nodes…</p>
      ) : (
        <>
          <p className="ag-caption">
            {autograd.nodes.length} autograd nodes; gradients flow right to left, from the output's
            grad_fn to the AccumulateGrad leaves.
          </p>
          <div className="ag-flow">
            {/* its own provider: a second, independent React Flow store beside the editor's */}
            <ReactFlowProvider key={current.key}>
              <Graph layout={current} />
            </ReactFlowProvider>
          </div>
        </>
      )}
    </section>
  );
}
