// The overlay the canvas is coloured by (canvas/overlayScores.ts): which statistic, or none,
// and the colours it gives each node and edge. Recomputed from the run's annotations, the
// graph's ops and the training snapshots whenever one of them changes while an overlay is on
// (store/reactions.ts tells it); nodes and edges subscribe to their own colour only.
import { create } from "zustand";
import type { TrainSnapshot } from "../api/types";
import { coloursOf, type OverlayResult, type OverlayStat, scoreOverlay } from "../canvas/overlayScores";
import { useEditor } from "./editor";
import { useRun } from "./run";
import { useTraining } from "./training";

export interface OverlayState {
  stat: OverlayStat | null; // null: off, the canvas in its usual colours
  result: OverlayResult | null;
  nodes: Record<string, string>; // run key -> colour
  edges: Record<string, string>;
  previous: TrainSnapshot | null; // the snapshot before the training's latest
  setStat(stat: OverlayStat | null): void;
  /** The run's annotations or the graph's ops changed (store/reactions.ts): the colours again. */
  recompute(): void;
  /** A training's new snapshot, `before` the one it follows (store/reactions.ts). */
  snapshotChanged(snapshot: TrainSnapshot | null, before: TrainSnapshot | null): void;
}

const NONE = {};

export const useOverlay = create<OverlayState>()((set) => ({
  stat: null,
  result: null,
  nodes: NONE,
  edges: NONE,
  previous: null,
  setStat(stat) {
    set({ stat });
    recompute();
  },
  recompute,
  snapshotChanged(snapshot, before) {
    // the step before, of the same training only
    const same = snapshot && before && snapshot.train_id === before.train_id;
    set({ previous: same ? before : null });
    recompute();
  },
}));

function recompute() {
  const { stat, previous } = useOverlay.getState();
  if (!stat) {
    useOverlay.setState({ result: null, nodes: NONE, edges: NONE });
    return;
  }
  const ops: Record<string, string> = {};
  for (const n of useEditor.getState().nodes) ops[n.id] = n.data.op;
  const result = scoreOverlay(stat, {
    annotations: useRun.getState().annotations,
    ops,
    snapshot: useTraining.getState().snapshot,
    previous,
  });
  useOverlay.setState({ result, ...coloursOf(result) });
}
