import { describe, expect, it } from "vitest";
import type { Summary } from "../api/types";
import { emptyAnnotations } from "./annotations";
import { hiddenKeys, mask, unmask } from "./quizMask";

const s = (v: number): Summary => ({
  shape: [],
  dtype: "float32",
  numel: 1,
  requires_grad: false,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: null,
  preview: v,
});

// a -> mul (e1), a -> add (e2), b -> mean (e3)
const edges = [
  { id: "e1", source: "a", target: "mul" },
  { id: "e2", source: "a", target: "add" },
  { id: "e3", source: "b", target: "mean" },
];

function annotations() {
  const a = emptyAnnotations();
  a.values = { a: s(2), b: s(3) };
  a.edgeGrads = { e1: s(1), e2: s(4), e3: s(0.25) };
  a.nodeGrads = { a: s(5), b: s(0.25) };
  a.leafGrads = { a: s(5), b: s(0.25) };
  return a;
}

describe("hiding the number asked about", () => {
  it("an edge's gradient hides the producer's total only when it is the one wire out", () => {
    expect(hiddenKeys({ kind: "grad", id: "e3", label: "" }, edges)).toEqual({
      edgeGrads: ["e3"],
      nodeGrads: ["b"],
      leafGrads: ["b"],
    });
    expect(hiddenKeys({ kind: "grad", id: "e1", label: "" }, edges)).toEqual({ edgeGrads: ["e1"] });
  });
  it("a leaf's .grad hides every path into it", () => {
    expect(hiddenKeys({ kind: "leaf_grad", id: "a", label: "" }, edges)).toEqual({
      leafGrads: ["a"],
      nodeGrads: ["a"],
      edgeGrads: ["e1", "e2"],
    });
  });
  it("masks, keeps other tables shared, and puts back only what nothing newer replaced", () => {
    const a = annotations();
    const keys = hiddenKeys({ kind: "leaf_grad", id: "a", label: "" }, edges);
    const { masked, taken } = mask(a, keys)!;
    expect(Object.keys(masked.edgeGrads)).toEqual(["e3"]);
    expect(masked.leafGrads.a).toBeUndefined();
    expect(masked.values).toBe(a.values);
    expect(a.edgeGrads.e1).toBeDefined(); // the store's object is not changed
    expect(mask(masked, keys)).toBeNull();
    const newer = { ...masked, edgeGrads: { ...masked.edgeGrads, e1: s(9) } };
    const back = unmask(newer, taken);
    expect(back.edgeGrads.e1.preview).toBe(9);
    expect(back.edgeGrads.e2.preview).toBe(4);
    expect(back.leafGrads.a.preview).toBe(5);
  });
});
