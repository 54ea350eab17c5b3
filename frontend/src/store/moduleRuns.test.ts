// A run's records inside modules on the canvas: the run names them by path (`plus1/a`); an
// opened instance shows its own under their inner ids, a closed one stands for its inside, in
// step mode and in the autograd view alike.
import { beforeEach, describe, expect, it } from "vitest";
import type { AutogradEntry, Summary, TraceRecord } from "../api/types";
import { focusWithin } from "../canvas/runSlice";
import { depthShowing, isWithin, shownAt, underOf, withinAny } from "../doc/modules";
import { scopedNodes } from "../panels/analysis/AutogradView";
import { nameAt, placeNote } from "../panels/onCanvas/StepControls";
import { squareOfASum } from "../testing/documents";
import { useEditor } from "./editor";
import { closeTo, makeFromSelection, openInstance, revealRunNode } from "./modules";
import { useRun } from "./run";

const ed = () => useEditor.getState();
const summary = (v: number): Summary => ({
  shape: [],
  dtype: "float32",
  numel: 1,
  requires_grad: true,
  grad_fn: null,
  nan: 0,
  inf: 0,
  stats: { min: v, max: v, mean: v, std: 0, norm: Math.abs(v) },
  preview: v,
});

describe("where a record of a run shows", () => {
  it("places a path on the level opened: itself, inside an instance there, or outside", () => {
    expect(shownAt("", "x")).toEqual({ id: "x", inside: false });
    expect(shownAt("", "b1/w")).toEqual({ id: "b1", inside: true });
    expect(shownAt("b1", "b1/w")).toEqual({ id: "w", inside: false });
    expect(shownAt("b1", "b1/inner1/w")).toEqual({ id: "inner1", inside: true });
    expect(shownAt("b1", "b2/w")).toBeNull();
    expect(shownAt("b1", "b1")).toBeNull(); // the instance itself is on the level above
    expect(shownAt("b1", "b10/w")).toBeNull(); // a prefix of the id is not its path
    expect(underOf("b1", "b1/inner1/w")).toBe("inner1/w");
    expect(underOf("", "x")).toBe("x");
    expect(isWithin("b1", "b1")).toBe(true);
    expect(isWithin("b1", "b1/w-m")).toBe(true);
    expect(isWithin("b1", "b10")).toBe(false);
    const paths = new Set(["b1/inner1", "x"]);
    expect(withinAny(paths, "b1/inner1/w")).toBe(true);
    expect(withinAny(paths, "b1/inner1")).toBe(true);
    expect(withinAny(paths, "x")).toBe(true);
    expect(withinAny(paths, "b1/w")).toBe(false);
    expect(withinAny(paths, "b1/inner10/w")).toBe(false);
  });

  it("finds the deepest open level that holds a path", () => {
    const open = [{ instance: "b1" }, { instance: "inner1" }];
    expect(depthShowing(open, "b1/inner1/w")).toBe(2);
    expect(depthShowing(open, "b1/m")).toBe(1);
    expect(depthShowing(open, "b1/inner2/w")).toBe(1);
    expect(depthShowing(open, "b2/w")).toBe(0);
    expect(depthShowing(open, "x")).toBe(0);
  });

  it("lights a closed instance up for a record about it or anything inside it", () => {
    expect(focusWithin({ node: "b1/w" }, "b1")).toBe(true);
    expect(focusWithin({ edge: "b1/m-a" }, "b1")).toBe(true);
    expect(focusWithin({ node: "b1" }, "b1")).toBe(true);
    expect(focusWithin({ node: "b10/w" }, "b1")).toBe(false);
    expect(focusWithin({ edge: "x-b1" }, "b1")).toBe(false);
    expect(focusWithin({}, "b1")).toBe(false);
  });

  it("says where step mode's record is when it is not on the level shown", () => {
    expect(placeNote("", "x")).toBe("");
    expect(placeNote("", "b1/w")).toBe(" (inside b1)");
    expect(placeNote("b1", "b1/w")).toBe("");
    expect(placeNote("b1", "x")).toBe(" (outside b1, the module open)");
    expect(placeNote("b1", undefined)).toBe("");
  });
});

