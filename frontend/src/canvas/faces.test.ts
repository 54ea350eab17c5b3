import { describe, expect, it } from "vitest";
import type { OpSpec, ParamSpec, PortSpec } from "../api/types";
import { allFaces, displayName, faceText, leafTag, leafValue, readableName, shapeText } from "./faces";

const port = (name: string, extra: Partial<PortSpec> = {}): PortSpec => ({
  name,
  optional: false,
  variadic: false,
  doc: "",
  ...extra,
});
const param = (name: string, type: ParamSpec["type"], dflt: unknown): ParamSpec => ({
  name,
  type,
  default: dflt,
  doc: "",
});
const op = (name: string, inputs: PortSpec[], params: ParamSpec[] = [], source = false): OpSpec => ({
  name,
  category: "",
  doc: "",
  inputs,
  outputs: ["out"],
  params,
  source,
});
// the registry's call forms (CallForm.describe()): an operator, or the form code usually takes
const written = (spec: OpSpec, operator: string, usual: "function" | "method" = "function"): OpSpec => ({
  ...spec,
  call: { operator, usual, aliases: [] },
});
const PAIR = [port("input"), port("other")];
const SCALAR = [param("scalar", "float", null)];
const OPS: Record<string, OpSpec> = {
  tensor: op("tensor", [], [param("value", "tensor", null), param("shape", "shape", []), param("init", "choice", "zeros"), param("requires_grad", "bool", false), param("name", "str", "")], true),
  parameter: op("parameter", [], [param("value", "tensor", null), param("shape", "shape", []), param("init", "choice", "zeros")], true),
  scalar: op("scalar", [], [param("value", "float", 1), param("name", "str", "")], true),
  mul: written(op("mul", PAIR, SCALAR), "*"),
  sub: written(op("sub", PAIR, SCALAR), "-"),
  pow: written(op("pow", PAIR, SCALAR), "**"),
  matmul: written(op("matmul", PAIR), "@"),
  relu: op("relu", [port("input")]),
  sum: written(op("sum", [port("input")], [param("dim", "dims", null), param("keepdim", "bool", false)]), "", "method"),
  softmax: op("softmax", [port("input")], [param("dim", "int", -1)]),
  mse_loss: op("mse_loss", [port("input"), port("target")], [param("reduction", "choice", "mean")]),
  cat: op("cat", [port("tensors", { variadic: true })], [param("dim", "int", 0)]),
  linear: op("linear", [port("input")], [param("out_features", "int", 1), param("bias", "bool", true)]),
};

type N = { id: string; op: string; params?: Record<string, unknown>; label?: string | null };
function faces(nodes: N[], edges: [string, string, string?][]) {
  return allFaces(
    {
      nodes: nodes.map((n) => ({ id: n.id, data: { op: n.op, params: n.params ?? {}, label: n.label ?? null } })),
      edges: edges.map(([source, target, port]) => ({ source, target, targetHandle: port ?? "input" })),
    },
    OPS,
  );
}

