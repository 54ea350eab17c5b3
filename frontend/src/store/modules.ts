// Modules on the canvas: making one from the selection, opening an instance (the canvas then
// shows and edits its definition), going back out, unpacking, adding an instance. The levels
// opened live in the editor's meta (`open`), so that undo and redo restore them with the nodes
// they belong to; each edit here is one undo step.
import type { XYPosition } from "@xyflow/react";
import { create } from "zustand";
import type { DocNode } from "../api/types";
import { READABLE_ZOOM } from "../canvas/fit";
import { isStacked, layoutPositions, wrappedIfUnreadable } from "../canvas/layout";
import { nodeSize, placedFree } from "../canvas/nodeSize";
import { type DocMeta, type Frame, toDocument, toFlowEdge, toFlowNode } from "../doc/convert";
import {
  closeAll,
  depthShowing,
  instanceId,
  levelToDef,
  makeModule,
  MODULE_OP,
  moduleNameProblem,
  nextSeed,
  runKey,
  scopeOf,
  shownAt,
  type SplitTrained,
  unpackModule,
} from "../doc/modules";
import { splitTrained } from "../doc/trainedState";
import { deleteModule, moduleUses, renameModule } from "../doc/moduleDefs";
import { useEditor } from "./editor";
import { useRun } from "./run";
import { useTraining } from "./training";

/** The "Make module" dialog: shown while `naming` (its name field is checked as typed). */
export const useModuleUi = create<{
  naming: boolean;
  setNaming(on: boolean): void;
  /** The definition being renamed or deleted (its dialog shows while set). */
  defEdit: { name: string; action: "rename" | "delete" } | null;
  setDefEdit(edit: { name: string; action: "rename" | "delete" } | null): void;
}>()((set) => ({
  naming: false,
  setNaming: (naming) => set({ naming }),
  defEdit: null,
  setDefEdit: (defEdit) => set({ defEdit }),
}));

// each node and edge asks on every editor change: the path is worked out once per `open` (a
// memo of the pure scopeOf: no state of its own, a new `open` replaces it)
let scoped: { open: unknown; scope: string } = { open: undefined, scope: "" };
function currentScope(meta: DocMeta) {
  if (scoped.open !== meta.open) scoped = { open: meta.open, scope: scopeOf(meta) };
  return scoped.scope;
}

/** The path of the instance open on the canvas ("" for the graph itself). */
export const useScope = () => useEditor((s) => currentScope(s.meta));

/** Where the run's records of node or edge `id` of the level shown are. */
export const useRunKey = (id: string) => useEditor((s) => runKey(currentScope(s.meta), id));

const flowNode = (n: DocNode) => toFlowNode(n, (op) => nodeSize(useEditor.getState().ops[op]));

/** The current level as a document's nodes and edges. */
function level() {
  const { nodes, edges, meta } = useEditor.getState();
  return toDocument(nodes, edges, { ...meta, target: null });
}

type Level = Parameters<ReturnType<typeof useEditor.getState>["setLevel"]>[0];

/** Applies the edit as one undo step; false (the editor says why) when editing is off. */
function edit(level: Level) {
  const ed = useEditor.getState();
  ed.setLevel(level, true);
  return !ed.readOnly;
}

/** Why the selection cannot become a module now (null: it can). */
export function makeProblem(): string | null {
  const { nodes, meta } = useEditor.getState();
  const picked = nodes.filter((n) => n.selected).map((n) => n.id);
  if (!picked.length) return "select the nodes to put into a module first";
  const pinned = [meta.open?.length ? null : meta.target, meta.open?.length ? null : meta.training?.loss].filter(Boolean);
  const held = picked.find((id) => pinned.includes(id));
  if (held) return `${held} is what the graph minimises (its backward target or training loss): keep it outside the module`;
  return null;
}

/** Asks for the new module's name (the dialog calls `makeFromSelection`). */
export function askToMake() {
  const problem = makeProblem();
  if (problem) useEditor.getState().notify(problem, "error");
  else useModuleUi.getState().setNaming(true);
}

