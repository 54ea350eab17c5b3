import { describe, expect, it } from "vitest";
import type { DocEdge, DocNode, GraphDocument } from "../api/types";
import { fromDocument, toDocument, toFlowEdge, toFlowNode } from "./convert";
import {
  composeDocument,
  graphLevel,
  instanceId,
  makeModule,
  moduleNameProblem,
  nextSeed,
  runKey,
  scopeOf,
  underScope,
  unpackModule,
} from "./modules";

const n = (id: string, op: string, x: number, y: number, params: Record<string, unknown> = {}): DocNode => ({
  id,
  op,
  params,
  position: { x, y },
});
const e = (id: string, source: string, target: string, targetPort = "input", sourcePort = "out"): DocEdge => ({
  id,
  source,
  sourcePort,
  target,
  targetPort,
});

/** in -> m = in * w -> a = m + b -> r = relu(a) -> s = sum(r); w and b random parameters. */
function affine() {
  return {
    nodes: [
      n("in", "tensor", 0, 100, { value: [1, 2, 3] }),
      n("w", "parameter", 0, 0, { shape: [3], init: "randn", seed: 1 }),
      n("m", "mul", 200, 100),
      n("b", "parameter", 200, 250, { shape: [3], init: "randn", seed: 2 }),
      n("a", "add", 400, 100),
      n("r", "relu", 600, 100),
      n("s", "sum", 800, 100),
    ],
    edges: [
      e("in-m", "in", "m"),
      e("w-m", "w", "m", "other"),
      e("m-a", "m", "a"),
      e("b-a", "b", "a", "other"),
      e("a-r", "a", "r"),
      e("r-s", "r", "s"),
    ],
  };
}
const ids = (level: { nodes: DocNode[]; edges: DocEdge[] }) => new Set([...level.nodes.map((x) => x.id), ...level.edges.map((x) => x.id)]);

describe("make module", () => {
  it("turns the wires across the selection into the module's inputs and outputs", () => {
    const g = affine();
    const made = makeModule(g, ["w", "m", "b", "a", "r"], "Affine", ids(g));
    expect(made.instance).toBe("affine1");
    expect(made.def.inputs).toEqual(["m_input"]);
    expect(made.def.outputs).toEqual(["r_out"]);
    // inner nodes keep their params; the ports are module_input/module_output nodes
    expect(made.def.nodes.find((x) => x.id === "w")!.params).toEqual({ shape: [3], init: "randn", seed: 1 });
    expect(made.def.nodes.filter((x) => x.op.startsWith("module_")).map((x) => [x.id, x.op])).toEqual([
      ["m_input", "module_input"],
      ["r_out", "module_output"],
    ]);
    expect(made.def.edges).toContainEqual(e("in-m", "m_input", "m"));
    expect(made.def.edges).toContainEqual(e("r-s", "r", "r_out"));
    // outside: one instance in their place, the crossing edges keep their ids
    expect(made.nodes.map((x) => x.id)).toEqual(["in", "affine1", "s"]);
    expect(made.nodes[1]).toMatchObject({ op: "module", params: { module: "Affine" } });
    expect(made.edges).toEqual([e("in-m", "in", "affine1", "m_input"), e("r-s", "affine1", "s", "input", "r_out")]);
  });

  it("gives one input per outside source, however many nodes inside it feeds", () => {
    const g = {
      nodes: [n("x", "tensor", 0, 0), n("p", "mul", 200, 0), n("q", "exp", 200, 100), n("o", "add", 400, 0)],
      edges: [e("x-p", "x", "p"), e("x-p2", "x", "p", "other"), e("x-q", "x", "q"), e("p-o", "p", "o"), e("q-o", "q", "o", "other")],
    };
    const made = makeModule(g, ["p", "q"], "Twice", ids(g));
    expect(made.def.inputs).toEqual(["p_input"]);
    expect(made.def.outputs).toEqual(["p_out", "q_out"]);
    expect(made.edges.filter((x) => x.target === "twice1")).toHaveLength(1);
    expect(made.def.edges.filter((x) => x.source === "p_input").map((x) => x.target)).toEqual(["p", "p", "q"]);
  });

  it("refuses a selection that would feed itself through a node outside it", () => {
    const g = affine();
    expect(() => makeModule(g, ["m", "r"], "Gap", ids(g))).toThrow(/feed itself through a/);
  });

  it("checks the name as a Python class name, unique", () => {
    expect(moduleNameProblem("Affine", [])).toBeNull();
    expect(moduleNameProblem("2x", [])).toMatch(/class name/);
    expect(moduleNameProblem("class", [])).toMatch(/keyword/);
    expect(moduleNameProblem("A", [{ name: "A", nodes: [], edges: [], inputs: [], outputs: [] }])).toMatch(/already/);
    // instances are named after it: a name ending in a digit keeps it apart from the count
    expect(instanceId("Affine", new Set(["affine1"]))).toBe("affine2");
    expect(instanceId("Block1", new Set())).toBe("block1_1");
  });
});

