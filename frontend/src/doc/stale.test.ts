// The stale-values offer: which params a reset takes out, and what the button says.
import { describe, expect, it } from "vitest";
import type { NodeProblem } from "../api/types";
import {
  instanceResetPatch,
  instanceStaleOffer,
  resetPatch,
  staleOffer,
  STALE_VALUES,
  withoutStale,
  withoutStaleInside,
} from "./stale";

const weight: NodeProblem = {
  node: "layer1",
  param: "weight",
  code: STALE_VALUES,
  message: "size mismatch for layer1.weight: copying a param with shape torch.Size([8, 2]) from checkpoint, ...",
};
const bias: NodeProblem = { ...weight, param: "bias_value", message: "size mismatch for layer1.bias: ..." };
const other: NodeProblem = { node: "layer1", message: "something else" };
const layer = (params: Record<string, unknown>) => ({ id: "layer1", op: "linear", name: "hidden", params });

describe("staleOffer", () => {
  it("offers to reset a layer's trained values, by the name people gave it", () => {
    const offer = staleOffer([weight, bias, other], layer({ out_features: 4, weight: [[1, 2]], bias_value: [0] }));
    expect(offer).toEqual({
      node: "layer1",
      reset: ["weight", "bias_value"],
      action: "reset the weights of hidden to the new size",
      messages: [weight.message, bias.message],
    });
    expect(resetPatch(offer!)).toEqual({ weight: undefined, bias_value: undefined });
  });

  it("takes out every stored trained value, even one of the right size", () => {
    // out_features kept, input narrower: only the weight is stale, but the bias was trained
    // with it
    const offer = staleOffer([weight], layer({ weight: [[1, 2]], bias_value: [0] }));
    expect(offer?.reset).toEqual(["weight", "bias_value"]);
  });

  it("resets a trainable leaf's value", () => {
    const p: NodeProblem = { node: "w", param: "value", code: STALE_VALUES, message: "size mismatch for w: ..." };
    const offer = staleOffer([p], { id: "w", op: "parameter", name: "w", params: { value: [1, 2, 3], shape: [4] } });
    expect(offer?.reset).toEqual(["value"]);
    expect(offer?.action).toBe("reset w to fresh values of the new size");
  });

  it("offers nothing without a stale problem at the node", () => {
    expect(staleOffer([other], layer({ weight: [[1]] }))).toBeNull();
    expect(staleOffer([{ ...weight, node: "layer2" }], layer({ weight: [[1]] }))).toBeNull();
    expect(staleOffer([], layer({}))).toBeNull();
  });

  it("clears the node's stale problems once reset, and keeps the rest", () => {
    const elsewhere = { ...weight, node: "layer2" };
    expect(withoutStale([weight, bias, other, elsewhere], "layer1")).toEqual([other, elsewhere]);
  });
});

describe("instanceStaleOffer", () => {
  const inside: NodeProblem = { ...weight, node: "block1/layer1" };
  const params = { module: "Block", state: { layer1: { weight: [[1, 2]] }, "b/fc": { weight: [[3]] } } };
  it("offers to take a layer's trained values out of its instance's state", () => {
    const offer = instanceStaleOffer([inside, other], { id: "block1", key: "block1", name: "block1", params })!;
    expect(offer.reset).toEqual(["layer1"]);
    expect(offer.action).toBe("reset layer1 of block1 to fresh values of the new size");
    expect(offer.messages).toEqual([weight.message]);
    expect(instanceResetPatch(offer, params)).toEqual({ state: { "b/fc": { weight: [[3]] } } });
    expect(withoutStaleInside([inside, other], "block1")).toEqual([other]);
  });

  it("offers nothing when the stale values are the definition's, not the instance's", () => {
    expect(instanceStaleOffer([inside], { id: "block1", key: "block1", name: "block1", params: { module: "Block" } })).toBeNull();
    expect(instanceStaleOffer([inside], { id: "block2", key: "block2", name: "block2", params })).toBeNull();
  });
});
