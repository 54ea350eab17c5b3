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
  useStoreApi,
} from "@xyflow/react";
import { type DragEvent, type MouseEvent, useCallback, useState } from "react";
import type { OpNode, WireEdge } from "../doc/convert";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { DETAIL_ZOOM, Detailed } from "./detail";
import OpNodeView from "./OpNodeView";
import QuickAdd from "./QuickAdd";
import { dropQueuedFit, OPEN_FIT, useShowOpened } from "./showOpened";
import WireEdgeView from "./WireEdgeView";

const nodeTypes = { op: OpNodeView };
const edgeTypes = { wire: WireEdgeView };
const NO_NODES: OpNode[] = [];
const NO_EDGES: WireEdge[] = [];
export const DRAG_TYPE = "application/x-wiregrad-op";

export default function Canvas() {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const onNodesChange = useEditor((s) => s.onNodesChange);
  const onEdgesChange = useEditor((s) => s.onEdgesChange);
  const connect = useEditor((s) => s.connect);
  const readOnly = useEditor((s) => s.readOnly);
  const detailed = useStore((s) => s.transform[2] >= DETAIL_ZOOM);
  const { screenToFlowPosition } = useReactFlow();
  const flowStore = useStoreApi();
  const layingOut = useShowOpened();
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
      // a fit waiting for nodes (New, Fit on an empty canvas) would move this one off the cursor
      dropQueuedFit(flowStore);
      const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      useEditor.getState().addNode(op, { x: at.x - 60, y: at.y - 20 });
    },
    [screenToFlowPosition, flowStore],
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
      <Detailed.Provider value={detailed}>
        <ReactFlow
          nodes={layingOut ? NO_NODES : nodes}
          edges={layingOut ? NO_EDGES : edges}
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
          fitViewOptions={OPEN_FIT}
          onlyRenderVisibleElements
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={24} />
          <MiniMap pannable zoomable ariaLabel="minimap" />
          <Controls showInteractive={false} />
        </ReactFlow>
      </Detailed.Provider>
      {quickAdd && (
        <QuickAdd
          at={quickAdd}
          onPick={(op) => {
            dropQueuedFit(flowStore);
            useEditor.getState().addNode(op, quickAdd.flow);
            setQuickAdd(null);
          }}
          onClose={() => setQuickAdd(null)}
        />
      )}
    </div>
  );
}
