// Which corner of the canvas the minimap is drawn in (canvas/Canvas.tsx): the bottom right,
// or, where a graph fitted whole has a node under that corner and none under the top right,
// the top right (canvas/fit.ts chooses at each fit). A view of the canvas, not the document.
import { create } from "zustand";

export type MinimapCorner = "bottom-right" | "top-right";

export interface MinimapCornerState {
  corner: MinimapCorner;
  set(corner: MinimapCorner): void;
}

export const useMinimapCorner = create<MinimapCornerState>()((set) => ({
  corner: "bottom-right",
  set: (corner) => set({ corner }),
}));
