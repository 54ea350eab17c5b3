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
import { getConnection } from "./connection";
import { useEditor } from "./editor";
import { currentPace, type Pace } from "./pace";
import { useRun } from "./run";

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

  // what the connection pushes and what other stores tell (store/reactions.ts)
  /** A training packet: applied when it is this page's training's, held while an ack is
   * awaited, else dropped (a stopped training's late packets, or another client's); a room
   * owner's training on a follower's page, or the kernel's own (`w.train`), is adopted. */
  received(packet: TrainPacket): void;
  /** A room joiner catches up with the owner's training from the join ack's `training`: the
   * loss points so far (downsampled by the server), the step reached, the last snapshot (its
   * boundary, its values on the canvas) and how it ended. `early`: the room's training packets
   * that came before the ack (they are newer than what it holds), applied after it in order. */
  catchUp(t: RoomTraining | null, early?: readonly TrainPacket[]): void;
  /** Another graph opened: the chart, the accuracy and the boundary were the last graph's, and
   * a stale curve beside a new graph reads as its own. A training of this page's own still
   * going is stopped: its trained values belong to the graph it started from. */
  openedAnother(): void;
}

/** The training events the server pushes (store/reactions.ts listens to them). */
export const TRAIN_EVENTS = ["train_queued", "train_started", "train_progress", "train_snapshot", "train_finished"];

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

  /** A snapshot's values, as the canvas shows them on their nodes: a node's own value (a linear
   * layer's `name.weight` is no node's), and the gradients (store/reactions.ts writes them). */
  export function snapshotValues(m: TrainSnapshot): { values: TrainSnapshot["params"]; grads: TrainSnapshot["grads"] } {
    return { values: Object.fromEntries(Object.entries(m.params).filter(([name]) => !name.includes("."))), grads: m.grads };
  }

  export const useTraining = create<TrainingState>()((set, get) => {
    // each event's effect on this store
    const apply: Record<string, (payload: never) => void> = {
      train_queued: (m: { position: number; running: number | null }) =>
        set({ status: "queued", queued: { position: m.position, running: m.running } }),
      train_started: (m: { steps: number }) => set({ totalSteps: m.steps, status: "running", queued: null }),
      train_progress: (m: { steps: number[]; losses: number[] }) => {
        const s = get();
        // new arrays: the chart and anything else subscribed see a change
        set({ steps: s.steps.concat(m.steps), losses: s.losses.concat(m.losses) });
      },
      train_snapshot: (m: TrainSnapshot) => {
        const s = get();
        set({ snapshot: m, boundary: m.boundary ?? s.boundary, ...withAccuracy(s, m) });
      },
      train_finished: (m: TrainFinished) => {
        const error = typeof m.error === "string" ? m.error : (m.error?.message ?? null);
        set({ status: m.status, error, queued: null });
        const ed = useEditor.getState();
        const accuracy = get().snapshot?.accuracy; // the last snapshot's: at the end
        if (m.graph && !useRun.getState().following) {
          ed.applyTrainedValues(m.graph);
          set({ written: paramsOf(m.graph) });
          ed.notify(
            `training ${m.status === "ok" ? "finished" : m.status} after ${m.steps} steps` +
              (m.loss != null ? `, loss ${m.loss.toPrecision(4)}` : "") +
              (accuracy != null ? `, ${formatAccuracy(accuracy)}` : "") +
              ": the trained values are in the graph (Ctrl+Z undoes)",
          );
        } else if (error) ed.notify(`training failed: ${error}`, "error");
      },
    };
    // A training's first packets (even all of them, for a short one) can overtake the ack that
    // names it: the server starts the training before it answers (api/ackedStream.ts).
    const stream = new AckedStream<TrainPacket>(
      () => get().trainId,
      ({ event, payload }) => apply[event]?.(payload as never),
    );

    return {
    ...(fresh(null) as TrainingState),
    continueTrained: false,
    seeded: null,
    written: null,

    setContinueTrained: (on) => set({ continueTrained: on }),

    async start(settings) {
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

    received(packet) {
      const m = packet.payload as TrainPacket["payload"] & { adopt?: boolean };
      // a room owner's training on a follower's page, or the kernel's own (`w.train`)
      const adopted = m.adopt === true;
      if (packet.event === "train_started" && m.train_id !== get().trainId && (useRun.getState().following || adopted))
        set(fresh(m.train_id, m.steps as number));
      else stream.receive(m.train_id, packet);
    },

    catchUp(t, early = []) {
      if (t) {
        const error = t.finished?.error;
        set({
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
      }
      for (const { event, payload } of early) {
        const s = get();
        if (event === "train_started") {
          if (payload.train_id !== s.trainId) set(fresh(payload.train_id, payload.steps as number));
        } else if (payload.train_id === s.trainId) {
          const last = s.steps.length ? s.steps[s.steps.length - 1] : 0;
          // (a packet the ack holds already is not applied twice)
          if (event === "train_progress" && (payload.steps as number[]).every((n) => n <= last)) continue;
          if (event === "train_snapshot" && (payload.step ?? 0) <= (s.snapshot?.step ?? -1)) continue;
          if (event === "train_finished" && !(s.status === "running" || s.status === "paused")) continue;
          apply[event]?.(payload as never);
        }
      }
    },

    openedAnother() {
      const t = get();
      const going = t.status === "running" || t.status === "paused" || t.status === "queued";
      if (t.trainId && going && !useRun.getState().following) void t.control("stop");
      set(fresh(null));
    },
  };
});

/** A classifier's training accuracy (0..1) as the training tab writes it: "accuracy 97.3%".
 * Rounded down at one decimal, so that 99.96% does not read as a perfect 100.0%. */
export function formatAccuracy(accuracy: number): string {
  const tenths = Math.floor(accuracy * 1000 + 1e-9);
  return `accuracy ${(tenths / 10).toFixed(1)}%`;
}

export interface TrainPacket {
  event: string;
  payload: { train_id: string; steps?: number | number[]; step?: number };
}
