// Training runs (docs/training.md): start, pause, resume, stop; every step's loss for the
// chart; snapshots of the parameters (shown on the canvas) and of the decision boundary; and
// the trained values written back into the graph when training ends, as one undoable edit.
import { create } from "zustand";
import { AckedStream } from "../api/ackedStream";
import type {
  Boundary,
  NodeProblem,
  RoomTraining,
  TrainFinished,
  TrainingSettings,
  TrainSnapshot,
} from "../api/types";
import { freshDocument, type NodeParams, paramsOf } from "../doc/freshWeights";
import { useEditor } from "./editor";
import { currentPace, type Pace } from "./pace";
import { getConnection, useRun } from "./run";

export type TrainStatus = "idle" | "starting" | "queued" | "running" | "paused" | TrainFinished["status"];

/** Where a training waits for a free slot on the server (backend/server/training_queue.py). */
export interface QueuePlace {
  position: number; // 1: next
  running: number | null; // trainings computing when the place was told
}

export interface TrainingState {
  trainId: string | null;
  status: TrainStatus;
  totalSteps: number;
  steps: number[]; // every step's number and loss, for the chart
  losses: number[];
  /** A classifier's accuracy (0..1) at each snapshot that reported one, and its step. */
  accuracySteps: number[];
  accuracies: number[];
  snapshot: TrainSnapshot | null;
  boundary: Boundary | null;
  error: string | null;
  queued: QueuePlace | null;
  /** Train again from the last training's trained values (else from the seeded ones). */
  continueTrained: boolean;
  /** The params before this graph's first training (`opened`: which opening of a graph) and
   * what the last training wrote back: "train again" starts from the first (doc/freshWeights.ts). */
  seeded: { opened: number; params: NodeParams } | null;
  written: NodeParams | null;
  setContinueTrained(on: boolean): void;
  start(settings: TrainingSettings): Promise<void>;
  control(action: "pause" | "resume" | "stop"): Promise<void>;
  /** A new pace for the training in progress (the server holds it between steps). */
  setPace(pace: Pace): Promise<void>;
}

let listening = false;
const handlers: Record<string, (payload: never) => void> = {};
// A training's first packets (even all of them, for a short one) can overtake the ack that
// names it: the server starts the training before it answers (api/ackedStream.ts).
const stream = new AckedStream<{ event: string; payload: { train_id: string } }>(
  () => useTraining.getState().trainId,
  ({ event, payload }) => handlers[event]?.(payload as never),
);

