import { describe, expect, it } from "vitest";
import type { OpSpec } from "../api/types";
import { squareOfASum } from "../testing/documents";
import { edgeId, emptyDocument, freshId, fromDocument, toDocument } from "./convert";
import { History } from "./history";
import { formatParam, parseParam, shapeOf } from "./params";
import { defaultTarget, targetChoices } from "./target";
import { connectionProblem, reaches } from "./wiring";

const square = squareOfASum();

const add: OpSpec = {
  name: "add",
  category: "arithmetic",
  doc: "",
  inputs: [
    { name: "input", optional: false, variadic: false, doc: "" },
    { name: "other", optional: false, variadic: false, doc: "" },
  ],
  outputs: ["out"],
  params: [],
  source: false,
};
const cat: OpSpec = { ...add, name: "cat", inputs: [{ name: "tensors", optional: false, variadic: true, doc: "" }] };

describe("document conversion", () => {
  it("round-trips a document through React Flow's nodes and edges", () => {
    const { nodes, edges, meta } = fromDocument(square);
    expect(nodes[2]).toMatchObject({ id: "a", type: "op", data: { op: "add", label: "a = x + y" } });
    expect(edges[1]).toMatchObject({ sourceHandle: "out", targetHandle: "other" });
    const back = toDocument(nodes, edges, meta);
    expect(back.nodes[2].position).toEqual({ x: 200, y: 100 }); // rounded
    expect({ ...back, nodes: back.nodes.map((n) => ({ ...n, position: square.nodes.find((m) => m.id === n.id)!.position })) }).toEqual(square);
  });

  it("drops dangling edges and a target that no longer exists", () => {
    const { nodes, edges, meta } = fromDocument(square);
    const doc = toDocument(nodes.filter((n) => n.id !== "z"), edges, meta);
    expect(doc.edges.map((e) => e.id)).toEqual(["x-a", "y-a"]);
    expect(doc.target).toBeNull();
  });

  it("copies params, so editing the canvas never edits the document it came from", () => {
    const { nodes } = fromDocument(square);
    nodes[0].data.params.value = 99;
    expect(square.nodes[0].params.value).toBe(2);
  });

  it("makes fresh ids that match the format's id pattern", () => {
    expect(freshId("add", new Set(["add1", "add2"]))).toBe("add3");
    expect(freshId("my op!", new Set())).toBe("my_op_1");
    expect(edgeId("x", "a", "input", new Set())).toBe("x-a");
    expect(edgeId("x", "a", "other", new Set(["x-a-other"]))).toBe("x-a-other_1");
    expect(emptyDocument().nodes).toEqual([]);
  });
});

describe("wiring rules", () => {
  const edges = [
    { source: "x", target: "a", targetHandle: "input" },
    { source: "a", target: "z", targetHandle: "input" },
  ];
  it("finds paths", () => {
    expect(reaches(edges, "x", "z")).toBe(true);
    expect(reaches(edges, "z", "x")).toBe(false);
  });
  it("refuses cycles, full inputs, self-loops and unknown ports", () => {
    expect(connectionProblem(edges, { source: "z", target: "a", targetHandle: "other" }, add)).toBe(
      "this wire would make a cycle",
    );
    expect(connectionProblem(edges, { source: "y", target: "a", targetHandle: "input" }, add)).toBe(
      "input 'input' already has an edge",
    );
    expect(connectionProblem(edges, { source: "a", target: "a", targetHandle: "other" }, add)).toMatch(/itself/);
    expect(connectionProblem(edges, { source: "y", target: "a", targetHandle: "bogus" }, add)).toMatch(/no input/);
    expect(connectionProblem(edges, { source: "y", target: "a", targetHandle: "other" }, add)).toBeNull();
  });
  it("lets a variadic input take many edges", () => {
    const into = [{ source: "x", target: "c", targetHandle: "tensors" }];
    expect(connectionProblem(into, { source: "y", target: "c", targetHandle: "tensors" }, cat)).toBeNull();
  });
});

