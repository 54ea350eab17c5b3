import { describe, expect, it } from "vitest";
import { type RunAck, RunSender, nodeEdits } from "./edits";
import { squareOfASum } from "../testing/documents";
import type { GraphDocument } from "./types";

const square = squareOfASum;

describe("nodeEdits", () => {
  it("finds the nodes whose params, position or label changed", () => {
    const g = square();
    g.nodes[0].params = { value: 5, requires_grad: true };
    g.nodes[2].position = { x: 10, y: 10 };
    g.nodes[3].label = "z = a²";
    expect(nodeEdits(square(), g)?.map((n) => n.id)).toEqual(["x", "a", "z"]);
    expect(nodeEdits(square(), g)?.[0].params.value).toBe(5);
  });

  it("is empty for the same graph", () => {
    expect(nodeEdits(square(), square())).toEqual([]);
  });

  it("gives up on anything but nodes edited in place", () => {
    const cases: ((g: GraphDocument) => void)[] = [
      (g) => g.nodes.pop(),
      (g) => (g.nodes[3].op = "exp"),
      (g) => g.nodes.reverse(),
      (g) => (g.edges[2].targetPort = "other"),
      (g) => g.edges.pop(),
      (g) => (g.target = "a"),
      (g) => (g.name = "renamed"),
      (g) => (g.training = { loss: "z" } as GraphDocument["training"]),
      (g) => g.lesson.push({ text: "look", select: [], run: null }),
    ];
    for (const change of cases) {
      const g = square();
      change(g);
      expect(nodeEdits(square(), g)).toBeNull();
    }
  });
});

describe("RunSender", () => {
  function server(answers: RunAck[] = []) {
    const sent: Record<string, unknown>[] = [];
    let n = 0;
    const send = async (payload: Record<string, unknown>) => {
      sent.push(payload);
      return answers.shift() ?? { run_id: `r${++n}` };
    };
    return { sent, sender: new RunSender(send) };
  }

  it("sends the whole graph first, then only the edited nodes of the last run's", async () => {
    const { sent, sender } = server();
    await sender.run(square(), { mode: "forward" });
    const g = square();
    g.nodes[0].params = { value: 4, requires_grad: true };
    await sender.run(g, { mode: "backward", target: "z" });
    expect(sent[0]).toEqual({ mode: "forward", graph: square() });
    expect(sent[1]).toEqual({
      mode: "backward",
      target: "z",
      edit: { base: "r1", nodes: [g.nodes[0]] },
    });
    const h = square();
    h.edges.pop();
    await sender.run(h, { mode: "forward" });
    expect(sent[2].graph).toEqual(h);
    await sender.run(h, { mode: "forward" });
    expect(sent[3].edit).toEqual({ base: "r3", nodes: [] });
  });

  it("sends the whole graph when the server forgot the base, or after forget()", async () => {
    const { sent, sender } = server();
    await sender.run(square(), { mode: "forward" });
    const { sent: sent2, sender: s2 } = server([
      { run_id: "a" },
      { error: "no graph of run a to edit", code: "unknown_base" },
    ]);
    await s2.run(square(), { mode: "forward" });
    const ack = await s2.run(square(), { mode: "forward" });
    expect(sent2.map((p) => ("edit" in p ? "edit" : "graph"))).toEqual(["graph", "edit", "graph"]);
    expect(ack).toEqual({ run_id: "r1" });
    sender.forget();
    await sender.run(square(), { mode: "forward" });
    expect(sent.map((p) => ("edit" in p ? "edit" : "graph"))).toEqual(["graph", "graph"]);
  });

  it("keeps its base when a run is refused", async () => {
    const { sent, sender } = server([
      { run_id: "a" },
      { error: "the graph has 1 problem", node_errors: [{ message: "bad", node: "z" }] },
    ]);
    await sender.run(square(), { mode: "forward" });
    const bad = square();
    bad.nodes[3].params = { scalar: "two" };
    await sender.run(bad, { mode: "forward" });
    await sender.run(square(), { mode: "forward" });
    expect(sent[2].edit).toEqual({ base: "a", nodes: [] });
  });
});
