import { beforeEach, describe, expect, it } from "vitest";
import type { GraphDocument } from "../api/types";
import { squareOfASum } from "../testing/documents";
import { useEditor } from "./editor";
import { addInstance, closeTo, makeFromSelection, openInstance, unpack } from "./modules";

const ed = () => useEditor.getState();
const ids = () => ed().nodes.map((n) => n.id);

describe("modules on the canvas", () => {
  let start: GraphDocument;
  beforeEach(() => {
    ed().load(squareOfASum()); // z = (x + y)^2, target z
    start = ed().document();
  });

  it("makes a module of the selection as one undo step, and refuses the target", () => {
    ed().select(["z"]);
    expect(makeFromSelection("Square")).toMatch(/backward target/);
    ed().select(["a"]);
    expect(makeFromSelection("2bad")).toMatch(/class name/);
    expect(makeFromSelection("Plus")).toBeNull();
    expect(ids()).toEqual(["x", "y", "plus1", "z"]);
    const doc = ed().document();
    expect(doc.version).toBe(2);
    expect(doc.modules![0]).toMatchObject({ name: "Plus", inputs: ["a_input", "a_other"], outputs: ["a_out"] });
    expect(doc.edges.map((e) => [e.id, e.source, e.target, e.targetPort])).toEqual([
      ["x-a", "x", "plus1", "a_input"],
      ["y-a", "y", "plus1", "a_other"],
      ["a-z", "plus1", "z", "input"],
    ]);
    ed().undo();
    expect(ed().document()).toEqual(start);
  });

  it("opens an instance, edits its definition, and goes back out", () => {
    ed().select(["a"]);
    makeFromSelection("Plus");
    openInstance("plus1");
    expect(ids().sort()).toEqual(["a", "a_input", "a_other", "a_out"]);
    expect(ed().meta.open!.map((f) => f.instance)).toEqual(["plus1"]);
    // an edit inside is an edit of the definition; the document has it while it is open
    ed().setLabel("a", "sum of both");
    expect(ed().document().modules![0].nodes.find((n) => n.id === "a")!.label).toBe("sum of both");
    expect(ed().document().nodes.map((n) => n.id)).toEqual(["x", "y", "plus1", "z"]);
    closeTo(0);
    expect(ids()).toEqual(["x", "y", "plus1", "z"]);
    expect(ed().nodes.find((n) => n.id === "plus1")!.selected).toBe(true);
    expect(ed().meta.modules![0].nodes.find((n) => n.id === "a")!.label).toBe("sum of both");
  });

  it("adds instances with the next seed, and unpacks one back into the graph", () => {
    ed().select(["a"]);
    makeFromSelection("Plus");
    addInstance("Plus", { x: 0, y: 300 });
    addInstance("Plus", { x: 0, y: 400 });
    const params = ed().nodes.filter((n) => n.data.op === "module").map((n) => [n.id, n.data.params.seed]);
    expect(params).toEqual([
      ["plus1", undefined],
      ["plus2", 1],
      ["plus3", 2],
    ]);
    unpack("plus1");
    const doc = ed().document();
    expect(doc.nodes.map((n) => n.id)).toEqual(["x", "y", "a", "z", "plus2", "plus3"]);
    expect(doc.edges).toEqual(start.edges);
    ed().undo();
    expect(ids()).toContain("plus1");
  });

  it("nests: a module made inside an opened one, opened in turn, and closed back to the graph", () => {
    ed().select(["a"]);
    makeFromSelection("Plus");
    openInstance("plus1");
    ed().select(["a"]);
    expect(makeFromSelection("Inner")).toBeNull();
    openInstance("inner1");
    expect(ed().meta.open!.map((f) => `${f.instance}:${f.module}`)).toEqual(["plus1:Plus", "inner1:Inner"]);
    const doc = ed().document();
    expect(doc.nodes.map((n) => n.id)).toEqual(["x", "y", "plus1", "z"]);
    const plus = doc.modules!.find((m) => m.name === "Plus")!;
    expect(plus.nodes.find((n) => n.id === "inner1")).toMatchObject({ op: "module", params: { module: "Inner" } });
    expect(doc.modules!.find((m) => m.name === "Inner")!.nodes.map((n) => n.id)).toContain("a");
    closeTo(1); // back to Plus
    expect(ids()).toContain("inner1");
    closeTo(0);
    expect(ids()).toEqual(["x", "y", "plus1", "z"]);
    expect(ed().document()).toEqual(doc);
  });
});