/** How "Make module" splits a node into its definition's fresh params and the instance's
 * trained state: by the registry's layer state, and for a parameter by what this graph's last
 * training wrote (known only on the graph's own level, where its node ids are). */
function trainedSplit(): SplitTrained {
  const ed = useEditor.getState();
  const { seeded, written } = useTraining.getState();
  const known = seeded && written && seeded.opened === ed.opened && !ed.meta.open?.length;
  const writes = known ? { seeded: seeded.params, written } : undefined;
  return (n) => splitTrained(n, ed.ops[n.op], writes);
}

/** Replaces the selected nodes by an instance of a new module `name`. Returns the problem
 * that stopped it, or null. */
export function makeFromSelection(name: string): string | null {
  const ed = useEditor.getState();
  const problem = makeProblem() ?? moduleNameProblem(name, ed.meta.modules ?? []);
  if (problem) return problem;
  const taken = new Set([...ed.nodes.map((n) => n.id), ...ed.edges.map((e) => e.id)]);
  let made;
  try {
    made = makeModule(level(), ed.nodes.filter((n) => n.selected).map((n) => n.id), name, taken, trainedSplit());
  } catch (e) {
    return (e as Error).message;
  }
  const kept = new Map(ed.nodes.map((n) => [n.id, n]));
  const nodes = made.nodes.map((n) => (n.id === made.instance ? { ...flowNode(n), selected: true } : kept.get(n.id)!));
  const meta: DocMeta = { ...ed.meta, version: 2, modules: [...(ed.meta.modules ?? []), made.def] };
  if (edit({ nodes, edges: made.edges.map(toFlowEdge), meta })) ed.notify(`made module ${name} (${made.instance})`);
  return null;
}

/** Puts instance `id`'s nodes back into the level it is in, selected. */
export function unpack(id: string) {
  const ed = useEditor.getState();
  let out;
  try {
    out = unpackModule(level(), id, modulesNow());
  } catch (e) {
    ed.notify((e as Error).message, "error");
    return;
  }
  const kept = new Map(ed.nodes.map((n) => [n.id, { ...n, selected: false }]));
  const added = new Set(out.added);
  // the module's nodes take more room than its instance did: they go where they cover no other
  const others = ed.nodes.filter((n) => n.id !== id);
  const placed = new Map(
    placedFree(
      out.nodes.filter((n) => added.has(n.id)).map((n) => ({ ...flowNode(n), selected: true })),
      others,
    ).map((n) => [n.id, n]),
  );
  const nodes = out.nodes.map((n) => placed.get(n.id) ?? kept.get(n.id)!);
  edit({ nodes, edges: out.edges.map(toFlowEdge) });
}

/** The definitions as they are now: the levels open written back into them. */
function modulesNow() {
  const { nodes, edges, meta } = useEditor.getState();
  return closeAll(nodes, edges, meta).modules;
}

/** Shows the definition of instance `id` (of the level shown) on the canvas. Not an edit. A
 * definition written without positions (a traced model's) is laid out first, and one stored
 * as a long row wrapped into rows, as a document is when it opens (canvas/showOpened.ts). */
export async function openInstance(id: string) {
  const ed = useEditor.getState();
  const inst = ed.nodes.find((n) => n.id === id);
  const name = inst?.data.params.module;
  const def = (ed.meta.modules ?? []).find((m) => m.name === name);
  if (!inst || !def) {
    ed.notify(`${id} is not an instance of a module this graph defines`, "error");
    return;
  }
  let nodes = def.nodes.map(flowNode);
  const edges = def.edges.map(toFlowEdge);
  let placed: Record<string, XYPosition> | null;
  if (isStacked(nodes)) {
    placed = await layoutPositions(nodes, edges);
    // the canvas moved on meanwhile (another level, another graph): this opening is dropped
    if (useEditor.getState().nodes !== ed.nodes) return;
  } else placed = wrappedIfUnreadable(nodes, edges, undefined, READABLE_ZOOM);
  if (placed) nodes = nodes.map((n) => (placed[n.id] ? { ...n, position: placed[n.id] } : n));
  const now = useEditor.getState();
  const frame: Frame = { instance: id, module: def.name, nodes: now.nodes, edges: now.edges };
  const meta = { ...now.meta, open: [...(now.meta.open ?? []), frame] };
  now.setLevel({ nodes, edges, meta }, false); // fitted: panels/onCanvas/Breadcrumbs.tsx
  useRun.getState().selectEdge(null); // an edge of the level left
}