describe("unpack", () => {
  it("puts the nodes and edges back as they were", () => {
    const g = affine();
    const made = makeModule(g, ["w", "m", "b", "a", "r"], "Affine", ids(g));
    const back = unpackModule(made, made.instance, [made.def]);
    const sortedEdges = (es: DocEdge[]) => [...es].sort((x, y) => x.id.localeCompare(y.id));
    expect(sortedEdges(back.edges)).toEqual(sortedEdges(g.edges));
    expect(back.nodes.map((x) => x.id).sort()).toEqual(g.nodes.map((x) => x.id).sort());
    expect(back.nodes.find((x) => x.id === "w")!.params).toEqual(g.nodes[1].params);
    expect(back.added.sort()).toEqual(["a", "b", "m", "r", "w"]);
  });

  it("gives clashing ids fresh ones and applies the instance's seed and state", () => {
    const g = affine();
    const made = makeModule(g, ["w", "m", "b", "a", "r"], "Affine", ids(g));
    const second = { id: "affine2", op: "module", params: { module: "Affine", seed: 5, state: { b: { value: [0, 0, 0] } } }, position: { x: 0, y: 400 } };
    const level = { nodes: [...made.nodes, second], edges: made.edges };
    expect(nextSeed(level.nodes, "Affine")).toBe(6);
    const back = unpackModule(made, made.instance, [made.def]);
    const both = unpackModule({ nodes: [...back.nodes, second], edges: back.edges }, "affine2", [made.def]);
    const added = both.nodes.filter((x) => both.added.includes(x.id));
    expect(added.map((x) => x.id).sort()).toEqual(["a_1", "b_1", "m_1", "r_1", "w_1"]);
    expect(added.find((x) => x.id === "w_1")!.params.seed).toBe(6); // 1 + the instance's 5
    expect(added.find((x) => x.id === "b_1")!.params).toMatchObject({ value: [0, 0, 0], seed: 7 });
    // an input that nothing feeds leaves its inner targets unwired
    expect(both.edges.filter((x) => x.target === "m_1")).toEqual([expect.objectContaining({ source: "w_1", targetPort: "other" })]);
  });
});

describe("opened modules and their records", () => {
  const made = makeModule(affine(), ["w", "m", "b", "a", "r"], "Affine", ids(affine()));
  const doc: GraphDocument = {
    ...toDocument([], [], { name: "g", description: "", target: null, lesson: [], training: null }),
    version: 2,
    nodes: made.nodes,
    edges: made.edges,
    target: "s",
    modules: [made.def],
  };

  it("keeps modules and version 2 through the page's form; version 1 stays 1", () => {
    const { nodes, edges, meta } = fromDocument(doc);
    expect(toDocument(nodes, edges, meta)).toEqual(doc);
    const v1 = fromDocument({ ...doc, version: 1, modules: undefined, nodes: [], edges: [], target: null });
    const out = toDocument(v1.nodes, v1.edges, v1.meta);
    expect(out.version).toBe(1);
    expect("modules" in out).toBe(false);
  });

  it("writes the level shown back into its definition, and keeps the graph's own", () => {
    const top = fromDocument(doc);
    const inner = made.def;
    // opened l1 (affine1), then deleted the bias and added a second input node
    const nodes = inner.nodes.filter((x) => x.id !== "b").map((x) => toFlowNode(x));
    nodes.push(toFlowNode(n("extra", "module_input", 0, 500)));
    const edges = inner.edges.filter((x) => x.source !== "b").map(toFlowEdge);
    const meta = { ...top.meta, open: [{ instance: "affine1", module: "Affine", nodes: top.nodes, edges: top.edges }] };
    expect(scopeOf(meta)).toBe("affine1");
    expect(graphLevel({ nodes, edges, meta }).nodes).toBe(top.nodes); // backward's choices
    const out = composeDocument(nodes, edges, meta);
    expect(out.nodes.map((x) => x.id)).toEqual(["in", "affine1", "s"]);
    expect(out.target).toBe("s");
    expect(out.modules![0].nodes.map((x) => x.id)).not.toContain("b");
    expect(out.modules![0].inputs).toEqual(["m_input", "extra"]);
    expect(out.modules![0].outputs).toEqual(["r_out"]);
  });

  it("finds an opened instance's records under its path", () => {
    const values = { affine1: 1, "affine1/m": 2, "affine1/r_out": 3, "affine1/inner2/w": 4, s: 5 };
    expect(underScope(values, "affine1")).toEqual({ m: 2, r_out: 3 });
    expect(underScope(values, "affine1/inner2")).toEqual({ w: 4 });
    expect(underScope(values, "")).toBe(values);
    expect(runKey("affine1", "a-r")).toBe("affine1/a-r");
    expect(runKey("", "a-r")).toBe("a-r");
  });
});
