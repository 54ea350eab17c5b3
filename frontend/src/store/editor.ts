// The graph being edited: nodes, edges and document fields, selection-aware edit actions, and
// undo/redo. Components read slices with selectors so that an edit re-renders only what it
// touches. Every action that changes the document records one undo step first.
import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  type Connection,
  type EdgeChange,
  type NodeChange,
  type XYPosition,
} from "@xyflow/react";
import { create } from "zustand";
import type { GraphDocument, NodeProblem, OpSpec } from "../api/types";
import {
  type DocMeta,
  edgeId,
  emptyDocument,
  freshId,
  fromDocument,
  type OpNode,
  type WireEdge,
} from "../doc/convert";
import { closeAll, composeDocument } from "../doc/modules";
import { asNewInstances } from "../doc/moduleDefs";
import { nodeSize, placedFree, sizedToFaces } from "../canvas/nodeSize";
import { History } from "../doc/history";
import { connectionProblem } from "../doc/wiring";

interface Snapshot {
  nodes: OpNode[];
  edges: WireEdge[];
  meta: DocMeta;
}

interface Clipboard {
  nodes: OpNode[];
  edges: WireEdge[];
}

export interface EditorState extends Snapshot {
  ops: Record<string, OpSpec>;
  opList: OpSpec[];
  graphId: string | null; // the stored graph this document was opened from or saved to
  revision: number | null;
  dirty: boolean; // changed since it was opened or saved
  problems: NodeProblem[]; // validation problems from the last refused run
  notice: { text: string; tone: "info" | "error" } | null;
  canUndo: boolean;
  canRedo: boolean;
  clipboard: Clipboard | null;
  opened: number; // counts documents opened: the canvas fits the view to each new one
  readOnly: boolean; // following a room: the owner drives, edits are refused

  setOps(ops: OpSpec[]): void;
  load(
    doc: GraphDocument,
    from?: {
      graphId?: string | null;
      revision?: number | null;
      dirty?: boolean;
      keepView?: boolean;
      keepSelection?: boolean; // the same nodes and edges stay selected, where they still are
    },
  ): void;
  document(): GraphDocument;
  onNodesChange(changes: NodeChange<OpNode>[]): void;
  onEdgesChange(changes: EdgeChange<WireEdge>[]): void;
  connect(c: Connection): string | null;
  checkConnection(c: Connection | WireEdge): string | null;
  addNode(op: string, position: XYPosition): string;
  setParam(id: string, name: string, value: unknown): void;
  /** Several params of one node in one undoable edit (`undefined` takes a param out). */
  setParams(id: string, patch: Record<string, unknown>): void;
  setLabel(id: string, label: string): void;
  setMeta(meta: Partial<DocMeta>): void;
  setPositions(positions: Record<string, XYPosition>): void;
  /** Positions an opened document needs to be shown (canvas/showOpened.ts): opening is not an
   * edit, so this is no undo step and leaves the document unchanged in the user's eyes. */
  placeOpened(positions: Record<string, XYPosition>): void;
  beginChange(): void;
  select(ids: string[]): void;
  /** Mark wire `edge` (null: none) as the one selected wire, nodes left as they are (a room
   * owner's selection on a follower's canvas). */
  markSelectedEdge(edge: string | null): void;
  deleteSelection(): void;
  copySelection(): void;
  paste(offset?: XYPosition): void;
  duplicateSelection(): void;
  undo(): void;
  redo(): void;
  setProblems(problems: NodeProblem[]): void;
  notify(text: string, tone?: "info" | "error"): void;
  /** The notice has been shown long enough. */
  dismissNotice(): void;
  markSaved(graphId: string, revision: number): void;
  /** A copy of no stored graph, unsaved (a room's graph, forked): saving makes a new graph. */
  markUnsavedCopy(): void;
  setReadOnly(on: boolean): void;
  applyTrainedValues(doc: GraphDocument): void;
  /** Another level of the graph at once (store/modules.ts: a module made, opened, closed,
   * unpacked); an `edit` is one undo step. */
  setLevel(level: Partial<Snapshot>, edit: boolean): void;
}

const history = new History<Snapshot>();