/** Goes back out to the level `depth` (0: the graph), the instance left selected. Not an edit:
 * the definitions take what was edited inside. */
export function closeTo(depth: number) {
  const ed = useEditor.getState();
  const open = ed.meta.open ?? [];
  if (depth >= open.length) return;
  let { nodes, edges } = ed;
  let modules = ed.meta.modules ?? [];
  for (let i = open.length - 1; i >= depth; i--) {
    const f = open[i];
    modules = modules.map((m) => (m.name === f.module ? levelToDef(m, nodes, edges) : m));
    nodes = f.nodes;
    edges = f.edges;
  }
  const left = open[depth].instance;
  const shown = nodes.map((n) => (n.selected === (n.id === left) ? n : { ...n, selected: n.id === left }));
  ed.setLevel({ nodes: shown, edges, meta: { ...ed.meta, modules, open: open.slice(0, depth) } }, false);
  useRun.getState().selectEdge(null);
}

/** Adds an instance of module `name` at `position`, with the next free seed. */
export function addInstance(name: string, position: XYPosition) {
  const ed = useEditor.getState();
  const open = ed.meta.open ?? [];
  if (open.some((f) => f.module === name)) {
    ed.notify(`${name} is open: a module cannot contain itself`, "error");
    return;
  }
  const taken = new Set([...ed.nodes.map((n) => n.id), ...ed.edges.map((e) => e.id)]);
  // seeds count over the whole graph, so that instances at any level start apart
  const all = [...ed.nodes, ...open.flatMap((f) => f.nodes)];
  const seed = nextSeed(all, name);
  const node: DocNode = {
    id: instanceId(name, taken),
    op: MODULE_OP,
    params: { module: name, ...(seed ? { seed } : {}) },
    position,
  };
  const nodes = ed.nodes.map((n) => (n.selected ? { ...n, selected: false } : n));
  edit({ nodes: [...nodes, { ...flowNode(node), selected: true }] });
}

/** Calls module `from` `to`: its definition, every instance of it (at any level, inside other
 * modules too) and the open levels of it; one undo step. Returns the problem that stopped it
 * (the name checked as "Make module" checks it), or null. */
export function renameDefinition(from: string, to: string): string | null {
  const ed = useEditor.getState();
  if (to === from) return null;
  const problem = moduleNameProblem(to, (ed.meta.modules ?? []).filter((m) => m.name !== from));
  if (problem) return problem;
  if (edit(renameModule(ed, from, to))) ed.notify(`renamed module ${from} to ${to}`);
  return null;
}

/** The nodes that are instances of module `name`, at every level (open ones as edited). */
export const usesOfDefinition = (name: string) => moduleUses(useEditor.getState(), name);

/** Deletes module `name`; with `withUses`, its instances too (at every level); one undo step.
 * Returns the problem that stopped it (it is open, or used), or null. */
export function deleteDefinition(name: string, withUses: boolean): string | null {
  const ed = useEditor.getState();
  let out;
  try {
    out = deleteModule(ed, name, withUses);
  } catch (e) {
    return (e as Error).message;
  }
  const { removed, ...level } = out;
  const also = removed ? ` and its ${removed} instance${removed > 1 ? "s" : ""}` : "";
  if (edit(level)) ed.notify(`deleted module ${name}${also}`);
  return null;
}

/** Selects what shows the run's node `key` (a flat path, `b1/w`): the node itself, on the level
 * that has it (levels open that do not hold it are closed), or the module instance it is in. */
export function revealRunNode(key: string) {
  const open = useEditor.getState().meta.open ?? [];
  const depth = depthShowing(open, key);
  if (depth < open.length) closeTo(depth);
  const place = shownAt(scopeOf(useEditor.getState().meta), key);
  if (place) useEditor.getState().select([place.id]);
}
