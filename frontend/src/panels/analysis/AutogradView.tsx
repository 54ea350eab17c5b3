// The autograd graph the engine recorded in the last run: grad_fn nodes (MulBackward0, ...) and
// AccumulateGrad leaves, read-only, laid out in layers (agLayout.ts) with the loss on the right
// as the texts draw it. Clicking a node selects the editor node that made it. In its panel (narrow) the
// gradients flow downwards; popped out to full screen, leftwards; either way it opens readable
// (agViewport.ts) and zooms with the wheel or its controls. With a module instance open on the
// canvas, the grad_fn nodes of its inner nodes are marked and named by their inner ids (the run
// names them by path, `b1/w`: doc/modules.ts), the others dimmed.
import {
  Controls,
  type Edge,
  getNodesBounds,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from "@xyflow/react";
import { memo, useEffect, useMemo, useRef, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { AutogradEntry } from "../../api/types";
import { formatShape } from "../../format/annotate";
import type { Annotations } from "../../store/annotations";
import { runKey, underOf, withinAny } from "../../doc/modules";
import { useEditor } from "../../store/editor";
import { revealRunNode, useScope } from "../../store/modules";
import { nameOf } from "../../store/names";
import { useRun } from "../../store/run";
import "./analysis.css";
import { agPositions, WIDTH } from "./agLayout";
import { type AgDirection, fitZoom, initialViewport } from "./agViewport";

type Autograd = NonNullable<Annotations["autograd"]>;

interface AgData extends Record<string, unknown> {
  entry: AutogradEntry;
  lines: string[];
  dir: AgDirection;
}
type AgNode = Node<AgData, "ag">;

const LINE = 17;
const PAD = 14;

/** The name of the run's node `key` as the level opened at `scope` calls it: its inner id
 * (readable name) inside the opened instance, its full path outside it. */
function ownerName(key: string, scope: string) {
  const inner = underOf(scope, key);
  return inner === null ? key : nameOf(inner);
}

/** The line saying whose a node is (null: no editor node's). */
function ownerLine(e: AutogradEntry, scope: string) {
  return e.node ? `of ${ownerName(e.node, scope)}${e.param ? `.${e.param}` : ""}` : null;
}

/** What a node says under its name: whose it is, and the shapes it holds. */
function linesOf(e: AutogradEntry): string[] {
  const lines: string[] = [];
  if (e.node) lines.push(ownerLine(e, "")!); // renamed for the level shown: scopedNodes
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
  key: number; // a fresh React Flow (and its first viewport) for each recorded graph
  dir: AgDirection;
  root: string | null; // the output's grad_fn: the view opens on it
  nodes: AgNode[];
  edges: Edge[];
}

// a layout's key for React Flow (a new layout remounts the view): a counter, no state of a graph
let layoutCount = 0;

// one layout per recorded graph and direction: a remount, or a re-render, reuses it
const layouts = new WeakMap<Autograd, Map<AgDirection, Promise<Layout>>>();

function layoutOf(g: Autograd, dir: AgDirection): Promise<Layout> {
  let byDir = layouts.get(g);
  if (!byDir) layouts.set(g, (byDir = new Map()));
  let p = byDir.get(dir);
  if (!p) {
    p = computeLayout(g, dir);
    byDir.set(dir, p);
  }
  return p;
}

async function computeLayout(g: Autograd, want: AgDirection): Promise<Layout> {
  const lines = new Map(g.nodes.map((n) => [n.id, linesOf(n)]));
  const heights = new Map(g.nodes.map((n) => [n.id, heightOf(lines.get(n.id)!)]));
  const fanOut = new Map<string, number>();
  for (const e of g.edges) fanOut.set(e.source, (fanOut.get(e.source) ?? 0) + 1);
  const { dir, root, pos } = await agPositions(g, heights, want);
  return {
    key: ++layoutCount,
    dir,
    root,
    nodes: g.nodes.map((n) => ({
      id: n.id,
      type: "ag",
      position: pos.get(n.id) ?? { x: 0, y: 0 },
      width: WIDTH,
      height: heights.get(n.id)!,
      data: { entry: n, lines: lines.get(n.id)!, dir },
      draggable: false,
      connectable: false,
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

/** What a click on the node does, said on hover. */
function titleOf(entry: AgNode["data"]["entry"]) {
  if (!entry.node) return undefined;
  if (entry.name !== "AccumulateGrad") return `click to select ${entry.node}`;
  return `click to open ${entry.node}${entry.param ? `.${entry.param}` : ""} .grad in the tensor view`;
}

const AgNodeView = memo(function AgNodeView({ data }: NodeProps<AgNode>) {
  const { entry, lines, dir } = data;
  const leaf = entry.name === "AccumulateGrad";
  const down = dir === "DOWN";
  return (
    <div className={`ag-node${leaf ? " ag-leaf" : ""}`} title={titleOf(entry)}>
      {/* gradients flow in from the loss's side (right, or top) and out toward the leaves */}
      <Handle type="target" position={down ? Position.Top : Position.Right} isConnectable={false} className="ag-handle" />
      <div className="ag-name">{entry.name}</div>
      {lines.map((l, i) => (
        <div key={i} className="ag-line">
          {l}
        </div>
      ))}
      <Handle type="source" position={down ? Position.Bottom : Position.Left} isConnectable={false} className="ag-handle" />
    </div>
  );
});

const nodeTypes = { ag: AgNodeView };

/** The layout's nodes as the level opened at `scope` shows them: whose each is, in that level's
 * names, and (in a module) which belong to the opened instance (`ag-scope`) or not (`ag-outside`). */
export function scopedNodes(nodes: AgNode[], scope: string): AgNode[] {
  return nodes.map((n) => {
    const { entry } = n.data;
    const own = ownerLine(entry, scope);
    const lines = own ? [own, ...n.data.lines.slice(1)] : n.data.lines;
    const place = !scope ? "" : entry.node && underOf(scope, entry.node) !== null ? "ag-scope" : "ag-outside";
    return {
      ...n,
      className: place || undefined,
      ariaLabel: `${entry.name}${own ? ` ${own}` : ""}`,
      data: { ...n.data, lines },
    };
  });
}

/** The first viewport, once React Flow knows its size: readable, on the output's grad_fn. */
function useReadableStart(layout: Layout, box: React.RefObject<HTMLDivElement | null>) {
  const { setViewport } = useReactFlow();
  const [fitted, setFitted] = useState<boolean | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const bounds = getNodesBounds(layout.nodes);
    const r = layout.nodes.find((n) => n.id === layout.root);
    const root = r ? { ...r.position, width: WIDTH, height: r.height ?? 0 } : null;
    const v = initialViewport(bounds, root, el.clientWidth, el.clientHeight, layout.dir);
    void setViewport({ x: v.x, y: v.y, zoom: v.zoom });
    setFitted(v.fitted);
  }, [layout, box, setViewport]);
  return fitted;
}

function Graph({ layout }: { layout: Layout }) {
  const [hover, setHover] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const fitted = useReadableStart(layout, box);
  const scope = useScope();
  const shown = useMemo(() => scopedNodes(layout.nodes, scope), [layout, scope]);
  // editor nodes selected on the canvas light up their autograd nodes (an instance: all of its)
  const selected = useEditor(
    useShallow((s) => s.nodes.filter((n) => n.selected).map((n) => runKey(scope, n.id))),
  );

  const nodes = useMemo(() => {
    if (!hover && !selected.length) return shown;
    const sel = new Set(selected);
    const near = new Set<string>();
    if (hover)
      for (const e of layout.edges) {
        if (e.source === hover) near.add(e.target);
        if (e.target === hover) near.add(e.source);
      }
    // untouched nodes keep their objects, so React Flow re-renders only the changed ones
    return shown.map((n) => {
      const owner = n.data.entry.node;
      const cls = [
        n.className ?? "",
        n.id === hover ? "ag-hover" : near.has(n.id) ? "ag-near" : "",
        owner && withinAny(sel, owner) ? "ag-selected" : "",
      ]
        .filter(Boolean)
        .join(" ");
      return cls !== (n.className ?? "") ? { ...n, className: cls } : n;
    });
  }, [shown, layout, hover, selected]);

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
    <div className="ag-flow-box" ref={box} data-fitted={fitted === null ? undefined : String(fitted)}>
      <ReactFlow<AgNode>
        id="autograd-flow"
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        minZoom={0.05}
        maxZoom={3}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={false}
        edgesFocusable={false}
        deleteKeyCode={null}
        onlyRenderVisibleElements={layout.nodes.length > 200}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_, n) => {
          // the node that made it, or the instance it is in; out of the module open if need be
          const { node: owner, name, param } = n.data.entry;
          if (owner) revealRunNode(owner);
          // a leaf's AccumulateGrad holds what backward left in its .grad: open it
          if (owner && name === "AccumulateGrad")
            useRun.getState().view({ node: owner, kind: "grad", ...(param === "weight" || param === "bias" ? { param } : {}) });
        }}
        onNodeMouseEnter={(_, n) => setHover(n.id)}
        onNodeMouseLeave={() => setHover(null)}
      >
        <Controls showInteractive={false} position="bottom-right" aria-label="autograd zoom" />
      </ReactFlow>
    </div>
  );
}

export default function AutogradView() {
  const autograd = useRun((s) => s.annotations.autograd);
  const [full, setFull] = useState(false); // popped out over the whole window
  const [laid, setLaid] = useState<{ of: Autograd; full: boolean; layout: Layout } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    if (!autograd) return;
    let live = true;
    setFailed(null);
    // the panel is narrow: downwards; the full window: whichever way shows it larger
    const dirs: AgDirection[] = full ? ["LEFT", "DOWN"] : ["DOWN"];
    Promise.all(dirs.map((d) => layoutOf(autograd, d))).then(
      (options) => {
        const zoom = (l: Layout) => fitZoom(getNodesBounds(l.nodes), innerWidth, innerHeight - 40);
        const layout = options.reduce((a, b) => (zoom(b) > zoom(a) + 0.01 ? b : a));
        if (live) setLaid({ of: autograd, full, layout });
      },
      (err: unknown) => live && setFailed(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [autograd, full]);

  useEffect(() => {
    if (!full) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setFull(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [full]);

  const current = laid && laid.of === autograd && laid.full === full ? laid.layout : null;
  const scope = useScope();
  const inScope = useMemo(
    () => (scope && autograd ? autograd.nodes.filter((n) => n.node && underOf(scope, n.node) !== null).length : 0),
    [scope, autograd],
  );
  const flow = current?.dir === "DOWN" ? "top to bottom" : "right to left";
  return (
    <section className={`ag-panel${full ? " ag-full" : ""}`} role="region" aria-label="autograd graph">
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
          <div className="ag-head">
            <p className="ag-caption">
              {autograd.nodes.length} autograd nodes; gradients flow {flow}, from the output's grad_fn to
              the AccumulateGrad leaves.
              {scope && ` ${inScope} of them belong to ${scope}, the module open on the canvas (marked).`}
            </p>
            <button type="button" className="small" onClick={() => setFull(!full)} title={full ? "Escape" : undefined}>
              {full ? "close full screen" : "full screen"}
            </button>
          </div>
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