function listen() {
  if (listening) return;
  listening = true;
  const conn = getConnection();
  const mine = (id: string) => id === useTraining.getState().trainId;
  // each event: applied when it is this client's training's, held while an ack is awaited,
  // else dropped (a stopped training's late packets, or another client's); `other`: a room
  // owner's training, on a follower's page
  const on = <T extends { train_id: string }>(
    event: string,
    apply: (m: T) => void,
    other?: (m: T) => void,
  ) => {
    handlers[event] = apply as (payload: never) => void;
    conn.on<T>(event, (m) => {
      // a room owner's training on a follower's page, or the kernel's own (`w.train`)
      const adopted = (m as { adopt?: boolean }).adopt === true;
      if (!mine(m.train_id) && other && (useRun.getState().following || adopted)) other(m);
      else stream.receive(m.train_id, { event, payload: m });
    });
  };
  on<{ train_id: string; position: number; running: number | null }>("train_queued", (m) =>
    useTraining.setState({ status: "queued", queued: { position: m.position, running: m.running } }),
  );
  on<{ train_id: string; steps: number }>(
    "train_started",
    (m) => useTraining.setState({ totalSteps: m.steps, status: "running", queued: null }),
    (m) => useTraining.setState(fresh(m.train_id, m.steps)),
  );
  on<{ train_id: string; steps: number[]; losses: number[] }>("train_progress", (m) => {
    const s = useTraining.getState();
    // new arrays: the chart and anything else subscribed see a change
    useTraining.setState({ steps: s.steps.concat(m.steps), losses: s.losses.concat(m.losses) });
  });
  on<TrainSnapshot>("train_snapshot", (m) => {
    const s = useTraining.getState();
    useTraining.setState({ snapshot: m, boundary: m.boundary ?? s.boundary, ...withAccuracy(s, m) });
    showOnCanvas(m);
  });
  on<TrainFinished>("train_finished", (m) => {
    const error = typeof m.error === "string" ? m.error : (m.error?.message ?? null);
    useTraining.setState({ status: m.status, error, queued: null });
    const ed = useEditor.getState();
    const accuracy = useTraining.getState().snapshot?.accuracy; // the last snapshot's: at the end
    if (m.graph && !useRun.getState().following) {
      ed.applyTrainedValues(m.graph);
      useTraining.setState({ written: paramsOf(m.graph) });
      ed.notify(
        `training ${m.status === "ok" ? "finished" : m.status} after ${m.steps} steps` +
          (m.loss != null ? `, loss ${m.loss.toPrecision(4)}` : "") +
          (accuracy != null ? `, ${formatAccuracy(accuracy)}` : "") +
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
    accuracySteps: [],
    accuracies: [],
    snapshot: null,
    boundary: null,
    error: null,
    queued: null,
  };
}

/** The accuracy curve with a snapshot's accuracy added (new arrays, for the chart), or no
 * change where the snapshot reports none or its step is there already. */
export function withAccuracy(
  s: Pick<TrainingState, "accuracySteps" | "accuracies">,
  m: Pick<TrainSnapshot, "step" | "accuracy">,
): Partial<TrainingState> {
  if (m.accuracy == null) return {};
  const last = s.accuracySteps.length ? s.accuracySteps[s.accuracySteps.length - 1] : -1;
  if (m.step <= last) return {};
  return { accuracySteps: s.accuracySteps.concat(m.step), accuracies: s.accuracies.concat(m.accuracy) };
}

/** The parameters' current values and gradients, written on their nodes. */
function showOnCanvas(m: TrainSnapshot) {
  // a node's own value; a linear layer's `name.weight` is no node's
  const values = Object.fromEntries(Object.entries(m.params).filter(([name]) => !name.includes(".")));
  useRun.getState().showValues(values, m.grads);
}

export const useTraining = create<TrainingState>()((set, get) => ({
  ...(fresh(null) as TrainingState),
  continueTrained: false,
  seeded: null,
  written: null,

  setContinueTrained: (on) => set({ continueTrained: on }),

  async start(settings) {
    listen();
    const ed = useEditor.getState();
    // a graph's first training: its params now are the seeded ones; a training again puts
    // them back first (one undoable edit), unless the teacher continues from trained values
    const { seeded, written, continueTrained } = get();
    if (!seeded || seeded.opened !== ed.opened)
      set({ seeded: { opened: ed.opened, params: paramsOf(ed.document()) }, written: null });
    else if (!continueTrained && written) {
      const restored = freshDocument(ed.document(), seeded.params, written);
      if (restored) {
        ed.applyTrainedValues(restored);
        ed.notify("training again from the seeded initial weights (Ctrl+Z undoes; or tick “continue from trained weights”)");
      }
    }
    set({ ...fresh(null), status: "starting" });
    type Ack = { train_id?: string; error?: string; node_errors?: NodeProblem[] };
    let ack: Ack;
    try {
      const pace = currentPace();
      const send = () =>
        getConnection().request<Ack>("train", {
          graph: ed.document(),
          config: settings,
          ...(pace !== null ? { steps_per_second: pace } : {}),
        });
      ack = await stream.request(send, (a) => {
        if (!a.train_id) return null;
        ed.setProblems([]);
        set({ ...fresh(a.train_id, settings.steps) });
        return a.train_id;
      });
    } catch (err) {
      set({ status: "error", error: (err as Error).message });
      return;
    }
    if (!ack.train_id) {
      ed.setProblems(ack.node_errors ?? []);
      set({ status: "error", error: ack.error ?? "training refused" });
      ed.notify(ack.error ?? "training refused", "error");
    }
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

// Another graph opened: the chart, the accuracy and the boundary were the last graph's, and a
// stale curve beside a new graph reads as its own. A training of this page's own still going
// is stopped: its trained values belong to the graph it started from. (A room joiner's page
// opens the room's graph first and catches up with its training after: catchUpTraining.)
useEditor.subscribe((s, prev) => {
  if (s.opened === prev.opened) return;
  const t = useTraining.getState();
  const going = t.status === "running" || t.status === "paused" || t.status === "queued";
  if (t.trainId && going && !useRun.getState().following) void t.control("stop");
  useTraining.setState(fresh(null));
});

/** A classifier's training accuracy (0..1) as the training tab writes it: "accuracy 97.3%".
 * Rounded down at one decimal, so that 99.96% does not read as a perfect 100.0%. */
export function formatAccuracy(accuracy: number): string {
  const tenths = Math.floor(accuracy * 1000 + 1e-9);
  return `accuracy ${(tenths / 10).toFixed(1)}%`;
}

/** Start listening for training events from the start: a room's follower sees the owner's. */
export function initTraining() {
  listen();
}

export interface TrainPacket {
  event: string;
  payload: { train_id: string; steps?: number | number[]; step?: number };
}

/** A room joiner catches up with the owner's training from the join ack's `training`: the
 * loss points so far (downsampled by the server), the step reached, the last snapshot (its
 * boundary, its values on the canvas) and how it ended. `early`: the room's training packets
 * that came before the ack (they are newer than what it holds), applied after it in order. */
export function catchUpTraining(t: RoomTraining | null, early: readonly TrainPacket[] = []) {
  listen();
  if (t) {
    const error = t.finished?.error;
    useTraining.setState({
      ...fresh(t.train_id, t.steps),
      status: t.status,
      steps: t.progress.steps,
      losses: t.progress.losses,
      snapshot: t.snapshot,
      boundary: t.snapshot?.boundary ?? null,
      // the room keeps the last snapshot only: the accuracy curve starts there
      ...(t.snapshot ? withAccuracy({ accuracySteps: [], accuracies: [] }, t.snapshot) : {}),
      error: typeof error === "string" ? error : (error?.message ?? null),
    });
    if (t.snapshot) showOnCanvas(t.snapshot);
  }
  for (const { event, payload } of early) {
    const s = useTraining.getState();
    if (event === "train_started") {
      if (payload.train_id !== s.trainId) useTraining.setState(fresh(payload.train_id, payload.steps as number));
    } else if (payload.train_id === s.trainId) {
      const last = s.steps.length ? s.steps[s.steps.length - 1] : 0;
      // (a packet the ack holds already is not applied twice)
      if (event === "train_progress" && (payload.steps as number[]).every((n) => n <= last)) continue;
      if (event === "train_snapshot" && (payload.step ?? 0) <= (s.snapshot?.step ?? -1)) continue;
      if (event === "train_finished" && !(s.status === "running" || s.status === "paused")) continue;
      handlers[event]?.(payload as never);
    }
  }
}
