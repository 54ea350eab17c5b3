import { describe, expect, it } from "vitest";
import type { ModuleDef } from "../api/types";
import { definitionKey, freeModuleName, placeDefinition } from "./library";

function block(name: string, outChannels = 8, x = 0): ModuleDef {
  return {
    name,
    doc: `${name}(out_channels=${outChannels})`,
    nodes: [
      { id: "x", op: "module_input", params: {}, position: { x, y: 0 } },
      { id: "conv", op: "conv2d", params: { out_channels: outChannels, kernel_size: 3, seed: 1 }, position: { x: 200, y: 0 } },
      { id: "y", op: "module_output", params: {}, position: { x: 400, y: 0 } },
    ],
    edges: [
      { id: "x-conv", source: "x", sourcePort: "out", target: "conv", targetPort: "input" },
      { id: "conv-y", source: "conv", sourcePort: "out", target: "y", targetPort: "input" },
    ],
    inputs: ["x"],
    outputs: ["y"],
  };
}

describe("module library: where a built definition goes", () => {
  it("takes the entry's name when it is free, else the first free numbered one", () => {
    expect(freeModuleName("ConvBlock", [])).toBe("ConvBlock");
    expect(freeModuleName("ConvBlock", [block("ConvBlock")])).toBe("ConvBlock2");
    expect(freeModuleName("ConvBlock", [block("ConvBlock"), block("ConvBlock2"), block("ConvBlock4")])).toBe("ConvBlock3");
    expect(freeModuleName("ConvBlock", [block("Other")])).toBe("ConvBlock");
  });

  it("adds a definition another one's arguments made under a free name", () => {
    const have = [block("ConvBlock", 8)];
    const placed = placeDefinition(block("ConvBlock", 16), have);
    expect(placed).toMatchObject({ name: "ConvBlock2", reused: false });
    expect(placed.modules.map((m) => m.name)).toEqual(["ConvBlock", "ConvBlock2"]);
    expect(placed.modules[1].nodes[1].params.out_channels).toBe(16);
    expect(have).toHaveLength(1); // not changed in place
  });

  it("uses an identical definition again, whatever its name, doc or node positions", () => {
    const have = [block("Other", 4), block("MyConv", 8, 50)];
    const placed = placeDefinition(block("ConvBlock", 8), have);
    expect(placed).toEqual({ name: "MyConv", modules: have, reused: true });
  });

  it("compares params whatever their key order, and tells a changed param apart", () => {
    const a = block("A");
    const b = block("B");
    b.nodes[1] = { ...b.nodes[1], params: { seed: 1, kernel_size: 3, out_channels: 8 } };
    expect(definitionKey(a)).toBe(definitionKey(b));
    b.nodes[1] = { ...b.nodes[1], params: { seed: 2, kernel_size: 3, out_channels: 8 } };
    expect(definitionKey(a)).not.toBe(definitionKey(b));
  });
});
