// The teacher's side of a question: what the next step of step mode asks, and the true value
// and the wrong values of typical mistakes taken from the run (two-paths-add-up: x → h = 3x,
// u = h², v = 5h, L = u + v; at x = 1 the gradient on x → h is 33, 18 through u only, 15
// through v only).
import { describe, expect, it } from "vitest";
import type { Summary, TraceRecord } from "../api/types";
import { emptyAnnotations } from "./annotations";
import { useEditor } from "./editor";
import { nextRecordQuestion, questionAbout } from "./quiz";

const s = (v: number): Summary => ({
  shape: [],
  dtype: "float32",
  numel: 1,
  requires_grad: true,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: null,
  preview: v,
});

const wire = (id: string, source: string, target: string) => ({ id, source, target, type: "wire" as const });
useEditor.setState({
  nodes: [],
  edges: [wire("x-h", "x", "h"), wire("h-u", "h", "u"), wire("h-v", "h", "v"), wire("u-L", "u", "L"), wire("v-L", "v", "L")],
});

function run() {
  const a = emptyAnnotations();
  a.values = { x: s(1), h: s(3), u: s(9), v: s(15), L: s(24) };
  a.nodeGrads = { L: s(1), u: s(1), v: s(1), h: s(11), x: s(33) };
  a.edgeGrads = { "u-L": s(1), "v-L": s(1), "h-u": s(6), "h-v": s(5), "x-h": s(33) };
  a.leafGrads = { x: s(33) };
  return a;
}

describe("asking about a run's number", () => {
  it("an edge's gradient: the truth, one path at a time, and the value", () => {
    const about = questionAbout({ kind: "grad", id: "x-h", label: "" }, run());
    if (typeof about === "string") throw new Error(about);
    expect(about.truth).toBe(33);
    const values = Object.fromEntries(about.mistakes.map((m) => [m.why, m.value]));
    expect(values["only the path through u: forgot to add the other paths"]).toBe(18);
    expect(values["only the path through v: forgot to add the other paths"]).toBe(15);
    expect(values["the value on the wire, not its gradient"]).toBe(1);
  });
  it("a leaf's .grad through its one wire: the same paths", () => {
    const about = questionAbout({ kind: "leaf_grad", id: "x", label: "" }, run());
    if (typeof about === "string") throw new Error(about);
    expect(about.truth).toBe(33);
    expect(about.mistakes.map((m) => m.value)).toEqual([18, 15, 1]);
  });
  it("a node's total gradient: each of its paths is a mistake", () => {
    const about = questionAbout({ kind: "node_grad", id: "h", label: "" }, run());
    if (typeof about === "string") throw new Error(about);
    expect(about.truth).toBe(11);
    expect(about.mistakes.slice(0, 2).map((m) => m.value)).toEqual([6, 5]);
  });
  it("says why when the run has no such number, or too many", () => {
    expect(questionAbout({ kind: "grad", id: "x-h", label: "" }, emptyAnnotations())).toMatch(/run Backward first/);
    const big = run();
    big.edgeGrads["x-h"] = { ...s(0), numel: 2000, shape: [2000], preview: null };
    expect(questionAbout({ kind: "grad", id: "x-h", label: "" }, big)).toMatch(/too large/);
  });
});

describe("step mode's question", () => {
  const records = [
    { kind: "value", node: "x", summary: s(1) },
    { kind: "node_grad", node: "h", summary: s(11) },
    { kind: "edge_grad", edge: "x-h", source: "x", target: "h", summary: s(33) },
    { kind: "leaf_grad", node: "x", param: null, summary: s(33) },
    { kind: "autograd", nodes: [], edges: [] },
  ] as unknown as TraceRecord[];
  it("is the record the next step shows, named by its position", () => {
    expect(nextRecordQuestion(records, 0)).toEqual({ kind: "value", id: "x", label: "step 1: forward: x computed" });
    expect(nextRecordQuestion(records, 1)?.kind).toBe("node_grad");
    expect(nextRecordQuestion(records, 2)).toEqual({
      kind: "grad",
      id: "x-h",
      label: "step 3: backward: h sends a gradient back to x",
    });
    expect(nextRecordQuestion(records, 3)).toMatchObject({ kind: "leaf_grad", id: "x" });
    expect(nextRecordQuestion(records, 4)).toBeNull();
    expect(nextRecordQuestion(records, 5)).toBeNull();
  });
});
