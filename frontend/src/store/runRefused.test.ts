// A refused run (the graph's problems, a server limit, no connection) never leaves the run
// before it on screen as the answer: the status is "refused", the values go, the problems
// are at their nodes.
import { beforeEach, describe, expect, it, vi } from "vitest";

const fake = vi.hoisted(() => ({ ack: null as null | (() => Promise<unknown>) }));

vi.mock("../api/socket", () => ({
  Connection: class {
    run() {
      return fake.ack!();
    }
  },
}));

import { refusalSummary } from "../panels/toolbar/RunControls";
import { emptyAnnotations } from "./annotations";
import { useEditor } from "./editor";
import { refusalOf, useRun } from "./run";
import { squareOfASum } from "../testing/documents";

const finishedOk = { run_id: "r1", status: "ok" as const, timings: { total_ms: 12 }, records: 3, target: null };

describe("a refused run", () => {
  beforeEach(() => {
    useEditor.getState().load(squareOfASum());
    // a run that went well before it: its values on screen, its status "ok"
    useRun.setState({
      runId: "r1",
      finished: finishedOk,
      refused: null,
      annotations: { ...emptyAnnotations(), values: { s: {} as never } },
      viewing: { node: "s", kind: "value" },
    });
  });

  it("says where the graph's first problem is, and clears the last run's values", async () => {
    const node = useEditor.getState().nodes[0].id;
    fake.ack = async () => ({
      error: "the graph has 2 problems",
      node_errors: [
        { node, message: "matmul: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)" },
        { node: null, message: "the graph has a cycle" },
      ],
    });
    await useRun.getState().start("forward");
    const s = useRun.getState();
    expect(s.finished).toBeNull();
    expect(s.runId).toBeNull();
    expect(s.annotations.values).toEqual({});
    expect(s.viewing).toBeNull();
    expect(s.refused).toEqual({
      node,
      message: `the graph has 2 problems at ${node}: matmul: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)`,
    });
    expect(refusalSummary(s.refused!)).toBe(`refused at ${node}`);
    // the problems stand at their nodes, and the notice says the first
    expect(useEditor.getState().problems.map((p) => p.node)).toEqual([node, null]);
    expect(useEditor.getState().notice).toEqual({ text: s.refused!.message, tone: "error" });
  });

  it("gives the server's reason where no node is to blame", async () => {
    fake.ack = async () => ({ error: "too many runs: at most 20; try again in 1.5 s" });
    await useRun.getState().start("backward", "s");
    expect(useRun.getState().refused).toEqual({ message: "too many runs: at most 20; try again in 1.5 s", node: null });
    expect(refusalSummary(useRun.getState().refused!)).toBe("refused");
    expect(useRun.getState().finished).toBeNull();
  });

  it("is a refusal too when the server cannot be asked", async () => {
    fake.ack = async () => {
      throw new Error("not connected to the server");
    };
    await useRun.getState().start("forward");
    expect(useRun.getState().refused?.message).toBe("not connected to the server");
    expect(useRun.getState().annotations.values).toEqual({});
  });

  it("is forgotten by the next run that starts", async () => {
    fake.ack = async () => ({ error: "the graph has 1 problem", node_errors: [{ node: null, message: "x" }] });
    await useRun.getState().start("forward");
    expect(useRun.getState().refused).not.toBeNull();
    fake.ack = async () => ({ run_id: "r2" });
    await useRun.getState().start("forward");
    expect(useRun.getState().refused).toBeNull();
    expect(useRun.getState().runId).toBe("r2");
    expect(useRun.getState().running).toBe(true);
  });

  it("words one problem without a plural, and one without a node without a place", () => {
    expect(refusalOf({ error: "e", node_errors: [{ node: null, message: "m" }] })).toEqual({
      message: "the graph has 1 problem: m",
      node: null,
    });
    expect(refusalOf({ error: "invalid graph document: nodes", node_errors: [] })).toEqual({
      message: "invalid graph document: nodes",
      node: null,
    });
  });
});
