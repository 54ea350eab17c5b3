import { describe, expect, it } from "vitest";
import { ApiError } from "../api/http";
import type { GraphDocument } from "../api/types";
import { checkUpload, jsonProblem, problemLine } from "./uploadCheck";

const never = () => Promise.reject(new Error("validate must not be called"));

describe("upload check", () => {
  it("refuses an empty file and a file that is not JSON, saying where", async () => {
    expect(await checkUpload("  \n", never)).toEqual({ kind: "refused", reason: "the file is empty", problems: [] });
    const r = await checkUpload('{\n  "nodes": [,]\n}', never);
    expect(r.kind).toBe("refused");
    if (r.kind !== "refused") return;
    expect(r.reason).toBe("it is not JSON");
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain("Unexpected token ','");
    expect(r.problems[0]).not.toContain("nodes"); // not the engine's echo of the text
  });

  it("turns an engine's position into a line and column, where it gives one", () => {
    const text = '{"a": 1,\n "b": }';
    expect(jsonProblem(text, new Error("Unexpected token } in JSON at position 15"))).toBe(
      "line 2, column 7: Unexpected token }",
    );
    expect(jsonProblem(text, new Error("Bad thing (line 2 column 7)"))).toBe("Bad thing (line 2 column 7)");
  });

  it("lists the server's structure problems, one a line", async () => {
    const refuse = () =>
      Promise.reject(
        new ApiError("invalid graph document: ...", 400, [
          { message: "nodes[0].op: field required" },
          { message: "edges: input should be a valid list" },
        ]),
      );
    expect(await checkUpload('{"nodes": [{"id": "a"}], "edges": "x"}', refuse)).toEqual({
      kind: "refused",
      reason: "it is not a Wiregrad graph document",
      problems: ["nodes[0].op: field required", "edges: input should be a valid list"],
    });
  });

  it("opens a clean document, and holds one with node problems for the person to decide", async () => {
    const doc = { format: "wiregrad.graph", version: 1, nodes: [], edges: [] } as unknown as GraphDocument;
    expect(await checkUpload(JSON.stringify(doc), async () => ({ ok: true, node_errors: [] }))).toEqual({
      kind: "ok",
      doc,
    });
    const bad = [{ message: "unknown op 'nope'", node: "x" }];
    const r = await checkUpload(JSON.stringify(doc), async () => ({ ok: false, node_errors: bad }));
    expect(r).toEqual({ kind: "problems", doc, problems: ["node x: unknown op 'nope'"], nodeErrors: bad });
  });

  it("says where each problem is", () => {
    expect(problemLine({ message: "must be > 0", node: "l1", param: "out_features" })).toBe(
      "node l1, param out_features: must be > 0",
    );
    expect(problemLine({ message: "makes a cycle", edge: "e3" })).toBe("edge e3: makes a cycle");
    expect(problemLine({ message: "no nodes" })).toBe("no nodes");
  });
});