export const useEditor = create<EditorState>()((set, get) => {
  /** Record the current state as an undo step, then apply `patch` as a document change. */
  const change = (patch: Partial<EditorState>) => {
    if (get().readOnly) {
      get().notify("you are following a room: fork it to edit your own copy", "error");
      return;
    }
    const { nodes, edges, meta } = get();
    history.push({ nodes, edges, meta });
    set({ ...patch, dirty: true, canUndo: true, canRedo: false });
  };

  const sizeOf = (op: string) => nodeSize(get().ops[op]);
  const initialSize = (op: string) => {
    const { width, height } = sizeOf(op);
    return { initialWidth: width, initialHeight: height };
  };

  const takenIds = () => {
    const { nodes, edges } = get();
    return new Set<string>([...nodes.map((n) => n.id), ...edges.map((e) => e.id)]);
  };

  return {
    ...fromDocument(emptyDocument()),
    ops: {},
    opList: [],
    graphId: null,
    revision: null,
    dirty: false,
    problems: [],
    notice: null,
    canUndo: false,
    canRedo: false,
    clipboard: null,
    opened: 0,
    readOnly: false,

    setOps(ops) {
      set({ ops: Object.fromEntries(ops.map((o) => [o.name, o])), opList: ops });
    },

    load(doc, from = {}) {
      history.clear();
      const loaded = fromDocument(doc);
      // each node as tall as its face needs, before it is drawn: the layout and the fit view
      // of a graph just opened use these sizes
      loaded.nodes = sizedToFaces(loaded.nodes, loaded.edges, get().ops, loaded.meta.target);
      if (from.keepSelection) {
        const nodes = new Set(get().nodes.filter((n) => n.selected).map((n) => n.id));
        const edges = new Set(get().edges.filter((e) => e.selected).map((e) => e.id));
        loaded.nodes = loaded.nodes.map((n) => (nodes.has(n.id) ? { ...n, selected: true } : n));
        loaded.edges = loaded.edges.map((e) => (edges.has(e.id) ? { ...e, selected: true } : e));
      }
      set({
        ...loaded,
        graphId: from.graphId ?? null,
        revision: from.revision ?? null,
        dirty: from.dirty ?? false,
        problems: [],
        canUndo: false,
        canRedo: false,
        opened: get().opened + (from.keepView ? 0 : 1),
      });
    },

    document() {
      const { nodes, edges, meta } = get();
      return composeDocument(nodes, edges, meta); // the graph, with the modules open written back
    },

    onNodesChange(changes) {
      // removals are undoable edits; selection and measurement are not edits at all; moves are
      // recorded once, when a drag starts (beginChange from the canvas)
      const edits = changes.some((c) => c.type === "remove" || c.type === "add");
      const moved = changes.some((c) => c.type === "position" && !c.dragging);
      const nodes = applyNodeChanges(changes, get().nodes);
      if (edits) {
        const removed = new Set(changes.filter((c) => c.type === "remove").map((c) => c.id));
        const edges = get().edges.filter((e) => !removed.has(e.source) && !removed.has(e.target));
        change({ nodes, edges });
      } else set(moved ? { nodes, dirty: true } : { nodes });
    },

    onEdgesChange(changes) {
      const edges = applyEdgeChanges(changes, get().edges);
      if (changes.some((c) => c.type === "remove" || c.type === "add")) change({ edges });
      else set({ edges });
    },

    checkConnection(c) {
      const target = get().nodes.find((n) => n.id === c.target);
      return connectionProblem(get().edges, c, target ? get().ops[target.data.op] : undefined);
    },

    connect(c) {
      const problem = get().checkConnection(c);
      if (problem) {
        get().notify(problem, "error");
        return problem;
      }
      const port = c.targetHandle ?? "input";
      const edge: WireEdge = {
        id: edgeId(c.source, c.target, port, takenIds()),
        type: "wire",
        source: c.source,
        sourceHandle: c.sourceHandle ?? "out",
        target: c.target,
        targetHandle: port,
      };
      change({ edges: addEdge(edge, get().edges) });
      return null;
    },

    addNode(op, position) {
      const id = freshId(op === "if" ? "if_" : op, takenIds());
      const node: OpNode = {
        id,
        type: "op",
        position,
        data: { op, params: {}, label: null },
        ...initialSize(op),
      };
      const nodes = get().nodes.map((n) => (n.selected ? { ...n, selected: false } : n));
      change({ nodes: [...nodes, { ...node, selected: true }] });
      return id;
    },

    setParam(id, name, value) {
      change({
        nodes: get().nodes.map((n) => {
          if (n.id !== id) return n;
          const params = { ...n.data.params };
          if (value === undefined) delete params[name];
          else params[name] = value;
          return { ...n, data: { ...n.data, params } };
        }),
      });
    },

    setParams(id, patch) {
      change({
        nodes: get().nodes.map((n) => {
          if (n.id !== id) return n;
          const params = { ...n.data.params };
          for (const [name, value] of Object.entries(patch)) {
            if (value === undefined) delete params[name];
            else params[name] = value;
          }
          return { ...n, data: { ...n.data, params } };
        }),
      });
    },

    setLabel(id, label) {
      change({
        nodes: get().nodes.map((n) =>
          n.id === id ? { ...n, data: { ...n.data, label: label || null } } : n,
        ),
      });
    },

    setMeta(meta) {
      change({ meta: { ...get().meta, ...meta } });
    },

    setPositions(positions) {
      change({
        nodes: get().nodes.map((n) => (positions[n.id] ? { ...n, position: positions[n.id] } : n)),
      });
    },

    placeOpened(positions) {
      set({ nodes: get().nodes.map((n) => (positions[n.id] ? { ...n, position: positions[n.id] } : n)) });
    },

    beginChange() {
      const { nodes, edges, meta } = get();
      history.push({ nodes, edges, meta });
      set({ canUndo: true, canRedo: false });
    },

    markSelectedEdge(edge) {
      set((s) => ({
        edges: s.edges.map((e) => (!!e.selected === (e.id === edge) ? e : { ...e, selected: e.id === edge })),
      }));
    },

    select(ids) {
      const want = new Set(ids);
      set({
        nodes: get().nodes.map((n) =>
          n.selected === want.has(n.id) ? n : { ...n, selected: want.has(n.id) },
        ),
        edges: get().edges.map((e) => (e.selected ? { ...e, selected: false } : e)),
      });
    },

    deleteSelection() {
      const { nodes, edges } = get();
      const gone = new Set(nodes.filter((n) => n.selected).map((n) => n.id));
      const keptEdges = edges.filter(
        (e) => !e.selected && !gone.has(e.source) && !gone.has(e.target),
      );
      if (!gone.size && keptEdges.length === edges.length) return;
      change({ nodes: nodes.filter((n) => !gone.has(n.id)), edges: keptEdges });
    },

    copySelection() {
      const { nodes, edges } = get();
      const picked = nodes.filter((n) => n.selected);
      const ids = new Set(picked.map((n) => n.id));
      const inner = edges.filter((e) => ids.has(e.source) && ids.has(e.target));
      set({ clipboard: { nodes: picked, edges: inner } });
      if (picked.length) get().notify(`copied ${picked.length} node${picked.length > 1 ? "s" : ""}`);
    },

    paste(offset = { x: 40, y: 40 }) {
      const clip = get().clipboard;
      if (!clip || !clip.nodes.length) return;
      const taken = takenIds();
      const rename = new Map<string, string>();
      const nodes = clip.nodes.map((n) => {
        const id = freshId(n.id.replace(/\d+$/, "") || n.data.op, taken);
        taken.add(id);
        rename.set(n.id, id);
        return {
          ...n,
          id,
          selected: true,
          position: { x: n.position.x + offset.x, y: n.position.y + offset.y },
          data: { ...n.data, params: { ...n.data.params } },
        };
      });
      const edges = clip.edges.map((e) => {
        const id = edgeId(rename.get(e.source)!, rename.get(e.target)!, e.targetHandle ?? "input", taken);
        taken.add(id);
        return { ...e, id, source: rename.get(e.source)!, target: rename.get(e.target)!, selected: false };
      });
      const deselected = get().nodes.map((n) => (n.selected ? { ...n, selected: false } : n));
      const levels = [...get().nodes, ...(get().meta.open ?? []).flatMap((f) => f.nodes)];
      // a pasted instance is a new one (its own parameters); the nodes land in free space
      const made = placedFree(asNewInstances(nodes, levels), get().nodes);
      change({ nodes: [...deselected, ...made], edges: [...get().edges, ...edges] });
      // the next paste lands a step further along, as in other editors
      set({ clipboard: { nodes: made.map((n) => ({ ...n, selected: false })), edges } });
    },

    duplicateSelection() {
      const saved = get().clipboard;
      get().copySelection();
      get().paste();
      set({ clipboard: saved });
    },

    undo() {
      const { nodes, edges, meta } = get();
      const prev = history.undo({ nodes, edges, meta });
      if (prev) set({ ...prev, dirty: true, canUndo: history.canUndo, canRedo: history.canRedo });
    },

    redo() {
      const { nodes, edges, meta } = get();
      const next = history.redo({ nodes, edges, meta });
      if (next) set({ ...next, dirty: true, canUndo: history.canUndo, canRedo: history.canRedo });
    },

    setProblems(problems) {
      set({ problems });
    },

    notify(text, tone = "info") {
      set({ notice: { text, tone } });
    },

    dismissNotice() {
      set({ notice: null });
    },

    markSaved(graphId, revision) {
      set({ graphId, revision, dirty: false });
    },

    markUnsavedCopy() {
      set({ dirty: true, graphId: null, revision: null });
    },

    setReadOnly(on) {
      set({ readOnly: on });
    },

    /** Take the params of `doc`'s nodes (a trained copy of this graph) as one undoable edit;
     * positions, selection and everything else stay as they are. */
    applyTrainedValues(doc) {
      const trained = new Map(doc.nodes.map((n) => [n.id, n.params]));
      // they are the graph's nodes' (an instance's under its `state`): modules open are closed
      const { nodes, edges, modules } = closeAll(get().nodes, get().edges, get().meta);
      change({
        nodes: nodes.map((n) => {
          const params = trained.get(n.id);
          return params ? { ...n, data: { ...n.data, params: { ...params } } } : n;
        }),
        edges,
        meta: { ...get().meta, modules, open: [] },
      });
    },
    setLevel(level, edit) {
      if (edit) change(level);
      else set(level);
    },
  };
});

/** The problems that belong to one node (its params and ports included). */
export function problemsOf(problems: NodeProblem[], nodeId: string) {
  return problems.filter((p) => p.node === nodeId && !p.edge);
}
