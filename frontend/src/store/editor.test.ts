import { beforeEach, describe, expect, it } from "vitest";
import type { OpSpec } from "../api/types";
import { emptyDocument } from "../doc/convert";
import { useEditor } from "./editor";

const port = (name: string) => ({ name, optional: false, variadic: false, doc: "" });
const ops: OpSpec[] = [
  { name: "tensor", category: "sources", doc: "", inputs: [], outputs: ["out"], params: [], source: true },
  { name: "add", category: "arithmetic", doc: "", inputs: [port("input"), port("other")], outputs: ["out"], params: [], source: false },
];
const ed = () => useEditor.getState();
const ids = () => ed().nodes.map((n) => n.id);

describe("editor store", () => {
  beforeEach(() => {
    ed().setOps(ops);
    ed().load(emptyDocument());
  });

  it("adds, wires, and undoes and redoes each edit as one step", () => {
    const x = ed().addNode("tensor", { x: 0, y: 0 });
    const a = ed().addNode("add", { x: 200, y: 0 });
    expect(ed().connect({ source: x, target: a, sourceHandle: "out", targetHandle: "input" })).toBeNull();
    ed().setParam(x, "value", 2);
    expect(ed().dirty).toBe(true);
    expect(ed().document().nodes[0].params).toEqual({ value: 2 });

    ed().undo(); // the param
    expect(ed().document().nodes[0].params).toEqual({});
    ed().undo(); // the edge
    expect(ed().edges).toEqual([]);
    ed().undo(); // the add node
    expect(ids()).toEqual([x]);
    ed().redo();
    ed().redo();
    expect(ids()).toEqual([x, a]);
    expect(ed().edges.map((e) => e.id)).toEqual([`${x}-${a}`]);
  });

  it("keeps the selection through a load that asks for it, where the nodes still are", () => {
    const x = ed().addNode("tensor", { x: 0, y: 0 });
    const a = ed().addNode("add", { x: 200, y: 0 });
    ed().onNodesChange([
      { type: "select", id: a, selected: false }, // (a new node comes selected)
      { type: "select", id: x, selected: true },
    ]);
    const doc = ed().document();
    ed().load(doc, { keepSelection: true }); // an owner's update reaching a follower
    expect(ed().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual([x]);
    ed().load({ ...doc, nodes: doc.nodes.filter((n) => n.id !== x) }, { keepSelection: true });
    expect(ed().nodes.filter((n) => n.selected)).toEqual([]); // x is gone
    ed().onNodesChange([{ type: "select", id: a, selected: true }]);
    ed().load(doc); // opening a document: nothing selected
    expect(ed().nodes.filter((n) => n.selected)).toEqual([]);
  });

  it("refuses a second edge into a full input and a cycle", () => {
    const x = ed().addNode("tensor", { x: 0, y: 0 });
    const a = ed().addNode("add", { x: 0, y: 0 });
    const b = ed().addNode("add", { x: 0, y: 0 });
    ed().connect({ source: x, target: a, sourceHandle: "out", targetHandle: "input" });
    ed().connect({ source: a, target: b, sourceHandle: "out", targetHandle: "input" });
    expect(ed().connect({ source: x, target: a, sourceHandle: "out", targetHandle: "input" })).toMatch(/already/);
    expect(ed().connect({ source: b, target: a, sourceHandle: "out", targetHandle: "other" })).toMatch(/cycle/);
    expect(ed().edges).toHaveLength(2);
  });

  it("copies, pastes with fresh ids and inner edges, and deletes with its edges", () => {
    const x = ed().addNode("tensor", { x: 0, y: 0 });
    const a = ed().addNode("add", { x: 100, y: 0 });
    ed().connect({ source: x, target: a, sourceHandle: "out", targetHandle: "input" });
    ed().select([x, a]);
    ed().copySelection();
    ed().paste();
    expect(ids()).toHaveLength(4);
    const pasted = ed().nodes.filter((n) => n.selected);
    expect(pasted.map((n) => n.id).sort()).toEqual(["add2", "tensor2"]);
    expect(ed().edges.map((e) => [e.source, e.target])).toContainEqual(["tensor2", "add2"]);
    expect(pasted[0].position.x).toBe(40);

    ed().deleteSelection();
    expect(ids()).toEqual([x, a]);
    expect(ed().edges).toHaveLength(1);
    ed().undo();
    expect(ids()).toHaveLength(4);
  });

  it("forgets history when another document is opened", () => {
    ed().addNode("tensor", { x: 0, y: 0 });
    ed().load(emptyDocument("other"));
    expect(ed().canUndo).toBe(false);
    expect(ed().dirty).toBe(false);
    expect(ed().meta.name).toBe("other");
  });
});
