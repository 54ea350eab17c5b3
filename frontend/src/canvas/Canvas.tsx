// The canvas: React Flow with our node and edge components, drop from the palette,
// double-click to quick-add, wiring that refuses cycles and full inputs as you drag.
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  type IsValidConnection,
  useReactFlow,
  useStore,
} from "@xyflow/react";
import { type DragEvent, type MouseEvent, useCallback, useEffect, useRef, useState } from "react";
import type { WireEdge } from "../doc/convert";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import OpNodeView from "./OpNodeView";
import QuickAdd from "./QuickAdd";
import WireEdgeView, { DETAIL_ZOOM } from "./WireEdgeView";

const nodeTypes = { op: OpNodeView };
const edgeTypes = { wire: WireEdgeView };
export const DRAG_TYPE = "application/x-wiregrad-op";

export default function Canvas() {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const onNodesChange = useEditor((s) => s.onNodesChange);
  const onEdgesChange = useEditor((s) => s.onEdgesChange);
  const connect = useEditor((s) => s.connect);
  const readOnly = useEditor((s) => s.readOnly);
  const detailed = useStore((s) => s.transform[2] >= DETAIL_ZOOM);
  const { screenToFlowPosition, fitView } = useReactFlow();
  useFitOnOpen(fitView);
  const [quickAdd, setQuickAdd] = useState<{ x: number; y: number; flow: { x: number; y: number } } | null>(null);

  const isValidConnection: IsValidConnection<WireEdge> = useCallback(
    (c) => useEditor.getState().checkConnection(c as WireEdge) === null,
    [],
  );

  const onDrop = useCallback(
    (event: DragEvent) => {
      event.preventDefault();
      if (useEditor.getState().readOnly) return;
      const op = event.dataTransfer.getData(DRAG_TYPE) || event.dataTransfer.getData("text/plain");
      if (!op || !useEditor.getState().ops[op]) return;
      const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      useEditor.getState().addNode(op, { x: at.x - 60, y: at.y - 20 });
    },
    [screenToFlowPosition],
  );

  const onDoubleClick = useCallback(
    (event: MouseEvent) => {
      if (!(event.target as HTMLElement).classList.contains("react-flow__pane")) return;
      const flow = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      setQuickAdd({ x: event.clientX, y: event.clientY, flow });
    },
    [screenToFlowPosition],
  );

  return (
    <div
      className={`canvas ${detailed ? "" : "zoomed-out"}`}
      onDragOver={(e) => {
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
      }}
      onDrop={onDrop}
      onDoubleClick={onDoubleClick}
      aria-label="graph canvas"
    >
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={connect}
        isValidConnection={isValidConnection}
        onNodeDragStart={() => useEditor.getState().beginChange()}
        onEdgeClick={(_, e) => useRun.getState().selectEdge(e.id)}
        onPaneClick={() => useRun.getState().selectEdge(null)}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        minZoom={0.05}
        fitView
        onlyRenderVisibleElements
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={24} />
        <MiniMap pannable zoomable ariaLabel="minimap" />
        <Controls showInteractive={false} />
      </ReactFlow>
      {quickAdd && (
        <QuickAdd
          at={quickAdd}
          onPick={(op) => {
            useEditor.getState().addNode(op, quickAdd.flow);
            setQuickAdd(null);
          }}
          onClose={() => setQuickAdd(null)}
        />
      )}
    </div>
  );
}

/** Fit the view to each newly opened document. Nodes carry their size from the start
 * (nodeSize.ts), so this needs no measuring pass, and off-screen nodes are never drawn. */
function useFitOnOpen(fitView: ReturnType<typeof useReactFlow>["fitView"]) {
  const opened = useEditor((s) => s.opened);
  const fitted = useRef(-1);
  useEffect(() => {
    if (fitted.current === opened) return;
    fitted.current = opened;
    // after React Flow has taken the new nodes into its store
    requestAnimationFrame(() => fitView({ padding: 0.15, maxZoom: 1.25 }));
  }, [opened, fitView]);
}
