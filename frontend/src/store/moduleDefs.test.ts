// Renaming and deleting module definitions, and pasted instances, through the store's actions:
// every level the canvas holds follows, and each is one undo step.
import { beforeEach, describe, expect, it } from "vitest";
import type { GraphDocument } from "../api/types";
import { squareOfASum } from "../testing/documents";
import { useEditor } from "./editor";
import {
  addInstance,
  closeTo,
  deleteDefinition,
  makeFromSelection,
  openInstance,
  renameDefinition,
  usesOfDefinition,
} from "./modules";

const ed = () => useEditor.getState();
const ids = () => ed().nodes.map((n) => n.id);
const instances = (doc: GraphDocument) =>
  [...doc.nodes.map((n) => ["graph", n] as const), ...(doc.modules ?? []).flatMap((m) => m.nodes.map((n) => [m.name, n] as const))]
    .filter(([, n]) => n.op === "module")
    .map(([where, n]) => `${where}:${n.id}:${n.params.module}`);

/** z = (x + y)^2 with `a = x + y` made module Plus (plus1), a second instance plus2, and the
 * add inside Plus made module Inner (inner1, used by every Plus). */
function nested() {
  ed().select(["a"]);
  makeFromSelection("Plus");
  addInstance("Plus", { x: 0, y: 300 });
  openInstance("plus1");
  ed().select(["a"]);
  expect(makeFromSelection("Inner")).toBeNull();
  closeTo(0);
}

describe("renaming a module", () => {
  beforeEach(() => ed().load(squareOfASum()));

  it("renames the definition and every instance, nested ones too, as one undo step", () => {
    nested();
    const before = ed().document();
    expect(renameDefinition("Inner", "Core")).toBeNull();
    const doc = ed().document();
    expect(doc.modules!.map((m) => m.name)).toEqual(["Plus", "Core"]);
    expect(instances(doc)).toEqual(["graph:plus1:Plus", "graph:plus2:Plus", "Plus:inner1:Core"]);
    expect(renameDefinition("Plus", "Sum")).toBeNull();
    expect(instances(ed().document())).toEqual(["graph:plus1:Sum", "graph:plus2:Sum", "Sum:inner1:Core"]);
    ed().undo();
    expect(ed().document()).toEqual(doc);
    ed().undo();
    expect(ed().document()).toEqual(before);
  });

  it("follows the levels open on the canvas: breadcrumbs, the level shown and the ones above", () => {
    nested();
    openInstance("plus2");
    openInstance("inner1");
    expect(renameDefinition("Plus", "Sum")).toBeNull();
    expect(renameDefinition("Inner", "Core")).toBeNull();
    expect(ed().meta.open!.map((f) => `${f.instance}:${f.module}`)).toEqual(["plus2:Sum", "inner1:Core"]);
    // the graph's level (kept in the first frame) and Sum's (in the second) follow
    expect(ed().meta.open![0].nodes.filter((n) => n.data.op === "module").map((n) => n.data.params.module)).toEqual(["Sum", "Sum"]);
    expect(ed().meta.open![1].nodes.find((n) => n.id === "inner1")!.data.params.module).toBe("Core");
    closeTo(0);
    const doc = ed().document();
    expect(doc.modules!.map((m) => m.name)).toEqual(["Sum", "Core"]);
    expect(instances(doc)).toEqual(["graph:plus1:Sum", "graph:plus2:Sum", "Sum:inner1:Core"]);
  });

  it("checks the new name as Make module does", () => {
    nested();
    expect(renameDefinition("Plus", "Inner")).toMatch(/there is a module named Inner already/);
    expect(renameDefinition("Plus", "2x")).toMatch(/Python class name/);
    expect(renameDefinition("Plus", "class")).toMatch(/Python keyword/);
    expect(renameDefinition("Plus", "Plus")).toBeNull(); // its own name: nothing to do
    expect(ed().document().modules!.map((m) => m.name)).toEqual(["Plus", "Inner"]);
  });
});

describe("deleting a module", () => {
  beforeEach(() => ed().load(squareOfASum()));

  it("says which nodes use it, and deletes them with it only when asked", () => {
    nested();
    expect(usesOfDefinition("Inner")).toEqual([{ in: "Plus", id: "inner1" }]);
    expect(deleteDefinition("Plus", false)).toBe(
      "Plus is used by plus1, plus2 in the graph: delete them first, or with it",
    );
    expect(deleteDefinition("Inner", false)).toBe("Inner is used by inner1 in Plus: delete it first, or with it");
    const before = ed().document();
    expect(deleteDefinition("Plus", true)).toBeNull();
    const doc = ed().document();
    expect(doc.modules!.map((m) => m.name)).toEqual(["Inner"]);
    expect(doc.nodes.map((n) => n.id)).toEqual(["x", "y", "z"]);
    expect(doc.edges).toEqual([]); // every wire went into or out of plus1
    ed().undo();
    expect(ed().document()).toEqual(before);
  });

  it("deletes a nested use inside the definition that holds it, with its wires", () => {
    nested();
    expect(deleteDefinition("Inner", true)).toBeNull();
    const plus = ed().document().modules!.find((m) => m.name === "Plus")!;
    expect(plus.nodes.map((n) => n.op).sort()).toEqual(["module_input", "module_input", "module_output"]);
    expect(plus.edges).toEqual([]);
    expect(ed().document().modules!.map((m) => m.name)).toEqual(["Plus"]);
  });

  it("deletes an unused one at once, and refuses one open on the canvas", () => {
    nested();
    deleteDefinition("Plus", true);
    expect(deleteDefinition("Inner", false)).toBeNull();
    expect(ed().document().modules ?? []).toEqual([]);
    ed().undo();
    ed().undo();
    openInstance("plus1");
    expect(deleteDefinition("Plus", true)).toBe("Plus is open on the canvas: go back out of it first");
    // an instance inside the open level goes with its module (the level shown is edited)
    expect(deleteDefinition("Inner", true)).toBeNull();
    expect(ids()).not.toContain("inner1");
    closeTo(0);
    expect(ed().document().modules!.find((m) => m.name === "Plus")!.nodes.map((n) => n.id)).not.toContain("inner1");
  });
});

describe("pasting an instance", () => {
  beforeEach(() => ed().load(squareOfASum()));

  it("gives each pasted or duplicated instance the next free seed and no trained state", () => {
    ed().select(["a"]);
    makeFromSelection("Plus");
    ed().setParam("plus1", "state", { a: { alpha: 2 } });
    ed().select(["plus1"]);
    ed().copySelection();
    ed().paste();
    ed().paste();
    ed().select(["plus1"]);
    ed().duplicateSelection();
    const made = ed()
      .nodes.filter((n) => n.data.op === "module")
      .map((n) => [n.id, n.data.params.seed, n.data.params.state]);
    expect(made).toEqual([
      ["plus1", undefined, { a: { alpha: 2 } }],
      ["plus2", 1, undefined],
      ["plus3", 2, undefined],
      ["plus4", 3, undefined],
    ]);
    ed().undo();
    expect(ids()).not.toContain("plus4");
  });

  it("counts seeds over every level open, as adding one from the palette does", () => {
    ed().select(["a"]);
    makeFromSelection("Plus");
    openInstance("plus1");
    ed().select(["a"]);
    makeFromSelection("Inner");
    addInstance("Inner", { x: 0, y: 300 }); // inner2, seed 1, inside Plus
    ed().select(["inner2"]);
    ed().copySelection();
    ed().paste();
    expect(ed().nodes.filter((n) => n.data.op === "module").map((n) => n.data.params.seed)).toEqual([undefined, 1, 2]);
  });
});
