import { describe, expect, it } from "vitest";
import { expandRecords } from "./summaryRows";
import type { SummaryTable, WireRecord } from "./types";

function table(first: number, rows: number, preview = true): SummaryTable {
  const idx = [...Array(rows).keys()];
  return {
    kind: "summaries",
    first,
    rows,
    shape: [2],
    dtype: "float32",
    numel: 2,
    requires_grad: idx.map((k) => k === 0),
    grad_fn: idx.map((k) => (k === 0 ? null : "MulBackward0")),
    nan: idx.map(() => 0),
    inf: idx.map(() => 0),
    stats: idx.map((k) => [k, k + 1, k + 0.5, 0.5, k + 1]),
    preview: preview ? idx.map((k) => [k, k + 1]) : null,
  };
}

describe("summary tables", () => {
  it("gives each record its row's summary and leaves the tables out", () => {
    const wire: WireRecord[] = [
      table(0, 2),
      { kind: "value", node: "x", summary: 0 },
      { kind: "value", node: "y", summary: 1 },
      { kind: "skipped", node: "z", reason: "feeds only nodes that did not run" },
      { ...table(2, 1), stats: [null], nan: [2] },
      { kind: "edge_grad", edge: "e", source: "x", target: "y", summary: 2 },
    ];
    const out = expandRecords("run-a", wire);
    expect(out.map((r) => r.kind)).toEqual(["value", "value", "skipped", "edge_grad"]);
    const [x, y, , e] = out as Extract<(typeof out)[number], { summary: unknown }>[];
    expect(x.summary).toEqual({
      shape: [2],
      dtype: "float32",
      numel: 2,
      requires_grad: true,
      grad_fn: null,
      nan: 0,
      inf: 0,
      stats: { min: 0, max: 1, mean: 0.5, std: 0.5, norm: 1 },
      preview: [0, 1],
    });
    expect(y.summary.grad_fn).toBe("MulBackward0");
    expect(y.summary.preview).toEqual([1, 2]);
    expect(e.summary.stats).toBeNull();
    expect(e.summary.nan).toBe(2);
  });

  it("keeps a run's rows across packets, apart from other runs", () => {
    expandRecords("run-b", [table(0, 1, false)]);
    expandRecords("run-c", [{ ...table(0, 1), stats: [[9, 9, 9, 0, 9]] }]);
    const [later] = expandRecords("run-b", [{ kind: "node_grad", node: "x", summary: 0 }]);
    expect(later.kind === "node_grad" && later.summary.stats?.min).toBe(0);
    expect(later.kind === "node_grad" && "preview" in later.summary).toBe(false);
  });

  it("leaves out a record whose table never came", () => {
    expect(expandRecords("run-d", [{ kind: "value", node: "x", summary: 7 }])).toEqual([]);
  });
});
