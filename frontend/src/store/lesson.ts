// Where a graph's lesson is: the step shown and whether the panel is closed. A store, not the
// panel's own state, so that a room carries it (store/reactions.ts: the owner's step goes to the
// followers and to joiners). Both belong to one opening of a graph (`opened`, from the
// editor): another graph starts at its first step, without effects racing a room's join.
import { create } from "zustand";
import type { LessonPredict } from "../api/types";
import { useEditor } from "./editor";
import { nameOf } from "./names";
import type { QuizTarget } from "./quizMask";

export interface LessonState {
  opened: number; // the editor's `opened` that `index` and `hidden` are for
  index: number;
  hidden: boolean;
  go(index: number): void;
  hide(): void;
}

export const useLesson = create<LessonState>()((set) => ({
  opened: -1,
  index: 0,
  hidden: false,
  go: (index) => set({ opened: useEditor.getState().opened, index, hidden: false }),
  hide: () => set((s) => ({ opened: useEditor.getState().opened, index: s.opened === useEditor.getState().opened ? s.index : 0, hidden: true })),
}));

/** The lesson's step and visibility for the graph open now. */
export function lessonAt(s: LessonState, opened: number): { index: number; hidden: boolean } {
  return s.opened === opened ? { index: s.index, hidden: s.hidden } : { index: 0, hidden: false };
}

/** The question the lesson step shown now asks the room (null: none, or no lesson). */
export function currentPredict(): LessonPredict | null {
  const ed = useEditor.getState();
  const lesson = ed.meta.lesson ?? [];
  if (!lesson.length) return null;
  const { index, hidden } = lessonAt(useLesson.getState(), ed.opened);
  return hidden ? null : (lesson[Math.min(index, lesson.length - 1)]?.predict ?? null);
}

interface Wire {
  id: string;
  source: string;
  target: string;
}

/** A lesson step's question as the quiz names what it asks about (docs/graph-format.md,
 * "Lesson steps that ask"): an edge's gradient, the value on an edge (its source's), a node's
 * value, a leaf's .grad (a node the run has a .grad for: `leafGrads`, the whole run's) or a
 * node's total gradient; a string saying why when the edge or node is not in the graph. */
export function predictTarget(
  p: LessonPredict,
  nodes: { id: string }[],
  edges: Wire[],
  leafGrads: Record<string, unknown> = {},
): QuizTarget | string {
  const grad = (p.what ?? "grad") === "grad";
  if (p.edge) {
    const edge = edges.find((e) => e.id === p.edge);
    if (!edge) return `this step asks about the wire ${p.edge}, which the graph no longer has`;
    if (!grad) return { kind: "value", id: edge.source, label: `the value of ${nameOf(edge.source)}` };
    return { kind: "grad", id: edge.id, label: `the gradient on ${nameOf(edge.source)} → ${nameOf(edge.target)}` };
  }
  const id = p.node ?? "";
  const node = id.split(".")[0]; // `lin.weight`: a layer's parameter
  if (!nodes.some((n) => n.id === id || n.id === node)) return `this step asks about ${id || "a node"}, which the graph no longer has`;
  if (!grad) return { kind: "value", id, label: `the value of ${nameOf(id)}` };
  if (id in leafGrads) return { kind: "leaf_grad", id, label: `${nameOf(node)}${id === node ? "" : id.slice(node.length)}.grad` };
  return { kind: "node_grad", id, label: `the gradient of ${nameOf(id)}` };
}
