// A lesson step that asks the room (docs/graph-format.md, "Lesson steps that ask"), against a
// fake connection: what the step's predict names as a question, and a student's page that
// hides every gradient from the moment the teacher reaches the step, through the question,
// until the reveal; a joiner whose room's question is over hides nothing.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { emit, fake } from "../testing/fakeConnection";

vi.mock("./connection", async () => (await import("../testing/fakeConnection")).connectionModule);

import type { GraphDocument, Summary, TraceRecord } from "../api/types";
import { squareOfASum } from "../testing/documents";
import { emptyAnnotations } from "./annotations";
import { useEditor } from "./editor";
import { predictTarget, useLesson } from "./lesson";
import { type QuizView, useQuiz } from "./quiz";
import { lessonKeys } from "./quizMask";
import { startReactions } from "./reactions";
import { useRoom } from "./room";
import { useRun } from "./run";

const num = (v: number) => ({ shape: [], dtype: "float32", numel: 1, preview: v }) as unknown as Summary;

/** z = (x + y)², x = 2, y = 3; step 2 asks for the gradient on a → z. */
function lessonDoc(): GraphDocument {
  return {
    ...squareOfASum(),
    lesson: [
      { text: "forward", select: [], run: "forward" },
      { text: "predict", select: ["a"], run: "backward", predict: { edge: "a-z", what: "grad", prompt: "What does z send to a?" } },
      { text: "explain", select: [], run: null },
    ],
  };
}

// a backward run: values, then the gradients the lesson's question is about and around it
const backward: TraceRecord[] = [
  { kind: "value", node: "x", summary: num(2) },
  { kind: "value", node: "y", summary: num(3) },
  { kind: "value", node: "a", summary: num(5) },
  { kind: "value", node: "z", summary: num(25) },
  { kind: "edge_grad", edge: "a-z", source: "a", target: "z", summary: num(10) },
  { kind: "node_grad", node: "a", summary: num(10) },
  { kind: "edge_grad", edge: "x-a", source: "x", target: "a", summary: num(10) },
  { kind: "leaf_grad", node: "x", param: null, summary: num(10) },
] as unknown as TraceRecord[];

const shown = () => {
  const a = useRun.getState().annotations;
  return { edges: Object.keys(a.edgeGrads).sort(), leaves: Object.keys(a.leafGrads), values: Object.keys(a.values).sort() };
};

const open: QuizView = {
  quiz_id: "0123456789ab",
  target: { kind: "grad", id: "a-z", label: "the gradient on a → z" },
  question: "What does z send to a?",
  names: false,
  status: "open",
  shape: [],
};

describe("what a lesson step asks", () => {
  const nodes = lessonDoc().nodes;
  const edges = lessonDoc().edges;
  it("names an edge's gradient, the value on an edge, a node's value, a leaf's .grad, a total gradient", () => {
    useEditor.getState().load(lessonDoc());
    expect(predictTarget({ edge: "a-z" }, nodes, edges)).toMatchObject({ kind: "grad", id: "a-z" });
    expect(predictTarget({ edge: "a-z", what: "value" }, nodes, edges)).toMatchObject({ kind: "value", id: "a" });
    expect(predictTarget({ node: "z", what: "value" }, nodes, edges)).toMatchObject({ kind: "value", id: "z" });
    expect(predictTarget({ node: "x" }, nodes, edges, { x: num(10) })).toEqual({ kind: "leaf_grad", id: "x", label: "x.grad" });
    expect(predictTarget({ node: "a" }, nodes, edges, { x: num(10) })).toMatchObject({ kind: "node_grad", id: "a" });
  });
  it("says so when the graph no longer has the edge or node", () => {
    expect(predictTarget({ edge: "gone" }, nodes, edges)).toMatch(/no longer has/);
    expect(predictTarget({ node: "gone" }, nodes, edges)).toMatch(/no longer has/);
  });
  it("hides every gradient for a gradient, and a value with the values computed from it", () => {
    const a = emptyAnnotations();
    a.leafGrads = { x: num(1) };
    a.nodeGrads = { a: num(1) };
    const grad = lessonKeys({ kind: "grad", id: "a-z", label: "" }, edges, a);
    expect(grad.edgeGrads?.sort()).toEqual(["a-z", "x-a", "y-a"]);
    expect([grad.leafGrads, grad.nodeGrads, grad.values]).toEqual([["x"], ["a"], undefined]);
    expect(lessonKeys({ kind: "value", id: "a", label: "" }, edges, a).values?.sort()).toEqual(["a", "z"]);
  });
});

