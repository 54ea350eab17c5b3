// The canvas: React Flow with our node and edge components, drop from the palette,
// double-click to quick-add, wiring that refuses cycles and full inputs as you drag.
import {
  Background,
  Controls,
  MiniMap,
  ReactFlow,
  type IsValidConnection,
  type OnConnectEnd,
  useReactFlow,
  useStore,
} from "@xyflow/react";
import { type CSSProperties, type DragEvent, type MouseEvent, useCallback, useEffect, useState } from "react";
import type { OpNode, WireEdge } from "../doc/convert";
import { useEditor } from "../store/editor";
import { useFaceType } from "../store/faceType";
import { useMinimapCorner } from "../store/minimapCorner";
import { useRun } from "../store/run";
import { type Detail, DetailLevel, levelOfDetail } from "./detail";
import MakeModuleDialog from "../panels/dialogs/MakeModuleDialog";
import Breadcrumbs from "../panels/onCanvas/Breadcrumbs";
import OverlayPanel from "../panels/onCanvas/OverlayPanel";
import { addInstance, openInstance } from "../store/modules";
import ModuleMenu, { type MenuAt } from "./ModuleMenu";
import NodeSwitch from "./ModuleNodeView";
import QuickAdd from "./QuickAdd";
import { DRAG_TYPE, MODULE_DRAG_TYPE } from "./dragTypes";
import { OPEN_FIT, useShowOpened } from "./showOpened";
import WireEdgeView from "./WireEdgeView";

const nodeTypes = { op: NodeSwitch }; // an op, or a module instance (ModuleNodeView.tsx)
const edgeTypes = { wire: WireEdgeView };
const NO_NODES: OpNode[] = [];
// the least canvas (px) the minimap is drawn on: it covers an eighth of this one
export const MINIMAP_ROOM = { width: 600, height: 400 };
const NO_EDGES: WireEdge[] = [];

