import { describe, expect, it } from "vitest";
import type { Nested, Summary, TraceRecord, TrainSnapshot } from "../api/types";
import { applyRecords, emptyAnnotations } from "../store/annotations";
import { BAD_COLOUR, colourOf, coloursOf, RAMP, scoreOverlay, zeroShare } from "./overlayScores";

/** A summary of `xs` as the server makes one (stats over the finite elements only). */
function sum(xs: number[], shape = [xs.length], preview = true): Summary {
  const fin = xs.filter(Number.isFinite);
  const mean = fin.reduce((a, b) => a + b, 0) / (fin.length || 1);
  const spell = (x: number): Nested => (Number.isNaN(x) ? "nan" : x === Infinity ? "inf" : x === -Infinity ? "-inf" : x);
  return {
    shape,
    dtype: "float32",
    numel: xs.length,
    requires_grad: false,
    grad_fn: null,
    nan: xs.filter(Number.isNaN).length,
    inf: xs.filter((x) => x === Infinity || x === -Infinity).length,
    stats: fin.length
      ? {
          min: Math.min(...fin),
          max: Math.max(...fin),
          mean,
          std: Math.sqrt(fin.reduce((a, b) => a + (b - mean) ** 2, 0) / fin.length),
          norm: Math.hypot(...fin),
        }
      : null,
    ...(preview ? { preview: xs.map(spell) } : {}),
  };
}

function annotations(records: TraceRecord[]) {
  return applyRecords(emptyAnnotations(), records);
}

describe("gradient norm overlay", () => {
  const a = annotations([
    { kind: "edge_grad", edge: "e1", source: "x", target: "y", summary: sum([3, 4]) },
    { kind: "edge_grad", edge: "e2", source: "y", target: "z", summary: sum([0.1]) },
    { kind: "node_grad", node: "y", summary: sum([1, 1, 1, 1]) },
    { kind: "edge_grad", edge: "e3", source: "z", target: "w", summary: sum([1, NaN]) },
    // a linear layer's weight and bias: one norm for the node, sqrt(2² + 1²)
    { kind: "leaf_grad", node: "fc", param: "weight", summary: sum([2]) },
    { kind: "leaf_grad", node: "fc", param: "bias", summary: sum([1]) },
  ]);
  const r = scoreOverlay("grad", { annotations: a, ops: {} });

  it("scores each edge and node by its gradient's 2-norm, NaN first, then largest", () => {
    expect(r.scores.map((s) => s.id)).toEqual(["e3", "e1", "fc", "y", "e2"]);
    expect(r.scores.find((s) => s.id === "e1")?.value).toBe(5);
    expect(r.scores.find((s) => s.id === "y")?.value).toBe(2);
    expect(r.scores.find((s) => s.id === "fc")?.value).toBeCloseTo(Math.sqrt(5), 12);
    expect(r.scores[0]).toMatchObject({ kind: "edge", bad: 1, text: "1 NaN" });
    expect([r.min, r.max]).toEqual([0.1, 5]);
  });

  it("colours the largest darkest, the smallest palest and NaN off the ramp", () => {
    const c = coloursOf(r);
    expect(c.edges.e1).toBe(RAMP[RAMP.length - 1]);
    expect(c.edges.e2).toBe(RAMP[0]);
    expect(c.edges.e3).toBe(BAD_COLOUR);
    expect(c.nodes.y).not.toBe(RAMP[0]);
    expect(colourOf(r, { value: 0, bad: 0 })).toBe(RAMP[0]);
  });
});

describe("value range overlay", () => {
  it("puts values holding NaN or Inf first, then the largest magnitude", () => {
    const a = annotations([
      { kind: "value", node: "a", summary: sum([-7, 2]) },
      { kind: "value", node: "b", summary: sum([1, 3]) },
      { kind: "value", node: "log", summary: sum([NaN, NaN, 0.5]) },
      { kind: "value", node: "div", summary: sum([Infinity, 1]) },
    ]);
    const r = scoreOverlay("range", { annotations: a, ops: {} });
    expect(r.scores.map((s) => [s.id, s.text])).toEqual([
      ["log", "2 NaN"],
      ["div", "1 Inf"],
      ["a", "[-7, 2]"],
      ["b", "[1, 3]"],
    ]);
  });
});

describe("dead ReLU overlay", () => {
  it("counts the zeros of each relu's output, and says which it cannot", () => {
    const big = sum([0, 1, 2], [2000], false); // no preview: min 0, max 2 says nothing
    const a = annotations([
      { kind: "value", node: "r1", summary: sum([0, 0, 0, 3]) },
      { kind: "value", node: "r2", summary: sum([1, 2]) },
      { kind: "value", node: "r3", summary: big },
      { kind: "value", node: "lin", summary: sum([0, 0]) },
    ]);
    const r = scoreOverlay("dead", { annotations: a, ops: { r1: "relu", r2: "relu", r3: "relu", lin: "linear" } });
    expect(r.scores.map((s) => [s.id, s.value, s.text])).toEqual([
      ["r1", 0.75, "75.0% zeros"],
      ["r2", 0, "0.0% zeros"],
    ]);
    expect(r.unknown).toEqual(["r3"]);
    expect(r.note).toMatch(/1 relu output over 1,024/);
    expect([r.min, r.max]).toEqual([0, 1]);
  });

  it("knows none or all are zero from the stats alone", () => {
    expect(zeroShare(sum([1, 2], [5000], false))).toBe(0);
    expect(zeroShare(sum([0, 0], [5000], false))).toBe(1);
    expect(zeroShare(sum([0, 2], [5000], false))).toBeNull();
  });
});

describe("update size overlay", () => {
  const snap = (step: number, params: Record<string, Summary>): TrainSnapshot => ({
    train_id: "t",
    step,
    params,
    grads: {},
  });

  it("is |Δw|/|w| between two snapshots, per layer", () => {
    const before = snap(1, { "fc.weight": sum([3, 0]), "fc.bias": sum([4]), w: sum([1, 1]) });
    const now = snap(2, { "fc.weight": sum([3, 1]), "fc.bias": sum([4]), w: sum([1.5, 1]) });
    const r = scoreOverlay("update", { annotations: emptyAnnotations(), ops: {}, snapshot: now, previous: before });
    // fc: |Δ| = 1 over |w| = 5; w: 0.5 over sqrt(2)
    expect(r.scores.map((s) => s.id)).toEqual(["w", "fc"]);
    expect(r.scores[1].value).toBeCloseTo(0.2, 12);
    expect(r.scores[0].value).toBeCloseTo(0.5 / Math.sqrt(2), 12);
    expect(r.note).toBe("steps 1 → 2");
  });

  it("leaves out a layer whose values the snapshots do not carry, and says so", () => {
    const before = snap(1, { "fc.weight": sum([3], [5000], false), "fc.bias": sum([4]) });
    const now = snap(3, { "fc.weight": sum([3], [5000], false), "fc.bias": sum([5]) });
    const r = scoreOverlay("update", { annotations: emptyAnnotations(), ops: {}, snapshot: now, previous: before });
    expect(r.scores).toEqual([]);
    expect(r.unknown).toEqual(["fc"]);
    expect(r.note).toMatch(/1 layer with a parameter over 1,024 elements not known/);
  });

  it("asks for a training when there is no snapshot before", () => {
    const r = scoreOverlay("update", { annotations: emptyAnnotations(), ops: {}, snapshot: null, previous: null });
    expect(r.scores).toEqual([]);
    expect(r.note).toMatch(/training snapshots/);
  });
});
