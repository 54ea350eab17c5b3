import { describe, expect, it } from "vitest";
import { SummaryRows } from "./summaryRows";
import type { SummaryTable, WireRecord } from "./types";

const rows = new SummaryRows();
const expandRecords = (runId: string, wire: WireRecord[]) => rows.expand(runId, wire);

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

describe("packed records", () => {
  it("unpacks values, with cached on each only when the pack has it", () => {
    const out = expandRecords("run-p1", [
      table(0, 3),
      { kind: "values", nodes: ["a", "b"], summary: [0, 1], cached: true },
      { kind: "values", nodes: ["c"], summary: [2] },
    ]);
    expect(out.map((r) => r.kind)).toEqual(["value", "value", "value"]);
    const [a, b, c] = out as Extract<(typeof out)[number], { kind: "value" }>[];
    expect([a.node, b.node, c.node]).toEqual(["a", "b", "c"]);
    expect([a.cached, b.cached]).toEqual([true, true]);
    expect("cached" in c).toBe(false);
    expect(a.summary.stats?.min).toBe(0);
    expect(c.summary.preview).toEqual([2, 3]);
  });

  it("unpacks grads into node and edge gradients", () => {
    const out = expandRecords("run-p2", [
      table(0, 2),
      { kind: "grads", items: ["z", ["a-z", "a", "z"], "a"], summary: [0, 1, 1] },
    ]);
    expect(out).toEqual([
      { kind: "node_grad", node: "z", summary: expect.objectContaining({ grad_fn: null }) },
      {
        kind: "edge_grad",
        edge: "a-z",
        source: "a",
        target: "z",
        summary: expect.objectContaining({ grad_fn: "MulBackward0" }),
      },
      {
        kind: "node_grad",
        node: "a",
        summary: expect.objectContaining({ grad_fn: "MulBackward0" }),
      },
    ]);
  });

  it("keeps packs and ordinary records in stream order", () => {
    const out = expandRecords("run-p3", [
      table(0, 4),
      { kind: "values", nodes: ["x", "y"], summary: [0, 1] },
      { kind: "skipped", node: "s", reason: "feeds only nodes that did not run" },
      { kind: "value", node: "z", summary: 2 },
      { kind: "grads", items: ["z", ["e", "x", "z"]], summary: [3, 3] },
      { kind: "leaf_grad", node: "x", param: null, summary: 3 },
    ]);
    const names = out.map((r) => `${r.kind}:${"edge" in r ? r.edge : "node" in r ? r.node : ""}`);
    expect(names).toEqual([
      "value:x",
      "value:y",
      "skipped:s",
      "value:z",
      "node_grad:z",
      "edge_grad:e",
      "leaf_grad:x",
    ]);
  });

  it("leaves out only the packed items whose rows never came", () => {
    const out = expandRecords("run-p4", [
      table(5, 1),
      { kind: "values", nodes: ["lost", "kept"], summary: [4, 5] },
      { kind: "grads", items: [["e", "a", "b"], "b"], summary: [5, 9] },
    ]);
    expect(out.map((r) => r.kind)).toEqual(["value", "edge_grad"]);
    expect(out[0].kind === "value" && out[0].node).toBe("kept");
  });

  it("finds rows of an earlier packet of the run", () => {
    expandRecords("run-p5", [table(0, 2), { kind: "values", nodes: ["x"], summary: [0] }]);
    const later = expandRecords("run-p5", [
      table(2, 1, false),
      { kind: "grads", items: ["x", ["e", "x", "y"]], summary: [1, 2] },
    ]);
    expect(later.map((r) => r.kind)).toEqual(["node_grad", "edge_grad"]);
    const [n, e] = later as Extract<(typeof later)[number], { kind: "node_grad" | "edge_grad" }>[];
    expect(n.summary.preview).toEqual([1, 2]);
    expect("preview" in e.summary).toBe(false);
  });
});
