// Which module instances are expanded in place on the canvas (canvas/ModuleInside.tsx): a
// view of the canvas, not of the document, so no edit and nothing saved. Instances are
// collapsed by default; each is known by its run key (`block1`, or `l1/block1` inside an
// opened level), so that an instance inside another keeps its own state.
import { create } from "zustand";

export interface ExpandedState {
  keys: ReadonlySet<string>;
  toggle(key: string): void;
}

export const useExpanded = create<ExpandedState>()((set, get) => ({
  keys: new Set(),
  toggle: (key) => {
    const keys = new Set(get().keys);
    if (!keys.delete(key)) keys.add(key);
    set({ keys });
  },
}));
