import { describe, expect, it } from "vitest";
import type { OpSpec, TraceRecord } from "../api/types";
import { applyRecords, describeRecord, emptyAnnotations } from "../store/annotations";
import { writtenRoot } from "./InplaceMarks";

const spec = (name: string, writes?: string) =>
  ({ name, category: "", doc: "", inputs: [], outputs: ["out"], params: [], source: false, writes }) as OpSpec;
const node = (id: string, op: string) => ({ id, type: "op" as const, position: { x: 0, y: 0 }, data: { op, params: {} } });
const edge = (source: string, target: string, targetHandle: string) => ({
  id: `${source}-${target}`,
  source,
  target,
  targetHandle,
  type: "wire" as const,
});

describe("in-place ops on the page", () => {
  it("names a write by the tensor it writes, through writes and views", () => {
    const s = {
      nodes: [node("x", "tensor"), node("v", "getitem"), node("m", "mul_"), node("r", "relu_")],
      edges: [edge("x", "v", "input"), edge("v", "m", "input"), edge("x", "r", "input")],
      ops: { tensor: spec("tensor"), getitem: spec("getitem"), mul_: spec("mul_", "input"), relu_: spec("relu_", "input") },
    };
    expect(writtenRoot(s, "m")).toBe("v");
    expect(writtenRoot(s, "r")).toBe("x");
    expect(writtenRoot(s, "x")).toBe("x");
  });

  it("keeps each value's version and a version error's fields", () => {
    const summary = { shape: [], dtype: "float32", numel: 1 } as never;
    const records: TraceRecord[] = [
      { kind: "value", node: "a", summary, version: 0 },
      { kind: "value", node: "w", summary, version: 1 },
      {
        kind: "error",
        node: "b",
        message: "one of the variables ...",
        type: "RuntimeError",
        saved_by: "b",
        saved_op: "MulBackward0",
        overwritten_by: "w",
        expected_version: 0,
        version: 1,
      },
    ];
    const a = applyRecords(emptyAnnotations(), records);
    expect(a.versions).toEqual({ a: 0, w: 1 });
    expect(a.error?.overwritten_by).toBe("w");
    expect(a.error?.saved_op).toBe("MulBackward0");
    expect(describeRecord(records[1])).toBe("forward: w computed (version 1)");
  });
});
