// The module library on the page: its entries (loaded once, from /api/module-library), the
// entry whose arguments are being chosen, and adding one: the definition the server builds
// joins the document's modules (an identical one already there is used again) and one
// instance of it is placed, selected, as one undo step.
import type { XYPosition } from "@xyflow/react";
import { create } from "zustand";
import { type LibraryEntry, library } from "../api/library";
import type { DocNode } from "../api/types";
import { nodeSize } from "../canvas/nodeSize";
import { toFlowNode } from "../doc/convert";
import { placeDefinition } from "../doc/library";
import { closeAll, instanceId, MODULE_OP, nextSeed } from "../doc/modules";
import { useEditor } from "./editor";

interface LibraryState {
  entries: LibraryEntry[] | null; // null: not loaded yet
  loadError: string | null;
  choosing: LibraryEntry | null; // the entry whose dialog is open
  load(): Promise<void>;
  choose(entry: LibraryEntry | null): void;
}

export const useLibrary = create<LibraryState>()((set, get) => ({
  entries: null,
  loadError: null,
  choosing: null,
  async load() {
    if (get().entries) return;
    try {
      set({ entries: await library.entries(), loadError: null });
    } catch (e) {
      set({ loadError: `the module library did not load: ${(e as Error).message}` });
    }
  },
  choose: (choosing) => set({ choosing }),
}));

/** `at`, or below it where a node stands there already (two adds at the centre of the view
 * would otherwise hide one another). */
function freeSpot(at: XYPosition, nodes: { position: XYPosition }[]): XYPosition {
  const near = (p: XYPosition) => nodes.some((n) => Math.abs(n.position.x - p.x) < 60 && Math.abs(n.position.y - p.y) < 60);
  let spot = at;
  for (let i = 0; i < 20 && near(spot); i++) spot = { x: spot.x + 30, y: spot.y + 160 };
  return spot;
}

/** Builds entry `name` from `args` on the server and adds it at `position` (see the top of
 * the file). Throws what the server refused (LibraryArgsError names each argument). Returns
 * the new instance's id, or null when the editor refused the edit. */
export async function addFromLibrary(name: string, args: Record<string, unknown>, position: XYPosition) {
  const def = await library.build(name, args);
  const ed = useEditor.getState();
  const open = ed.meta.open ?? [];
  // compared with the definitions as edited in the levels open now
  const current = closeAll(ed.nodes, ed.edges, ed.meta).modules;
  const placed = placeDefinition(def, current);
  if (open.some((f) => f.module === placed.name)) {
    ed.notify(`${placed.name} is open: a module cannot contain itself`, "error");
    return null;
  }
  const modules = placed.reused ? (ed.meta.modules ?? []) : [...(ed.meta.modules ?? []), placed.modules.at(-1)!];
  const taken = new Set([...ed.nodes.map((n) => n.id), ...ed.edges.map((e) => e.id)]);
  const seed = nextSeed([...ed.nodes, ...open.flatMap((f) => f.nodes)], placed.name);
  const node: DocNode = {
    id: instanceId(placed.name, taken),
    op: MODULE_OP,
    params: { module: placed.name, ...(seed ? { seed } : {}) },
    position: freeSpot(position, ed.nodes),
  };
  const flow = { ...toFlowNode(node, (op) => nodeSize(ed.ops[op])), selected: true };
  const nodes = [...ed.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), flow];
  ed.setLevel({ nodes, meta: { ...ed.meta, version: 2, modules } }, true);
  if (useEditor.getState().readOnly) return null;
  ed.notify(placed.reused ? `added ${node.id}, another ${placed.name}` : `added module ${placed.name} and ${node.id}`);
  return node.id;
}
