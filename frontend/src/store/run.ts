// Runs: the run in progress, the annotations its records made, and step
// mode's replay. Records arrive in batches (one trace packet); each batch is folded into the
// annotation tables once, so a 1,000-edge run costs a handful of store updates.
import { create } from "zustand";
import { AckedStream } from "../api/ackedStream";
import type { RunOptions } from "../api/socket";
import type { GraphDocument, RunFinished, RunMode, Summary, TraceRecord } from "../api/types";
import { type Annotations, applyRecords, emptyAnnotations, recordFocus } from "./annotations";
import { getConnection } from "./connection";
import { useEditor } from "./editor";
import { nameOf } from "./names";
import { ProbeRuns, type RunPacket } from "./probeRuns";
import { RecordFeed } from "./recordFeed";

export interface StepState {
  index: number; // how many of the run's records are shown
  playing: boolean;
  speed: number; // records per second
}

export interface RunState {
  connected: boolean;
  everConnected: boolean;
  runId: string | null; // the latest run (running or finished); tensors are fetched from it
  running: boolean;
  mode: RunMode | null;
  target: string | null;
  finished: RunFinished | null;
  /** The last run asked for was refused before it started (the graph's problems, a limit,
   * no connection): the status line says so, never the run before it's "ok". */
  refused: RunRefusal | null;
  records: TraceRecord[]; // every record of the latest run, for step mode
  annotations: Annotations;
  step: StepState | null; // null: annotations show the whole run
  focus: { node?: string; edge?: string };
  selectedEdge: string | null;
  viewing: TensorRef | null; // what the tensor viewer shows
  viewWindow: boolean; // shown in a window of its own (panels/analysis/FloatingWindow.tsx)
  options: RunOptions; // the teaching toggles: accumulate .grad, backward twice, retain_graph, ones, no_grad
  following: boolean; // in a room as a follower: the owner's runs are shown here

  start(mode: RunMode, target?: string | null): Promise<void>;
  /** A run refused before it started: said in the status line and a notice, the last run's
   * values cleared. */
  refuse(refusal: RunRefusal): void;
  cancel(): Promise<void>;
  clear(): void;
  enterStep(): void;
  exitStep(): void;
  stepTo(index: number): void;
  setPlaying(playing: boolean): void;
  setSpeed(speed: number): void;
  selectEdge(id: string | null): void;
  view(ref: TensorRef | null): void;
  /** The tensor viewer in a window of its own (true) or in its side panel tab. */
  popOut(on: boolean): void;
  setOption(name: keyof RunOptions, on: boolean): void;
  setOptions(options: RunOptions): void;
  adopt(runId: string, mode: RunMode, target: string | null): void;
  /** What a room has already seen of its owner's last run (null: none yet), shown at once. */
  catchUp(started: RunStarted | null, records: TraceRecord[], finished: RunFinished | null): void;
  setFollowing(on: boolean): void;
  /** Values and leaf gradients written on their nodes outside a run (a training's snapshot). */
  showValues(values: Record<string, Summary>, leafGrads: Record<string, Summary>): void;
  /** The annotations shown, with numbers taken out or put back (a question to a class hides
   * the number it asks about: store/quiz.ts). */
  replaceAnnotations(annotations: Annotations): void;

  // what the connection pushes (store/reactions.ts hands it over)
  /** The connection came or went; a dropped connection ends the run on the server. */
  setConnected(connected: boolean): void;
  /** A run the server started: shown if it is a room owner's run while following, or the
   * kernel's own (`adopt`: `w.run` in a notebook). */
  started(runId: string, mode: RunMode, target: string | null, adopt: boolean): void;
  /** A run's packet: shown if it is the shown run's, else taken by a probe if it is one's,
   * else dropped (a cancelled run's late ones). */
  received(runId: string, packet: RunPacket): void;
  /** Run `doc` forward without showing it (one at a time: store/probeRuns.ts); resolves with
   * the finished run's id. */
  probeForward(doc: GraphDocument): Promise<string>;
}