describe("undo history", () => {
  it("undoes and redoes in order, and a new action clears redo", () => {
    const h = new History<number>();
    h.push(1); // state 1 -> 2
    h.push(2); // state 2 -> 3
    expect(h.undo(3)).toBe(2);
    expect(h.undo(2)).toBe(1);
    expect(h.undo(1)).toBeUndefined();
    expect(h.redo(1)).toBe(2);
    h.push(2); // a new edit from 2
    expect(h.canRedo).toBe(false);
    expect(h.canUndo).toBe(true);
  });
  it("keeps at most `limit` steps", () => {
    const h = new History<number>(3);
    for (let i = 0; i < 10; i++) h.push(i);
    expect([h.undo(10), h.undo(9), h.undo(8), h.undo(7)]).toEqual([9, 8, 7, undefined]);
  });
});

describe("param parsing", () => {
  const spec = (type: string, extra = {}) => ({ name: "p", type, default: null, doc: "", ...extra }) as never;
  it("checks numbers against the registry's bounds", () => {
    expect(parseParam(spec("float"), "0.5")).toEqual({ ok: true, value: 0.5 });
    expect(parseParam(spec("float"), "abc")).toEqual({ ok: false, error: "'abc' is not a number" });
    expect(parseParam(spec("int", { min: 1 }), "0")).toEqual({ ok: false, error: "must be at least 1" });
    expect(parseParam(spec("int"), "1.5")).toEqual({ ok: false, error: "'1.5' is not a whole number" });
    expect(parseParam(spec("float", { nullable: true }), "")).toEqual({ ok: true, value: null });
  });
  it("reads dims and shapes as PyTorch writes them", () => {
    expect(parseParam(spec("dims"), "1")).toEqual({ ok: true, value: 1 });
    expect(parseParam(spec("dims"), "0, 1")).toEqual({ ok: true, value: [0, 1] });
    expect(parseParam(spec("dims"), "(1,)")).toEqual({ ok: true, value: [1] });
    expect(parseParam(spec("dims"), "1, 1")).toMatchObject({ ok: false });
    expect(parseParam(spec("shape"), "2, 3")).toEqual({ ok: true, value: [2, 3] });
    expect(parseParam(spec("shape"), "-1, -1")).toEqual({ ok: false, error: "only one dimension can be -1" });
    expect(formatParam(spec("shape"), [2, 3])).toBe("2, 3");
  });
  it("reads tensors, refusing ragged lists in PyTorch's words", () => {
    expect(parseParam(spec("tensor"), "[[1, 2], [3, 4]]")).toEqual({ ok: true, value: [[1, 2], [3, 4]] });
    expect(parseParam(spec("tensor"), "[True, False]")).toEqual({ ok: true, value: [true, false] });
    expect(parseParam(spec("tensor"), "[[1, 2], [3]]")).toEqual({
      ok: false,
      error: "expected sequence of length 2 at dim 1 (got 1)",
    });
    expect(shapeOf([[1, 2, 3]])).toEqual([1, 3]);
    expect(shapeOf(2)).toEqual([]);
  });
  it("keeps choices to the registry's list", () => {
    const s = spec("choice", { choices: ["mean", "sum"] });
    expect(parseParam(s, "sum")).toEqual({ ok: true, value: "sum" });
    expect(parseParam(s, "max")).toEqual({ ok: false, error: "must be one of mean, sum" });
  });
});

describe("backward target", () => {
  const nodes = [{ id: "x" }, { id: "loss" }, { id: "vec" }];
  const edges = [{ source: "x" }];
  const scalar = { numel: 1 } as never;
  const vector = { numel: 3 } as never;
  it("prefers the document's target, then the last scalar, then the last sink", () => {
    expect(defaultTarget(nodes, edges, {}, "x")).toBe("x");
    expect(defaultTarget(nodes, edges, { loss: scalar, vec: vector }, null)).toBe("loss");
    expect(defaultTarget(nodes, edges, {}, null)).toBe("vec");
    expect(defaultTarget([], [], {}, "gone")).toBeNull();
  });
  it("offers scalars first", () => {
    expect(targetChoices(nodes, edges, { loss: scalar })).toEqual(["loss", "vec", "x"]);
  });
});
