import { describe, expect, it } from "vitest";
import type { Summary, TraceRecord } from "../api/types";
import { applyRecords, describeRecord, emptyAnnotations, recordFocus } from "../store/annotations";
import { formatNumber, formatSummary, scalarOf } from "./annotate";

const summary = (preview: Summary["preview"], shape: number[], numel: number): Summary => ({
  shape,
  dtype: "float32",
  numel,
  requires_grad: false,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: { min: 0, max: 1, mean: 0.123456, std: 0, norm: 0 },
  preview,
});

describe("number formatting", () => {
  it("writes the texts' numbers as they print them", () => {
    expect(formatNumber(25)).toBe("25");
    expect(formatNumber(7.5)).toBe("7.5");
    expect(formatNumber(1 / 3)).toBe("0.3333");
    expect(formatNumber(-4)).toBe("-4");
    expect(formatNumber(86.1399)).toBe("86.14");
    expect(formatNumber(1.2e-7)).toBe("1.2e-7");
    expect(formatNumber(123456)).toBe("1.235e5");
    expect(formatNumber(NaN)).toBe("nan");
    expect(formatNumber(-Infinity)).toBe("-inf");
    expect(formatNumber(true)).toBe("True");
    expect(formatNumber("nan")).toBe("nan"); // as the server spells non-finite values
    expect(formatSummary(summary([1, "nan", "-inf"], [3], 3))).toBe("[1, nan, -inf]");
  });
  it("writes scalars, small tensors and big tensors differently", () => {
    expect(formatSummary(summary(25, [], 1))).toBe("25");
    expect(formatSummary(summary([6, 9], [2], 2))).toBe("[6, 9]");
    expect(formatSummary(summary([[1, 2], [3, 4]], [2, 2], 4))).toBe("[[1, 2], [3, 4]]");
    expect(formatSummary(summary(null, [16, 32], 512))).toBe("16×32 μ 0.1235");
    expect(formatSummary({ ...summary(null, [3], 7), nan: 2 }, 1)).toContain("2 nan");
    expect(scalarOf(summary([[5]], [1, 1], 1))).toBe(5);
    expect(scalarOf(summary([1, 2], [2], 2))).toBeNull();
  });
});

describe("folding trace records", () => {
  const s = summary(10, [], 1);
  const records: TraceRecord[] = [
    { kind: "value", node: "x", summary: summary(2, [], 1) },
    { kind: "value", node: "z", summary: summary(25, [], 1), cached: true },
    { kind: "edge_grad", edge: "a-z", source: "a", target: "z", summary: s },
    { kind: "node_grad", node: "a", summary: s },
    { kind: "leaf_grad", node: "lin", param: "weight", summary: s },
    { kind: "leaf_grad", node: "x", param: null, summary: s },
    { kind: "branch_not_taken", node: "if1", port: "else", edge: "n-if1-else" },
    { kind: "skipped", node: "n", reason: "its only consumer is a branch that did not run" },
    { kind: "error", node: "z", message: "boom", type: "RuntimeError" },
  ];
  it("fills every table from the records", () => {
    const a = applyRecords(emptyAnnotations(), records);
    expect(Object.keys(a.values)).toEqual(["x", "z"]);
    expect(a.cached).toEqual({ z: true });
    expect(a.edgeGrads["a-z"]).toBe(s);
    expect(a.nodeGrads.a).toBe(s);
    expect(Object.keys(a.leafGrads).sort()).toEqual(["lin.weight", "x"]);
    expect(a.notTaken).toEqual({ "n-if1-else": "else" });
    expect(a.skipped.n).toMatch(/did not run/);
    expect(a.error).toEqual({ node: "z", message: "boom", type: "RuntimeError" });
  });
  it("leaves the input and untouched tables as they were", () => {
    const empty = emptyAnnotations();
    const a = applyRecords(empty, records.slice(0, 1));
    expect(empty.values).toEqual({});
    expect(a.edgeGrads).toBe(empty.edgeGrads); // not copied: subscribers see no change
    expect(applyRecords(a, records.slice(1, 2)).values.x).toBe(a.values.x);
  });
  it("says what each record is about, for step mode", () => {
    expect(recordFocus(records[2])).toEqual({ edge: "a-z" });
    expect(recordFocus(records[0])).toEqual({ node: "x" });
    expect(describeRecord(records[2])).toBe("backward: z sends a gradient back to a");
    expect(describeRecord(records[1])).toBe("forward: z computed (cached)");
  });
});