describe("a student's page at a lesson step that asks", () => {
  let stop = () => {};
  beforeEach(async () => {
    stop();
    fake.requests = [];
    useQuiz.getState().leave();
    useRoom.setState({ code: null, role: null, welcome: null, trouble: null });
    useEditor.getState().load(squareOfASum());
    useRun.getState().catchUp(null, [], null);
    stop = startReactions();
    fake.replies.set("room_join", { code: "ABCDEF", graph: lessonDoc(), lesson: 0, run_started: null, records: [], quiz: null });
    expect(await useRoom.getState().join("abcdef")).toBeNull();
  });

  it("hides every gradient from the step on, through the question, until the reveal", () => {
    emit("room_lesson", { code: "ABCDEF", index: 1 });
    expect(useLesson.getState().index).toBe(1);
    // the teacher's backward reaches the page before the question does: no gradient shows
    useRun.getState().catchUp({ run_id: "r1", mode: "backward", target: "z" }, backward, null);
    expect(shown()).toEqual({ edges: [], leaves: [], values: ["a", "x", "y", "z"] });
    expect(useQuiz.getState().hiddenEdges.sort()).toEqual(["a-z", "x-a", "y-a"]);
    // the question comes: still nothing
    emit("room_quiz", { code: "ABCDEF", quiz: open });
    expect(useQuiz.getState().quiz?.question).toBe("What does z send to a?");
    expect(shown().edges).toEqual([]);
    // the reveal gives them all back
    emit("room_quiz", { code: "ABCDEF", quiz: { ...open, status: "revealed", truth: 10, truth_shown: "10", verdicts: {} } });
    expect(shown()).toEqual({ edges: ["a-z", "x-a"], leaves: ["x"], values: ["a", "x", "y", "z"] });
    expect(useQuiz.getState().hiddenEdges).toEqual([]);
  });

  it("shows the gradients again at a step that asks nothing", () => {
    emit("room_lesson", { code: "ABCDEF", index: 1 });
    useRun.getState().catchUp({ run_id: "r1", mode: "backward", target: "z" }, backward, null);
    expect(shown().edges).toEqual([]);
    emit("room_lesson", { code: "ABCDEF", index: 2 });
    expect(shown().edges).toEqual(["a-z", "x-a"]);
  });

  it("a teacher's own question about one wire hides that wire only", () => {
    useRun.getState().catchUp({ run_id: "r1", mode: "backward", target: "z" }, backward, null);
    emit("room_quiz", { code: "ABCDEF", quiz: { ...open, target: { kind: "grad", id: "x-a", label: "" } } });
    expect(shown().edges).toEqual(["a-z"]);
  });
});

describe("a joiner at a lesson step that asks", () => {
  it("hides nothing when the room's question is over", async () => {
    useQuiz.getState().leave();
    useRoom.setState({ code: null, role: null, welcome: null, trouble: null });
    const stop = startReactions();
    fake.replies.set("room_join", {
      code: "JOINER",
      graph: lessonDoc(),
      lesson: 1,
      run_started: { run_id: "r1", mode: "backward", target: "z" },
      records: backward,
      run_finished: { run_id: "r1", status: "ok", timings: {} },
      quiz: null,
    });
    expect(await useRoom.getState().join("joiner")).toBeNull();
    expect(useLesson.getState().index).toBe(1);
    expect(shown().edges).toEqual(["a-z", "x-a"]);
    stop();
  });
});
