import { describe, expect, it } from "vitest";
import type { OpSpec } from "../api/types";
import { LABEL_STEP, labelShift, parallelPlaces } from "./parallelEdges";

const spec = (name: string, inputs: string[]) =>
  ({ name, inputs: inputs.map((n) => ({ name: n })) }) as unknown as OpSpec;
const ops: Record<string, OpSpec> = { mul: spec("mul", ["input", "other"]), cat: spec("cat", ["tensors"]) };
const nodes = [
  { id: "a", data: { op: "mul" } },
  { id: "c", data: { op: "cat" } },
];
const wire = (id: string, source: string, target: string, port: string) => ({
  id,
  source,
  target,
  targetHandle: port,
});

describe("labels of parallel edges", () => {
  it("stack in the order of the target's ports, centred on the curve's middle", () => {
    // x * x, its `other` edge made first
    const edges = [wire("x-a-other", "x", "a", "other"), wire("x-a", "x", "a", "input"), wire("x-b", "x", "b", "input")];
    const places = parallelPlaces(edges, nodes, ops);
    expect(places.get("x-a")).toEqual([0, 2]);
    expect(places.get("x-a-other")).toEqual([1, 2]);
    expect(places.has("x-b")).toBe(false);
    expect(labelShift(places.get("x-a"))).toBe(-LABEL_STEP / 2);
    expect(labelShift(places.get("x-a-other"))).toBe(LABEL_STEP / 2);
    expect(labelShift(places.get("x-b"))).toBe(0);
  });

  it("keep edges into one variadic port in the order they were made", () => {
    const edges = [wire("e1", "x", "c", "tensors"), wire("e2", "x", "c", "tensors"), wire("e3", "x", "c", "tensors")];
    const places = parallelPlaces(edges, nodes, ops);
    expect(["e1", "e2", "e3"].map((id) => labelShift(places.get(id)))).toEqual([-LABEL_STEP, 0, LABEL_STEP]);
  });

  it("are worked out once per edges array, each place the same object until then", () => {
    const edges = [wire("x-a", "x", "a", "input"), wire("x-a-other", "x", "a", "other")];
    const first = parallelPlaces(edges, nodes, ops);
    expect(parallelPlaces(edges, nodes, ops)).toBe(first);
    const after = parallelPlaces([...edges.slice(0, 1)], nodes, ops); // one deleted: no longer parallel
    expect(after.size).toBe(0);
  });
});
