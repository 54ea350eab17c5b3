// Graph documents the unit tests share.
import type { GraphDocument } from "../api/types";

/** The seeds' square of a sum, z = (x + y)^2 at x=2, y=3, as the page holds it (a fresh copy). */
export function squareOfASum(): GraphDocument {
  return {
    format: "wiregrad.graph",
    version: 1,
    name: "square of a sum",
    description: "",
    nodes: [
      { id: "x", op: "tensor", params: { value: 2, requires_grad: true }, position: { x: 0, y: 0 } },
      { id: "y", op: "tensor", params: { value: 3 }, position: { x: 0, y: 200 } },
      { id: "a", op: "add", params: {}, position: { x: 200.4, y: 99.6 }, label: "a = x + y" },
      { id: "z", op: "pow", params: { scalar: 2 }, position: { x: 400, y: 100 } },
    ],
    edges: [
      { id: "x-a", source: "x", sourcePort: "out", target: "a", targetPort: "input" },
      { id: "y-a", source: "y", sourcePort: "out", target: "a", targetPort: "other" },
      { id: "a-z", source: "a", sourcePort: "out", target: "z", targetPort: "input" },
    ],
    target: "z",
    lesson: [{ text: "look", select: ["x"], run: null }],
  };
}
