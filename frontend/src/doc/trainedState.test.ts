import { describe, expect, it } from "vitest";
import type { DocNode, OpSpec } from "../api/types";
import { makeModule } from "./modules";
import { layerState, splitTrained } from "./trainedState";

const tensorParam = (name: string) => ({ name, type: "tensor" as const, default: null, doc: "", nullable: true });
const linear: OpSpec = {
  name: "linear",
  category: "layers",
  doc: "",
  inputs: [{ name: "input" }] as OpSpec["inputs"],
  outputs: ["out"],
  params: [{ name: "out_features", type: "int", default: 1, doc: "" }, tensorParam("weight"), tensorParam("bias_value")],
  source: false,
};
const parameter: OpSpec = { ...linear, name: "parameter", inputs: [], source: true, params: [tensorParam("value")] };
const node = (id: string, op: string, params: Record<string, unknown>): DocNode => ({ id, op, params, position: { x: 0, y: 0 } });

describe("splitTrained", () => {
  it("keeps a layer's trained state out of the definition, in the instance's state", () => {
    expect(layerState(linear)).toEqual(["weight", "bias_value"]);
    expect(layerState(parameter)).toEqual([]);
    const fc = node("fc", "linear", { out_features: 2, seed: 1, weight: [[1, 2]], bias_value: [0.5] });
    expect(splitTrained(fc, linear)).toEqual({
      params: { out_features: 2, seed: 1 },
      state: { fc: { weight: [[1, 2]], bias_value: [0.5] } },
    });
    // a layer never trained has nothing to move
    expect(splitTrained(node("fc", "linear", { out_features: 2 }), linear)).toEqual({ params: { out_features: 2 }, state: {} });
  });

  it("moves a parameter's value only when the last training wrote it", () => {
    const w = node("w", "parameter", { value: [3, 4] });
    expect(splitTrained(w, parameter)).toEqual({ params: { value: [3, 4] }, state: {} }); // typed
    const writes = { seeded: { w: { value: [1, 2] } }, written: { w: { value: [3, 4] } } };
    expect(splitTrained(w, parameter, writes)).toEqual({ params: { value: [1, 2] }, state: { w: { value: [3, 4] } } });
    // seeded from init (no value before training): the definition draws it again
    const drawn = { seeded: { w: { init: "randn" } }, written: { w: { init: "randn", value: [3, 4] } } };
    const w2 = node("w", "parameter", { init: "randn", value: [3, 4] });
    expect(splitTrained(w2, parameter, drawn)).toEqual({ params: { init: "randn" }, state: { w: { value: [3, 4] } } });
    // changed by a person since the training: theirs, kept in the definition
    expect(splitTrained(node("w", "parameter", { value: [9, 9] }), parameter, writes).state).toEqual({});
  });

  it("moves a nested instance's state under its path", () => {
    const b = node("b", "module", { module: "Inner", seed: 2, state: { fc: { weight: [[1]] } } });
    expect(splitTrained(b, undefined)).toEqual({ params: { module: "Inner", seed: 2 }, state: { "b/fc": { weight: [[1]] } } });
  });

  it("makes a module whose definition starts fresh and whose instance runs as trained", () => {
    const level = {
      nodes: [node("x", "tensor", { value: [[1, 2]] }), node("fc", "linear", { out_features: 1, weight: [[1, 2]], bias_value: [0] })],
      edges: [{ id: "x-fc", source: "x", sourcePort: "out", target: "fc", targetPort: "input" }],
    };
    const specs: Record<string, OpSpec> = { linear };
    const made = makeModule(level, ["fc"], "Block", new Set(["x", "fc", "x-fc"]), (n) => splitTrained(n, specs[n.op]));
    expect(made.def.nodes.find((n) => n.id === "fc")!.params).toEqual({ out_features: 1 });
    const inst = made.nodes.find((n) => n.id === made.instance)!;
    expect(inst.params).toEqual({ module: "Block", state: { fc: { weight: [[1, 2]], bias_value: [0] } } });
  });
});
