// The JSON API under /api (docs/protocol.md). Every error answer is JSON with `error`.
import { authHeaders, captureToken } from "./owner";
import type { GraphDocument, GraphInfo, NodeProblem, OpSpec, RevisionInfo } from "./types";

// the teacher URL's token leaves the address bar before any call is made (owner.ts)
if (typeof location !== "undefined") captureToken();

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly problems: NodeProblem[] = [],
    // an import's document of the lines that could be read (null: none), beside its problems
    readonly partial: GraphDocument | null = null,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/api${path}`, {
    method,
    // the owner key and the teacher's token, if any (owner.ts; backend/server/auth.py)
    headers: { ...authHeaders(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (!res.ok) {
    // validation problems come as node_errors; an import's as problems with line numbers
    // (a document refused for its structure has no node_errors, `[]`, and its lines as problems)
    const problems: NodeProblem[] = data.node_errors?.length
      ? data.node_errors
      : (data.problems || []).map((p: string | { line: number; message: string }) =>
        typeof p === "string" ? { message: p } : { message: `line ${p.line}: ${p.message}` },
      );
    throw new ApiError(data.error ?? `${res.status} ${res.statusText}`, res.status, problems, data.document ?? null);
  }
  return data as T;
}

export const api = {
  ops: () => call<{ ops: OpSpec[] }>("GET", "/ops").then((d) => d.ops),
  templates: () =>
    call<{ templates: { id: string; name: string; description: string }[] }>(
      "GET",
      "/templates",
    ).then((d) => d.templates),
  template: (id: string) => call<GraphDocument>("GET", `/templates/${encodeURIComponent(id)}`),
  validate: (graph: GraphDocument) =>
    call<{ ok: boolean; node_errors: NodeProblem[] }>("POST", "/validate", graph),
  graphs: () => call<{ graphs: GraphInfo[] }>("GET", "/graphs").then((d) => d.graphs),
  graph: (id: string, revision?: number, share?: string) => {
    const query = new URLSearchParams();
    if (revision) query.set("revision", String(revision));
    if (share) query.set("share", share); // someone else's graph, through its share link
    const q = query.toString();
    return call<GraphDocument>("GET", `/graphs/${encodeURIComponent(id)}${q ? `?${q}` : ""}`);
  },
  create: (graph: GraphDocument) => call<GraphInfo>("POST", "/graphs", graph),
  save: (id: string, graph: GraphDocument) =>
    call<GraphInfo>("PUT", `/graphs/${encodeURIComponent(id)}`, graph),
  revisions: (id: string) =>
    call<{ revisions: RevisionInfo[] }>(
      "GET",
      `/graphs/${encodeURIComponent(id)}/revisions`,
    ).then((d) => d.revisions),
  exportCode: (graph: GraphDocument, flavor: "engine" | "torch") =>
    call<{ flavor: string; code: string }>("POST", "/export", { graph, flavor }).then((d) => d.code),
  importCode: (code: string) => call<GraphDocument>("POST", "/import", { code }),
};
