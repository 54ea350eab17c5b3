// Training runs (docs/training.md): start, pause, resume, stop; every step's loss for the
// chart; snapshots of the parameters (shown on the canvas) and of the decision boundary; and
// the trained values written back into the graph when training ends, as one undoable edit.
import { create } from "zustand";
import type {
  Boundary,
  NodeProblem,
  TrainFinished,
  TrainingSettings,
  TrainSnapshot,
} from "../api/types";
import { useEditor } from "./editor";
import { getConnection, useRun } from "./run";

export type TrainStatus = "idle" | "starting" | "running" | "paused" | TrainFinished["status"];

export interface TrainingState {
  trainId: string | null;
  status: TrainStatus;
  totalSteps: number;
  steps: number[]; // every step's number and loss, for the chart
  losses: number[];
  snapshot: TrainSnapshot | null;
  boundary: Boundary | null;
  error: string | null;
  start(settings: TrainingSettings): Promise<void>;
  control(action: "pause" | "resume" | "stop"): Promise<void>;
}

let listening = false;

function listen() {
  if (listening) return;
  listening = true;
  const conn = getConnection();
  const mine = (id: string) => id === useTraining.getState().trainId;
  conn.on<{ train_id: string; steps: number }>("train_started", (m) => {
    if (useRun.getState().following) useTraining.setState(fresh(m.train_id, m.steps));
    else if (mine(m.train_id)) useTraining.setState({ totalSteps: m.steps, status: "running" });
  });
  conn.on<{ train_id: string; steps: number[]; losses: number[] }>("train_progress", (m) => {
    if (!mine(m.train_id)) return;
    const s = useTraining.getState();
    // new arrays: the chart and anything else subscribed see a change
    useTraining.setState({ steps: s.steps.concat(m.steps), losses: s.losses.concat(m.losses) });
  });
  conn.on<TrainSnapshot>("train_snapshot", (m) => {
    if (!mine(m.train_id)) return;
    useTraining.setState({ snapshot: m, boundary: m.boundary ?? useTraining.getState().boundary });
    showOnCanvas(m);
  });
  conn.on<TrainFinished>("train_finished", (m) => {
    if (!mine(m.train_id)) return;
    const error = typeof m.error === "string" ? m.error : (m.error?.message ?? null);
    useTraining.setState({ status: m.status, error });
    const ed = useEditor.getState();
    if (m.graph && !useRun.getState().following) {
      ed.applyTrainedValues(m.graph);
      ed.notify(
        `training ${m.status === "ok" ? "finished" : m.status} after ${m.steps} steps` +
          (m.loss != null ? `, loss ${m.loss.toPrecision(4)}` : "") +
          ": the trained values are in the graph (Ctrl+Z undoes)",
      );
    } else if (error) ed.notify(`training failed: ${error}`, "error");
  });
}

function fresh(trainId: string | null, totalSteps = 0): Partial<TrainingState> {
  return {
    trainId,
    status: trainId ? "running" : "idle",
    totalSteps,
    steps: [],
    losses: [],
    snapshot: null,
    boundary: null,
    error: null,
  };
}

/** The parameters' current values and gradients, written on their nodes. */
function showOnCanvas(m: TrainSnapshot) {
  const run = useRun.getState();
  const values = { ...run.annotations.values };
  const leafGrads = { ...run.annotations.leafGrads };
  for (const [name, summary] of Object.entries(m.params)) if (!name.includes(".")) values[name] = summary;
  for (const [name, summary] of Object.entries(m.grads)) leafGrads[name] = summary;
  useRun.setState({ annotations: { ...run.annotations, values, leafGrads } });
}

export const useTraining = create<TrainingState>()((set, get) => ({
  ...(fresh(null) as TrainingState),

  async start(settings) {
    listen();
    const ed = useEditor.getState();
    set({ ...fresh(null), status: "starting" });
    let ack: { train_id?: string; error?: string; node_errors?: NodeProblem[] };
    try {
      ack = await getConnection().request("train", { graph: ed.document(), config: settings });
    } catch (err) {
      set({ status: "error", error: (err as Error).message });
      return;
    }
    if (!ack.train_id) {
      ed.setProblems(ack.node_errors ?? []);
      set({ status: "error", error: ack.error ?? "training refused" });
      ed.notify(ack.error ?? "training refused", "error");
      return;
    }
    ed.setProblems([]);
    set({ ...fresh(ack.train_id, settings.steps) });
  },

  async control(action) {
    const { trainId } = get();
    if (!trainId) return;
    const reply = await getConnection()
      .request<{ ok?: boolean; error?: string }>("train_control", { train_id: trainId, action })
      .catch((e: Error) => ({ error: e.message }));
    if (reply.error) useEditor.getState().notify(reply.error, "error");
    else if (action !== "stop") set({ status: action === "pause" ? "paused" : "running" });
  },
}));

/** Start listening for training events from the start: a room's follower sees the owner's. */
export function initTraining() {
  listen();
}
