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
import { currentPace, type Pace } from "./pace";
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
  /** A new pace for the training in progress (the server holds it between steps). */
  setPace(pace: Pace): Promise<void>;
}

let listening = false;
// A training's first packets (even all of them, for a short one) can overtake the ack that
// names it: the server starts the training before it answers. While this client waits for its
// ack, packets of ids it does not know wait here, in order; the ack's id replays its own.
let awaitingAck = false;
let early: { event: string; payload: { train_id: string } }[] = [];
const handlers: Record<string, (payload: never) => void> = {};

function listen() {
  if (listening) return;
  listening = true;
  const conn = getConnection();
  const mine = (id: string) => id === useTraining.getState().trainId;
  // each event: apply it when it is this client's training's, hold it while an ack is awaited
  const on = <T extends { train_id: string }>(
    event: string,
    apply: (m: T) => void,
    other?: (m: T) => void,
  ) => {
    handlers[event] = apply as (payload: never) => void;
    conn.on<T>(event, (m) => {
      if (mine(m.train_id)) apply(m);
      else if (other && useRun.getState().following) other(m);
      else if (awaitingAck) early.push({ event, payload: m });
      // else: a stopped training's late packets, or another client's
    });
  };
  on<{ train_id: string; steps: number }>(
    "train_started",
    (m) => useTraining.setState({ totalSteps: m.steps, status: "running" }),
    (m) => useTraining.setState(fresh(m.train_id, m.steps)),
  );
  on<{ train_id: string; steps: number[]; losses: number[] }>("train_progress", (m) => {
    const s = useTraining.getState();
    // new arrays: the chart and anything else subscribed see a change
    useTraining.setState({ steps: s.steps.concat(m.steps), losses: s.losses.concat(m.losses) });
  });
  on<TrainSnapshot>("train_snapshot", (m) => {
    useTraining.setState({ snapshot: m, boundary: m.boundary ?? useTraining.getState().boundary });
    showOnCanvas(m);
  });
  on<TrainFinished>("train_finished", (m) => {
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

/** The ack is in: the packets of its training that came before it are applied, in order. */
function replayEarly(trainId: string | null) {
  const caught = early;
  early = [];
  awaitingAck = false;
  if (!trainId) return;
  for (const { event, payload } of caught)
    if (payload.train_id === trainId) handlers[event]?.(payload as never);
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
    awaitingAck = true;
    early = [];
    let ack: { train_id?: string; error?: string; node_errors?: NodeProblem[] };
    try {
      const pace = currentPace();
      ack = await getConnection().request("train", {
        graph: ed.document(),
        config: settings,
        ...(pace !== null ? { steps_per_second: pace } : {}),
      });
    } catch (err) {
      replayEarly(null);
      set({ status: "error", error: (err as Error).message });
      return;
    }
    if (!ack.train_id) {
      replayEarly(null);
      ed.setProblems(ack.node_errors ?? []);
      set({ status: "error", error: ack.error ?? "training refused" });
      ed.notify(ack.error ?? "training refused", "error");
      return;
    }
    ed.setProblems([]);
    set({ ...fresh(ack.train_id, settings.steps) });
    replayEarly(ack.train_id);
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

  async setPace(pace) {
    const { trainId, status } = get();
    if (!trainId || !(status === "running" || status === "paused")) return;
    const reply = await getConnection()
      .request<{ ok?: boolean; error?: string }>("train_control", {
        train_id: trainId,
        action: "pace",
        steps_per_second: pace,
      })
      .catch((e: Error) => ({ error: e.message }));
    if (reply.error) useEditor.getState().notify(reply.error, "error");
  },
}));

/** Start listening for training events from the start: a room's follower sees the owner's. */
export function initTraining() {
  listen();
}
