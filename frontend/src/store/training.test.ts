// The training store against a fake connection: a short training's packets can all arrive
// before the ack of `train` names its id, and none of them may be lost.
import { beforeEach, describe, expect, it, vi } from "vitest";

type Handler = (payload: unknown) => void;
const fake = vi.hoisted(() => ({
  handlers: new Map<string, Handler>(),
  // what `request("train")` does before it answers: emit packets, then resolve with the ack
  onTrain: null as null | (() => Promise<unknown>),
  requests: [] as [string, unknown][],
}));

vi.mock("./connection", () => {
  const connection = {
    on: (event: string, handler: Handler) => {
      fake.handlers.set(event, handler);
      return () => {};
    },
    onStatus: () => () => {},
    onRuns: () => () => {},
    request: (event: string, payload: unknown) => {
      fake.requests.push([event, payload]);
      if (event === "train_control") return Promise.resolve({ ok: true });
      if (event !== "train" || !fake.onTrain) return Promise.reject(new Error(`no ${event}`));
      return fake.onTrain();
    },
  };
  return { getConnection: () => connection };
});

import { useEditor } from "./editor";
import { startReactions } from "./reactions";
import { formatAccuracy, useTraining, withAccuracy } from "./training";
import { emptyDocument } from "../doc/convert";
import type { TrainingSettings } from "../api/types";

const settings = { loss: "loss", output: null, optimizer: "adam", lr: 0.1, momentum: 0, steps: 3, batch_size: 0, seed: 0 } as TrainingSettings;
const emit = (event: string, payload: unknown) => fake.handlers.get(event)!(payload);
const snapshot = (id: string, step: number) => ({ train_id: id, step, params: {}, grads: {} });
const finished = (id: string) => ({ train_id: id, status: "ok", steps: 3, loss: 0.55, graph: emptyDocument() });

// the page's wiring: the connection's training events to the store, another graph to it
startReactions();

