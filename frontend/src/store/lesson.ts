// Where a graph's lesson is: the step shown and whether the panel is closed. A store, not the
// panel's own state, so that a room carries it (store/reactions.ts: the owner's step goes to the
// followers and to joiners). Both belong to one opening of a graph (`opened`, from the
// editor): another graph starts at its first step, without effects racing a room's join.
import { create } from "zustand";
import { useEditor } from "./editor";

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