export default function Canvas({ presenter = false }: { presenter?: boolean }) {
  const nodes = useEditor((s) => s.nodes);
  const edges = useEditor((s) => s.edges);
  const onNodesChange = useEditor((s) => s.onNodesChange);
  const onEdgesChange = useEditor((s) => s.onEdgesChange);
  const connect = useEditor((s) => s.connect);
  const readOnly = useEditor((s) => s.readOnly);
  // one string, so that the canvas re-renders only when the level or the font changes
  const minimapCorner = useMinimapCorner((s) => s.corner); // canvas/fit.ts keeps it off the graph
  // a small canvas (a notebook's widget, a narrow window) has no room for the minimap's 200 x
  // 150 px over its nodes: it goes, and the canvas keeps its own pan and zoom
  const roomForMinimap = useStore((s) => s.width >= MINIMAP_ROOM.width && s.height >= MINIMAP_ROOM.height);
  // presenting, no face larger than the nodes are sized for (store/faceType.ts)
  const cap = useFaceType((s) => (presenter ? s.type.font : undefined));
  const lod = useStore((s) => {
    const l = levelOfDetail(s.transform[2], presenter, cap);
    return `${l.detail}:${l.font}:${l.wiring ? "wire" : ""}:${l.grads ? "" : "two-lines"}`;
  });
  const [detail, font, wiring, twoLines] = lod.split(":") as [Detail, string, string, string];
  const detailed = detail === "full";
  const { screenToFlowPosition, getNodes } = useReactFlow();
  const { waits: layingOut, firstFit, dropFirstFit } = useShowOpened();
  // A node put on an empty canvas while the first fit still waits for nodes: the fit is given
  // up first, and the node added once React Flow has taken that (an effect of this render's;
  // React Flow's own, a child's, runs before it).
  const [later, setLater] = useState<(() => void) | null>(null);
  useEffect(() => {
    if (!later) return;
    setLater(null);
    later();
  }, [later]);
  const putOnCanvas = useCallback(
    (add: () => void) => {
      if (!firstFit || getNodes().length) return add();
      dropFirstFit();
      setLater(() => add);
    },
    [firstFit, getNodes, dropFirstFit],
  );
  const [menu, setMenu] = useState<MenuAt | null>(null);
  const closeMenu = useCallback(() => setMenu(null), []);
  const menuAt = (event: MouseEvent, node: string | null) => {
    event.preventDefault();
    if (useEditor.getState().readOnly) return;
    const box = (event.target as HTMLElement).closest(".canvas")?.getBoundingClientRect();
    if (box) setMenu({ x: event.clientX - box.left, y: event.clientY - box.top, node });
  };
  const [quickAdd, setQuickAdd] = useState<{ x: number; y: number; flow: { x: number; y: number } } | null>(null);
  // a wire dropped on a port that refuses it: the reason, where it was dropped, for a while
  const [refused, setRefused] = useState<{ x: number; y: number; text: string } | null>(null);
  useEffect(() => {
    if (!refused) return;
    const t = setTimeout(() => setRefused(null), 4000);
    return () => clearTimeout(t);
  }, [refused]);

  const onConnectEnd: OnConnectEnd = useCallback((event, state) => {
    if (state.isValid !== false || !state.fromNode || !state.toNode || !state.toHandle || !state.fromHandle) return;
    const fromSource = state.fromHandle.type === "source";
    const wire = {
      id: "",
      source: fromSource ? state.fromNode.id : state.toNode.id,
      sourceHandle: (fromSource ? state.fromHandle.id : state.toHandle.id) ?? "out",
      target: fromSource ? state.toNode.id : state.fromNode.id,
      targetHandle: (fromSource ? state.toHandle.id : state.fromHandle.id) ?? "input",
    };
    const text = useEditor.getState().checkConnection(wire);
    const at = "changedTouches" in event ? event.changedTouches[0] : event;
    const box = (event.target as HTMLElement).closest(".canvas")?.getBoundingClientRect();
    if (text && box) setRefused({ x: at.clientX - box.left, y: at.clientY - box.top, text });
  }, []);

  const isValidConnection: IsValidConnection<WireEdge> = useCallback(
    (c) => useEditor.getState().checkConnection(c as WireEdge) === null,
    [],
  );

  const onDrop = useCallback(
    (event: DragEvent) => {
      event.preventDefault();
      if (useEditor.getState().readOnly) return;
      const module = event.dataTransfer.getData(MODULE_DRAG_TYPE);
      if (module) {
        const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
        putOnCanvas(() => addInstance(module, { x: at.x - 60, y: at.y - 20 }));
        return;
      }
      const op = event.dataTransfer.getData(DRAG_TYPE) || event.dataTransfer.getData("text/plain");
      if (!op || !useEditor.getState().ops[op]) return;
      // a fit waiting for nodes would move this one off the cursor
      const at = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      putOnCanvas(() => useEditor.getState().addNode(op, { x: at.x - 60, y: at.y - 20 }));
    },
    [screenToFlowPosition, putOnCanvas],
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
      className={`canvas ${detailed ? "" : "zoomed-out"} ${wiring ? "" : "no-wiring"} ${twoLines} lod-${detail}`}
      style={{ "--lod-font": `${font}px` } as CSSProperties}
      onDragOver={(e) => {
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
      }}
      onDrop={onDrop}
      onDoubleClick={onDoubleClick}
      aria-label="graph canvas"
    >
      <DetailLevel.Provider value={detail}>
        <ReactFlow
          nodes={layingOut ? NO_NODES : nodes}
          edges={layingOut ? NO_EDGES : edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          onNodesChange={onNodesChange}
          onEdgesChange={onEdgesChange}
          onConnect={connect}
          onConnectEnd={onConnectEnd}
          isValidConnection={isValidConnection}
          onNodeDragStart={() => useEditor.getState().beginChange()}
          onNodeDoubleClick={(_, n) => n.data.op === "module" && openInstance(n.id)}
          onNodeContextMenu={(e, n) => {
            // a node right-clicked outside the selection is the one meant
            if (!n.selected) useEditor.getState().select([n.id]);
            menuAt(e, n.id);
          }}
          onSelectionContextMenu={(e) => menuAt(e, null)}
          onEdgeClick={(_, e) => useRun.getState().selectEdge(e.id)}
          onPaneClick={() => useRun.getState().selectEdge(null)}
          nodesDraggable={!readOnly}
          nodesConnectable={!readOnly}
          deleteKeyCode={null}
          zoomOnDoubleClick={false}
          minZoom={0.05}
          fitView={firstFit}
          fitViewOptions={OPEN_FIT}
          onlyRenderVisibleElements
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={24} />
          {!presenter && roomForMinimap && (
            <MiniMap pannable zoomable ariaLabel="minimap" position={minimapCorner} />
          )}
          <Controls showInteractive={false} />
        </ReactFlow>
        <OverlayPanel />
      </DetailLevel.Provider>
      <Breadcrumbs />
      <MakeModuleDialog />
      {menu && <ModuleMenu at={menu} onClose={closeMenu} />}
      {refused && (
        <div className="wire-refused" role="alert" aria-label="wire refused" style={{ left: refused.x, top: refused.y }}>
          {refused.text}
        </div>
      )}
      {quickAdd && (
        <QuickAdd
          at={quickAdd}
          onPick={(op) => {
            const at = quickAdd.flow;
            putOnCanvas(() => useEditor.getState().addNode(op, at));
            setQuickAdd(null);
          }}
          onClose={() => setQuickAdd(null)}
        />
      )}
    </div>
  );
}