export interface RunRefusal {
  message: string;
  node: string | null; // the node of the first problem, where there is one
}

/** What a refused run's ack says, in one line: the count of problems and the first at its
 * node, else the server's reason. */
export function refusalOf(ack: { error: string; node_errors?: { node?: string | null; message: string }[] }): RunRefusal {
  const problems = ack.node_errors ?? [];
  const first = problems[0];
  if (!first) return { message: ack.error, node: null };
  const n = problems.length;
  const where = first.node ? ` at ${nameOf(first.node)}` : "";
  return { message: `the graph has ${n} problem${n > 1 ? "s" : ""}${where}: ${first.message}`, node: first.node ?? null };
}

/** A run that started, as a room tells a page that joins it. */
export interface RunStarted {
  run_id: string;
  mode: RunMode;
  target: string | null;
}

/** A tensor of the latest run: a node's value or gradient, an edge's gradient, or a linear
 * node's own weight/bias (`param`). */
export interface TensorRef {
  node?: string;
  edge?: string;
  kind: "value" | "grad";
  param?: "weight" | "bias";
}

export const useRun = create<RunState>()((set, get) => {
  // the records waiting for a frame, the shown run's packets held until its ack, the probes:
  // this store's own, for its life (the page's)
  const feed = new RecordFeed(
    (batch) => {
      const s = get();
      if (batch.length && !s.step) set({ annotations: applyRecords(s.annotations, batch) });
    },
    (finished) => finish(finished),
  );
  // A run's packets: its records and, last, run_finished. Its first ones can overtake the ack
  // that names it (api/ackedStream.ts holds them until it arrives).
  const stream = new AckedStream<RunPacket>(
    () => get().runId,
    (p) => ("records" in p ? receive(p.records) : feed.finished(p.finished)),
  );
  const probes = new ProbeRuns(getConnection);

  function receive(records: TraceRecord[]) {
    set((s) => ({ records: s.records.concat(records) }));
    feed.push(records);
  }

  function finish(finished: RunFinished) {
    set({ running: false, finished });
    const ed = useEditor.getState();
    if (finished.status === "error" && finished.error)
      ed.notify(
        `${finished.error.node ? `${nameOf(finished.error.node)}: ` : ""}${finished.error.message}`,
        "error",
      );
    else if (finished.status === "cancelled") ed.notify("run cancelled");
    else
      ed.notify(
        // the records shown (finished.records counts wire records: a pack counts one)
        `${get().mode} run finished in ${Math.round(finished.timings.total_ms ?? 0)} ms (${get().records.length} records)`,
      );
  }

  return {
    connected: false,
    everConnected: false,
    runId: null,
    running: false,
    mode: null,
    target: null,
    finished: null,
    refused: null,
    records: [],
    annotations: emptyAnnotations(),
    step: null,
    focus: {},
    selectedEdge: null,
    viewing: null,
    viewWindow: false,
    options: {},
    following: false,

    async start(mode, target) {
      const ed = useEditor.getState();
      const doc = ed.document();
      let ack;
      try {
        ack = await stream.request(
          () => getConnection().run(doc, mode, target, get().options),
          (a) => {
            if ("error" in a) return null;
            ed.setProblems([]);
            get().adopt(a.run_id, mode, target ?? doc.target ?? null);
            return a.run_id;
          },
        );
      } catch (err) {
        get().refuse({ message: String((err as Error).message), node: null });
        return;
      }
      if ("error" in ack) {
        ed.setProblems(ack.node_errors ?? []);
        get().refuse(refusalOf(ack));
        return;
      }
    },

    refuse(refusal) {
      // the last run's values and gradients are not this graph's (it changed since, or could
      // not run at all): they go, with the tensor they were viewed in, rather than stand as
      // the answer to the run that was refused
      feed.clear();
      set({
        runId: null,
        running: false,
        finished: null,
        refused: refusal,
        records: [],
        annotations: emptyAnnotations(),
        step: null,
        focus: {},
        viewing: null,
        viewWindow: false,
      });
      useEditor.getState().notify(refusal.message, "error");
    },

    async cancel() {
      const { runId, running } = get();
      if (runId && running) await getConnection().cancel(runId).catch(() => {});
    },

    clear() {
      set({ records: [], annotations: emptyAnnotations(), finished: null, refused: null, step: null, focus: {} });
    },

    enterStep() {
      if (!get().records.length) return;
      // paused at the start: the person (or the teacher) moves through it at their own pace
      set({ step: { index: 0, playing: false, speed: 4 }, annotations: emptyAnnotations(), focus: {} });
    },

    exitStep() {
      set({ step: null, annotations: applyRecords(emptyAnnotations(), get().records), focus: {} });
    },

    stepTo(index) {
      const { step, records, annotations } = get();
      if (!step) return;
      const i = Math.max(0, Math.min(records.length, index));
      // forward steps fold one more record in; going back replays from the start
      const next =
        i >= step.index
          ? applyRecords(annotations, records.slice(step.index, i))
          : applyRecords(emptyAnnotations(), records.slice(0, i));
      set({
        step: { ...step, index: i, playing: step.playing && i < records.length },
        annotations: next,
        focus: i > 0 ? recordFocus(records[i - 1]) : {},
      });
    },

    setPlaying(playing) {
      const step = get().step;
      if (step) set({ step: { ...step, playing } });
    },

    setSpeed(speed) {
      const step = get().step;
      if (step) set({ step: { ...step, speed } });
    },

    selectEdge(id) {
      set({ selectedEdge: id });
    },

    view(ref) {
      // nothing to view: the window goes, and the next tensor opens in the panel again
      set(ref ? { viewing: ref } : { viewing: null, viewWindow: false });
    },

    popOut(on) {
      set({ viewWindow: on });
    },

    setOption(name, on) {
      set({ options: { ...get().options, [name]: on } });
    },

    setOptions(options) {
      set({ options });
    },

    /** Show `runId` from its start: a run this page started, or one it did not (the room
     * owner's, while following a room). */
    adopt(runId, mode, target) {
      feed.clear();
      set({
        runId,
        running: true,
        mode,
        target,
        finished: null,
        refused: null,
        records: [],
        annotations: emptyAnnotations(),
        step: null,
        focus: {},
      });
    },

    catchUp(started, records, finished) {
      set({
        runId: started?.run_id ?? null,
        mode: started?.mode ?? null,
        target: started?.target ?? null,
        // if it is still going, its next packets continue it here
        running: Boolean(started && !finished),
        finished,
        refused: null,
        records,
        annotations: applyRecords(emptyAnnotations(), records),
        step: null,
        focus: {},
      });
    },

    setFollowing(on) {
      set({ following: on });
    },

    showValues(values, leafGrads) {
      const a = get().annotations;
      set({ annotations: { ...a, values: { ...a.values, ...values }, leafGrads: { ...a.leafGrads, ...leafGrads } } });
    },

    replaceAnnotations(annotations) {
      set({ annotations });
    },

    setConnected(connected) {
      set((s) => ({
        connected,
        everConnected: s.everConnected || connected,
        // a dropped connection ends the run on the server (disconnect cancels it)
        running: connected ? s.running : false,
      }));
    },

    started(runId, mode, target, adopt) {
      // a room owner's run on a follower's page, or the kernel's own (`w.run` in a notebook)
      if (get().following || adopt) get().adopt(runId, mode, target);
    },

    received(runId, packet) {
      void (stream.receive(runId, packet) || probes.receive(runId, packet));
    },

    probeForward(doc) {
      return probes.forward(doc);
    },
  };
});