describe("modules open on the canvas and the run", () => {
  beforeEach(() => {
    ed().load(squareOfASum()); // z = (x + y)^2 with a = x + y
    ed().select(["a"]);
    makeFromSelection("Plus"); // plus1
    useRun.getState().clear();
  });

  it("steps through the records of the opened instance's inner nodes under their inner ids", () => {
    const records: TraceRecord[] = [
      { kind: "value", node: "x", summary: summary(1) },
      { kind: "value", node: "plus1/a", summary: summary(3) },
      { kind: "edge_grad", edge: "plus1/a_input-a", source: "plus1/a_input", target: "plus1/a", summary: summary(6) },
      { kind: "node_grad", node: "z", summary: summary(1) },
    ];
    useRun.setState({ records });
    useRun.getState().enterStep();
    openInstance("plus1");
    const scope = ed().meta.open!.map((f) => f.instance).join("/");
    expect(scope).toBe("plus1");
    useRun.getState().stepTo(2);
    const s = useRun.getState();
    // the canvas reads the opened instance's records at runKey(scope, id): `a` shows plus1/a's
    expect(s.annotations.values["plus1/a"]?.stats?.mean).toBe(3);
    expect(shownAt(scope, s.focus.node!)).toEqual({ id: "a", inside: false });
    useRun.getState().stepTo(3);
    expect(shownAt(scope, useRun.getState().focus.edge!)).toEqual({ id: "a_input-a", inside: false });
    // back at the graph, the same record lights up plus1 as a whole
    closeTo(0);
    expect(focusWithin(useRun.getState().focus, "plus1")).toBe(true);
    useRun.getState().stepTo(4);
    expect(focusWithin(useRun.getState().focus, "plus1")).toBe(false);
    useRun.getState().exitStep();
  });

  it("names step mode's nodes as the level that holds them does", () => {
    ed().setLabel("z", "the square");
    openInstance("plus1");
    const name = nameAt("plus1");
    expect(name("plus1/a")).toBe("a"); // the opened definition's node ("a = x + y" names a)
    expect(name("z")).toBe("the square"); // the graph's, as the graph names it
    expect(name("elsewhere/q")).toBe("elsewhere/q"); // no level open holds it: its path
  });

  it("names the opened instance's grad_fn nodes by their inner ids and marks them", () => {
    const entry = (id: string, name: string, node: string | null): AutogradEntry => ({ id, name, node });
    const node = (e: AutogradEntry) => ({
      id: e.id,
      type: "ag" as const,
      position: { x: 0, y: 0 },
      data: { entry: e, lines: e.node ? [`of ${e.node}`, "saved [3]"] : ["saved [3]"], dir: "DOWN" as const },
    });
    const layout = [entry("0", "PowBackward0", "z"), entry("1", "AddBackward0", "plus1/a"), entry("2", "AccumulateGrad", null)].map(node);
    const top = scopedNodes(layout, "");
    expect(top.map((n) => [n.ariaLabel, n.className, n.data.lines[0]])).toEqual([
      ["PowBackward0 of z", undefined, "of z"],
      ["AddBackward0 of plus1/a", undefined, "of plus1/a"],
      ["AccumulateGrad", undefined, "saved [3]"],
    ]);
    openInstance("plus1");
    const inside = scopedNodes(layout, "plus1");
    expect(inside.map((n) => [n.ariaLabel, n.className, n.data.lines])).toEqual([
      ["PowBackward0 of z", "ag-outside", ["of z", "saved [3]"]],
      ["AddBackward0 of a", "ag-scope", ["of a", "saved [3]"]],
      ["AccumulateGrad", "ag-outside", ["saved [3]"]],
    ]);
  });

  it("selects the node of a grad_fn clicked, going out of the module open when it is outside", () => {
    openInstance("plus1");
    revealRunNode("plus1/a");
    expect(ed().meta.open!.length).toBe(1);
    expect(ed().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["a"]);
    revealRunNode("z");
    expect(ed().meta.open ?? []).toEqual([]);
    expect(ed().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["z"]);
    revealRunNode("plus1/a"); // at the graph: the instance it is in
    expect(ed().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["plus1"]);
  });
});
