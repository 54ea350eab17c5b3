// Each node's output shape before any run, as the server's validation dry run infers it
// (POST /api/validate?shapes=1, docs/protocol.md). Asked again a moment after an edit that can
// change a shape (params, wiring, ops), never for a move: a drag changes positions only.
// The same answer says which trained values an edit left of an earlier size (the problems
// coded "stale_values"), so the node can offer its reset before anything is run.
import { create } from "zustand";
import type { GraphDocument, NodeProblem } from "../api/types";
import { STALE_VALUES } from "../doc/stale";
import { useEditor } from "./editor";

interface ShapesState {
  shapes: Record<string, number[]>;
  /** The latest validation's stale-values problems (doc/stale.ts). */
  stale: NodeProblem[];
}

export const useShapes = create<ShapesState>()(() => ({ shapes: {}, stale: [] }));

const WAIT_MS = 250; // after the last edit: typing in a field asks once

async function fetchShapes(doc: GraphDocument): Promise<ShapesState | null> {
  try {
    const res = await fetch("/api/validate?shapes=1", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(doc),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { node_errors: NodeProblem[]; shapes?: Record<string, number[]> };
    if (!body.shapes) return null;
    return { shapes: body.shapes, stale: (body.node_errors ?? []).filter((p) => p.code === STALE_VALUES) };
  } catch {
    return null; // offline: the shapes come with the next run's values instead
  }
}

/** What a shape can depend on: the edges and each node's data (not positions or selection). */
function structureChanged(
  a: ReturnType<typeof useEditor.getState>,
  b: ReturnType<typeof useEditor.getState>,
): boolean {
  if (a.edges !== b.edges) {
    if (a.edges.length !== b.edges.length) return true;
    for (let i = 0; i < a.edges.length; i++) {
      const x = a.edges[i];
      const y = b.edges[i];
      if (x.source !== y.source || x.target !== y.target || x.targetHandle !== y.targetHandle) return true;
    }
  }
  if (a.nodes === b.nodes) return false;
  if (a.nodes.length !== b.nodes.length) return true;
  for (let i = 0; i < a.nodes.length; i++) if (a.nodes[i].data !== b.nodes[i].data) return true;
  return false;
}

/** Keep `useShapes` up to date with the document; returns the unsubscribe. */
export function keepShapes(): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let asked = 0;
  const ask = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++asked;
      const answer = await fetchShapes(useEditor.getState().document());
      // an answer to an older document is dropped: a newer question is on its way
      if (answer && mine === asked) useShapes.setState(answer);
    }, WAIT_MS);
  };
  const stop = useEditor.subscribe((s, prev) => {
    if (s.ops !== prev.ops || structureChanged(s, prev)) ask();
  });
  ask();
  return () => {
    stop();
    if (timer) clearTimeout(timer);
  };
}
