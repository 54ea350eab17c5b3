// Each node's output shape before any run, as the server's validation dry run infers it
// (POST /api/validate?shapes=1, docs/protocol.md). Asked again a moment after an edit that can
// change a shape (params, wiring, ops), never for a move: a drag changes positions only.
// The same answer says which trained values an edit left of an earlier size (the problems
// coded "stale_values"), so the node can offer its reset before anything is run; and which
// nodes cannot work on the shapes they are given (the dry run's errors, in PyTorch's words:
// `early`), so that a mistake shows as it is made, not at the next run. A half-wired graph's
// missing inputs are left out of those: they are the graph being built, not a mistake. The
// problems of a refused run that the answer no longer has were fixed by the edit: they go.
import { create } from "zustand";
import { apiFetch } from "../api/http";
import type { GraphDocument, NodeProblem } from "../api/types";
import { STALE_VALUES, withoutStaleInside } from "../doc/stale";
import { useEditor } from "./editor";

interface ShapesState {
  shapes: Record<string, number[]>;
  /** The latest validation's stale-values problems (doc/stale.ts). */
  stale: NodeProblem[];
  /** The latest validation's problems of a node itself (not of a port or a wire). */
  early: NodeProblem[];
  /** Node `id`'s stale values (a module instance's: those inside it) were reset to fresh
   * ones: its offer goes. */
  dropStale(id: string): void;
}

export const useShapes = create<ShapesState>()((set) => ({
  shapes: {},
  stale: [],
  early: [],
  dropStale: (id) => set((s) => ({ stale: withoutStaleInside(s.stale, id) })),
}));

/** A problem shown before any run: a node's own (its op's error on its inputs' shapes, a
 * cycle), not a missing input or a wire's, and not stale values (StaleOffer says those). */
export function isEarly(p: NodeProblem): boolean {
  return Boolean(p.node) && !p.port && !p.edge && p.code !== STALE_VALUES;
}

const same = (a: NodeProblem, b: NodeProblem) =>
  a.node === b.node && a.message === b.message && a.port === b.port && a.edge === b.edge && a.param === b.param;

/** The problems of `shown` (a refused run's) that validation still finds in `now`: `shown`
 * itself when all of them are. */
export function stillFound(shown: NodeProblem[], now: NodeProblem[]): NodeProblem[] {
  const kept = shown.filter((p) => now.some((q) => same(p, q)));
  return kept.length === shown.length ? shown : kept;
}

interface Answer {
  shapes: Record<string, number[]>;
  problems: NodeProblem[];
}

const WAIT_MS = 250; // after the last edit: typing in a field asks once

async function fetchShapes(doc: GraphDocument): Promise<Answer | null> {
  try {
    // (apiFetch: in a notebook widget the kernel answers; a fetch would ask the page's own
    // server, Jupyter's or marimo's, which refuses it)
    const res = await apiFetch("POST", "/validate?shapes=1", doc);
    if (!res.ok) return null;
    const body = (await res.json()) as { node_errors: NodeProblem[]; shapes?: Record<string, number[]> };
    if (!body.shapes) return null;
    return { shapes: body.shapes, problems: body.node_errors ?? [] };
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
      const question = useEditor.getState();
      const answer = await fetchShapes(question.document());
      // an answer to an older document is dropped: a newer question is on its way
      if (!answer || mine !== asked) return;
      const { problems } = answer;
      useShapes.setState({
        shapes: answer.shapes,
        stale: problems.filter((p) => p.code === STALE_VALUES),
        early: problems.filter(isEarly),
      });
      // a refused run's problems that this document no longer has were fixed by an edit
      const ed = useEditor.getState();
      if (!structureChanged(question, ed)) {
        const kept = stillFound(ed.problems, problems);
        if (kept !== ed.problems) ed.setProblems(kept);
      }
    }, WAIT_MS);
  };
  const stop = useEditor.subscribe((s, prev) => {
    // another graph: the last one's problems are not this one's, even for a moment
    if (s.opened !== prev.opened) useShapes.setState({ stale: [], early: [] });
    if (s.ops !== prev.ops || structureChanged(s, prev)) ask();
  });
  ask();
  return () => {
    stop();
    if (timer) clearTimeout(timer);
  };
}
