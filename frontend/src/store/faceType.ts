// The type the nodes' large faces are sized for (canvas/nodeSize.ts FaceType): the editor's,
// or, presenting, the font canvas/presenterType.ts picks for the projector's fit. Nodes size
// themselves by it (canvas/OpNodeView.tsx), and presenting the canvas draws no larger face
// than it (canvas/Canvas.tsx), so that no face outgrows its node.
import { create } from "zustand";
import { EDITOR_TYPE, type FaceType } from "../canvas/nodeSize";

export interface FaceTypeState {
  type: FaceType;
  setType(type: FaceType): void;
  /** Back to the editor's type (presenter mode left). */
  reset(): void;
}

export const useFaceType = create<FaceTypeState>()((set, get) => ({
  type: EDITOR_TYPE,
  setType: (type) => {
    const now = get().type;
    if (now.font !== type.font || now.weight !== type.weight) set({ type });
  },
  reset: () => get().setType(EDITOR_TYPE),
}));
