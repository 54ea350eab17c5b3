// The store's times are Unix seconds (backend/server/store.py writes time.time()).
import { describe, expect, it } from "vitest";
import type { GraphDocument } from "../../api/types";
import { paramsOf } from "../../doc/freshWeights";
import { beforeTraining, savedAt } from "./FileDialogs";

describe("saved graph dates", () => {
  it("reads the server's seconds as seconds, not milliseconds", () => {
    const seconds = 1795560697.6; // as GET /api/graphs gives it
    const shown = savedAt(seconds, "en-US");
    expect(shown).toBe(new Date(1795560697600).toLocaleString("en-US"));
    expect(shown).toContain("2026");
    expect(shown).not.toContain("1970");
  });
  it("keeps the time of day to the second", () => {
    const ms = Date.UTC(2025, 0, 2, 3, 4, 5);
    expect(savedAt(ms / 1000, "en-US")).toBe(new Date(ms).toLocaleString("en-US"));
  });
});

describe("export after a training: the graph before it", () => {
  const doc = (w: number[] | null, lr = 0.1) =>
    ({
      version: 1,
      name: "g",
      description: "",
      nodes: [
        { id: "fc", op: "linear", params: { out_features: 1, weight: w }, position: { x: 0, y: 0 } },
        { id: "s", op: "scalar", params: { value: lr }, position: { x: 0, y: 0 } },
      ],
      edges: [],
    }) as unknown as GraphDocument;
  const seeded = { opened: 3, params: paramsOf(doc(null)) };
  const written = paramsOf(doc([0.5]));

  it("offers the seeded weights where the trained ones are still in the graph", () => {
    const before = beforeTraining(doc([0.5]), seeded, written, 3);
    expect(before?.nodes[0].params.weight).toBeNull();
    expect(before?.nodes[1].params.value).toBe(0.1);
  });
  it("offers nothing without a training, for another opening, or once the values changed", () => {
    expect(beforeTraining(doc([0.5]), null, null, 3)).toBeNull();
    expect(beforeTraining(doc([0.5]), seeded, written, 4)).toBeNull();
    expect(beforeTraining(doc([0.7]), seeded, written, 3)).toBeNull();
  });
});