describe("training store", () => {
  beforeEach(() => {
    useEditor.getState().load(emptyDocument());
    useEditor.setState({ notice: null });
  });

  it("shows a queued training's place, then runs it when its turn comes", async () => {
    let resolveAck: (ack: unknown) => void = () => {};
    fake.onTrain = () => new Promise((resolve) => (resolveAck = resolve));
    const started = useTraining.getState().start(settings);
    resolveAck({ train_id: "q1" });
    await started;
    emit("train_queued", { train_id: "q1", position: 2, running: 2 });
    expect(useTraining.getState().status).toBe("queued");
    expect(useTraining.getState().queued).toEqual({ position: 2, running: 2 });
    emit("train_queued", { train_id: "q1", position: 1, running: 2 });
    expect(useTraining.getState().queued?.position).toBe(1);
    emit("train_started", { train_id: "q1", steps: 3, params: ["w"] });
    expect(useTraining.getState().status).toBe("running");
    expect(useTraining.getState().queued).toBeNull();
    emit("train_finished", finished("q1"));
    expect(useTraining.getState().status).toBe("ok");
  });

  it("keeps every packet that came before the ack, in order, and drops other trainings'", async () => {
    fake.onTrain = async () => {
      emit("train_progress", { train_id: "old", steps: [9], losses: [9] }); // a stopped one's
      emit("train_started", { train_id: "t1", steps: 3, params: ["w"] });
      emit("train_progress", { train_id: "t1", steps: [1, 2], losses: [0.9, 0.7] });
      emit("train_progress", { train_id: "t1", steps: [3], losses: [0.55] });
      emit("train_snapshot", snapshot("t1", 3));
      emit("train_finished", finished("t1"));
      return { train_id: "t1" };
    };
    await useTraining.getState().start(settings);
    const s = useTraining.getState();
    expect(s.trainId).toBe("t1");
    expect(s.steps).toEqual([1, 2, 3]);
    expect(s.losses).toEqual([0.9, 0.7, 0.55]);
    expect(s.snapshot?.step).toBe(3);
    expect(s.status).toBe("ok");
    expect(s.totalSteps).toBe(3);
    expect(useEditor.getState().notice?.text).toMatch(/finished after 3 steps, loss 0\.5500/);
  });

  it("takes packets after the ack as before, and ignores late packets once the ack is in", async () => {
    fake.onTrain = async () => {
      emit("train_started", { train_id: "t2", steps: 3, params: [] });
      return { train_id: "t2" };
    };
    await useTraining.getState().start(settings);
    expect(useTraining.getState().status).toBe("running");
    emit("train_progress", { train_id: "t2", steps: [1], losses: [0.5] });
    emit("train_progress", { train_id: "t1", steps: [4], losses: [0.1] }); // not this one
    expect(useTraining.getState().steps).toEqual([1]);
    expect(useTraining.getState().losses).toEqual([0.5]);
  });

  it("drops the held packets when the training is refused", async () => {
    fake.onTrain = async () => {
      emit("train_progress", { train_id: "t0", steps: [1], losses: [0.5] });
      return { error: "invalid training settings: lr", node_errors: [] };
    };
    await useTraining.getState().start(settings);
    expect(useTraining.getState().status).toBe("error");
    expect(useTraining.getState().steps).toEqual([]);
    // a later training with the same id would not see them either
    fake.onTrain = async () => ({ train_id: "t0" });
    await useTraining.getState().start(settings);
    expect(useTraining.getState().steps).toEqual([]);
  });

  it("keeps a classifier's accuracy from the last snapshot and says it when the training ends", async () => {
    fake.onTrain = async () => {
      emit("train_started", { train_id: "t3", steps: 3, params: ["w"] });
      emit("train_progress", { train_id: "t3", steps: [1, 2, 3], losses: [2.3, 1.1, 0.55] });
      emit("train_snapshot", { ...snapshot("t3", 2), accuracy: 0.5 });
      emit("train_snapshot", { ...snapshot("t3", 3), accuracy: 0.97331 });
      emit("train_finished", finished("t3"));
      return { train_id: "t3" };
    };
    await useTraining.getState().start(settings);
    expect(useTraining.getState().snapshot?.accuracy).toBe(0.97331);
    expect(useEditor.getState().notice?.text).toMatch(/loss 0\.5500, accuracy 97\.3%: the trained values/);
    // the chart's accuracy curve: one point a snapshot that reported one
    expect(useTraining.getState().accuracySteps).toEqual([2, 3]);
    expect(useTraining.getState().accuracies).toEqual([0.5, 0.97331]);
  });

  it("adds a snapshot's accuracy once, in step order, and none for a regression", () => {
    const none = { accuracySteps: [], accuracies: [] };
    expect(withAccuracy(none, { step: 4 })).toEqual({});
    const one = withAccuracy(none, { step: 4, accuracy: 0.25 });
    expect(one).toEqual({ accuracySteps: [4], accuracies: [0.25] });
    const s = one as typeof none;
    expect(withAccuracy(s, { step: 4, accuracy: 0.3 })).toEqual({}); // sent already (a stop after a pause)
    expect(withAccuracy(s, { step: 9, accuracy: 0 })).toEqual({ accuracySteps: [4, 9], accuracies: [0.25, 0] });
  });

  it("clears the chart when another graph opens, and stops this page's training still going", async () => {
    fake.onTrain = async () => {
      emit("train_started", { train_id: "t4", steps: 300, params: ["w"] });
      emit("train_progress", { train_id: "t4", steps: [1, 2], losses: [2.3, 1.1] });
      emit("train_snapshot", { ...snapshot("t4", 2), accuracy: 0.5 });
      return { train_id: "t4" };
    };
    await useTraining.getState().start(settings);
    expect(useTraining.getState().status).toBe("running");
    fake.requests = [];
    useEditor.getState().load(emptyDocument()); // another graph
    const s = useTraining.getState();
    expect([s.trainId, s.status, s.steps, s.losses, s.accuracies, s.snapshot]).toEqual([null, "idle", [], [], [], null]);
    expect(fake.requests).toEqual([["train_control", { train_id: "t4", action: "stop" }]]);
    // its late packets are not this graph's
    emit("train_progress", { train_id: "t4", steps: [3], losses: [0.9] });
    emit("train_finished", finished("t4"));
    expect(useTraining.getState().steps).toEqual([]);
    expect(useTraining.getState().status).toBe("idle");
  });

  it("keeps the chart when the same graph is loaded again in place (a room's update)", async () => {
    fake.onTrain = async () => {
      emit("train_started", { train_id: "t5", steps: 2, params: ["w"] });
      emit("train_progress", { train_id: "t5", steps: [1, 2], losses: [2.3, 1.1] });
      emit("train_finished", finished("t5"));
      return { train_id: "t5" };
    };
    await useTraining.getState().start(settings);
    useEditor.getState().load(emptyDocument(), { keepView: true });
    expect(useTraining.getState().losses).toEqual([2.3, 1.1]);
  });

  it("writes the accuracy in tenths of a percent, never rounding up to a perfect score", () => {
    expect(formatAccuracy(0.97331)).toBe("accuracy 97.3%");
    expect(formatAccuracy(0.9996)).toBe("accuracy 99.9%");
    expect(formatAccuracy(1)).toBe("accuracy 100.0%");
    expect(formatAccuracy(0)).toBe("accuracy 0.0%");
    // 1,777 of the 1,797 digits: 98.887...%
    expect(formatAccuracy(1777 / 1797)).toBe("accuracy 98.8%");
  });
});