describe("node faces", () => {
  it("write an op with a scalar param in PyTorch notation: b = a * 3", () => {
    const f = faces([{ id: "a", op: "tensor", params: { value: 2 } }, { id: "b", op: "mul", params: { scalar: 3 } }], [["a", "b"]]);
    expect(f.b).toBe("b = a * 3");
    expect(f.a).toBe("a = tensor(2)");
  });

  it("write an unnamed scalar node by its number: L = 10 - d", () => {
    const f = faces(
      [{ id: "ten", op: "scalar", params: { value: 10 } }, { id: "d", op: "tensor", params: { value: 4 } }, { id: "sub1", op: "sub", label: "L" }],
      [["ten", "sub1"], ["d", "sub1", "other"]],
    );
    expect(f.sub1).toBe("L = 10 - d");
    expect(f.ten).toBe("ten = 10");
  });

  it("never let a label hide the op", () => {
    const f = faces([{ id: "x", op: "tensor", params: { value: [1, 2], name: "x" } }, { id: "r", op: "relu", label: "hidden" }], [["x", "r"]]);
    expect(f.r).toBe("hidden = relu(x)");
    // a label written as an assignment names the node; its right side is the op's own
    const g = faces([{ id: "x", op: "tensor", params: { value: 1 } }, { id: "z", op: "pow", params: { scalar: 2 }, label: "z = a ** 2" }], [["x", "z"]]);
    expect(g.z).toBe("z = x ** 2");
  });

  it("name nodes by label, assignment, name param, else id", () => {
    expect(displayName({ id: "n1", op: "add", params: {}, label: "a = x + y" })).toBe("a");
    expect(displayName({ id: "n1", op: "add", params: {}, label: "loss" })).toBe("loss");
    expect(displayName({ id: "n1", op: "add", params: {}, label: "x ** 2" })).toBe("n1");
    expect(readableName({ id: "n1", op: "add", params: {}, label: "x ** 2" })).toBe("x ** 2");
    expect(displayName({ id: "t", op: "tensor", params: { name: "w" } })).toBe("w");
    expect(displayName({ id: "t", op: "tensor", params: {} })).toBe("t");
  });

  it("write matmul, method reductions with their params, functions with kwargs", () => {
    const f = faces(
      [
        { id: "x", op: "tensor", params: { shape: [4, 3], init: "randn" } },
        { id: "W", op: "parameter", params: { shape: [3, 2], init: "randn" } },
        { id: "m", op: "matmul", label: "h" },
        { id: "s", op: "sum", params: { dim: 1 } },
        { id: "p", op: "softmax", params: { dim: 0 } },
        { id: "q", op: "softmax", params: { dim: -1 } },
      ],
      [["x", "m"], ["W", "m", "other"], ["m", "s"], ["m", "p"], ["m", "q"]],
    );
    expect(f.x).toBe("x = randn(4, 3)");
    expect(f.m).toBe("h = x @ W");
    expect(f.s).toBe("s = h.sum(dim=1)");
    expect(f.p).toBe("p = softmax(h, dim=0)");
    expect(f.q).toBe("q = softmax(h)");
  });

  it("write losses with their inputs, variadic ports as a list, linear as x @ W.T + b", () => {
    const f = faces(
      [
        { id: "y", op: "tensor", params: { value: [1] } },
        { id: "t", op: "tensor", params: { value: [0] } },
        { id: "L", op: "mse_loss", params: { reduction: "sum" } },
        { id: "c", op: "cat" },
        { id: "lin", op: "linear", params: { out_features: 3 } },
      ],
      [["y", "L"], ["t", "L", "target"], ["y", "c", "tensors"], ["t", "c", "tensors"], ["y", "lin"]],
    );
    expect(f.L).toBe("L = mse_loss(y, t, reduction='sum')");
    expect(f.c).toBe("c = cat([y, t])");
    expect(f.lin).toBe("lin = y @ W[3].T + b");
  });

  it("mark a missing input with ?", () => {
    expect(faceText({ id: "b", op: "mul", params: {} }, OPS.mul, {})).toBe("b = ? * ?");
  });

  it("show a leaf's value before any run: small inline, big by shape", () => {
    expect(leafValue({ id: "x", op: "tensor", params: { value: [2, 3] } }, OPS.tensor)).toBe("[2, 3]");
    const big = Array.from({ length: 4 }, () => [1, 2, 3]);
    expect(leafValue({ id: "x", op: "tensor", params: { value: big } }, OPS.tensor)).toBe("4×3 tensor");
    expect(faceText({ id: "x", op: "tensor", params: { value: big } }, OPS.tensor, {})).toBe("x = tensor(…4×3)");
    expect(leafValue({ id: "s", op: "scalar", params: { value: 10 } }, OPS.scalar)).toBe("10");
    expect(leafValue({ id: "s", op: "scalar", params: {} }, OPS.scalar)).toBe("1");
    expect(leafValue({ id: "r", op: "relu", params: {} }, OPS.relu)).toBeNull();
    expect(leafTag({ id: "x", op: "tensor", params: { requires_grad: true } }, OPS.tensor)).toBe("requires_grad");
    expect(leafTag({ id: "w", op: "parameter", params: {} }, OPS.parameter)).toBe("parameter");
  });

  it("write shapes as ports show them", () => {
    expect(shapeText([])).toBe("scalar");
    expect(shapeText([2, 3])).toBe("2×3");
    expect(shapeText(undefined)).toBeNull();
  });
});

describe("operands labelled by an expression", () => {
  it("read as that expression in parentheses", () => {
    const f = faces(
      [{ id: "d", op: "tensor", params: { value: 1 } }, { id: "diff", op: "sub", params: { scalar: 2 }, label: "10 - d" }, { id: "L", op: "sum", label: "L = (10 - d).sum()" }],
      [["d", "diff"], ["diff", "L"]],
    );
    expect(f.L).toBe("L = (10 - d).sum()");
    expect(f.diff).toBe("diff = d - 2");
  });
});
