import { describe, expect, it } from "vitest";
import type { GraphDocument } from "../api/types";
import { freshDocument, paramsOf } from "./freshWeights";

const doc = (params: Record<string, Record<string, unknown>>): GraphDocument => ({
  format: "wiregrad.graph",
  version: 1,
  name: "t",
  description: "",
  nodes: Object.entries(params).map(([id, p]) => ({ id, op: "parameter", params: p, position: { x: 0, y: 0 } })),
  edges: [],
  target: null,
  lesson: [],
});

describe("freshDocument", () => {
  const seeded = paramsOf(doc({ w: { value: "[1.0]", seed: 0 }, fc: { weight: null, out: 2 }, x: { value: "2" } }));
  const written = paramsOf(doc({ w: { value: "[0.3]", seed: 0 }, fc: { out: 2, weight: "[[0.5]]" }, x: { value: "2" } }));

  it("puts the trained values back at their seeded ones, key order aside", () => {
    const fresh = freshDocument(doc(written), seeded, written)!;
    expect(paramsOf(fresh)).toEqual(seeded);
  });

  it("keeps what the teacher changed after the training", () => {
    const edited = doc({ ...written, w: { value: "[9.0]", seed: 0 } });
    const fresh = freshDocument(edited, seeded, written)!;
    expect(paramsOf(fresh).w).toEqual({ value: "[9.0]", seed: 0 });
    expect(paramsOf(fresh).fc).toEqual({ weight: null, out: 2 });
  });

  it("is null when nothing was trained or all is fresh already", () => {
    expect(freshDocument(doc(seeded), seeded, written)).toBeNull();
    expect(freshDocument(doc(written), seeded, {})).toBeNull();
  });
});
