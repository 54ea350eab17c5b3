// The JSON API under /api (docs/protocol.md). Every error answer is JSON with `error`.
import { hostChannel } from "./host";
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
    // what kind of refusal it is, where the server says (`conflict`, `store_full`, ...)
    readonly code: string | null = null,
    // a save conflict's head: the revision someone else saved (docs/protocol.md)
    readonly revision: number | null = null,
  ) {
    super(message);
  }
}

// which revision a stored graph's GET sent (backend/server/api.py)
const REVISION_HEADER = "X-Wiregrad-Revision";

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await exchange<T>(method, path, body)).data;
}

/** fetch, or in a notebook the kernel's answer over the widget's channel (api/host.ts). */
export async function apiFetch(method: string, path: string, body?: unknown) {
  const host = hostChannel();
  if (host) {
    const reply = await host.api(method, path, body);
    return {
      ok: reply.status >= 200 && reply.status < 300,
      status: reply.status,
      statusText: "",
      headers: { get: (k: string) => reply.headers[k.toLowerCase()] ?? null },
      json: async () => reply.data,
    };
  }
  return fetch(`/api${path}`, {
    method,
    // the owner key and the teacher's token, if any (owner.ts; backend/server/auth.py)
    headers: { ...authHeaders(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function exchange<T>(method: string, path: string, body?: unknown) {
  const res = await apiFetch(method, path, body);
  const data = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (!res.ok) {
    // validation problems come as node_errors; an import's as problems with line numbers
    // (a document refused for its structure has no node_errors, `[]`, and its lines as problems)
    const problems: NodeProblem[] = data.node_errors?.length
      ? data.node_errors
      : (data.problems || []).map((p: string | { line: number; message: string }) =>
        typeof p === "string" ? { message: p } : { message: `line ${p.line}: ${p.message}` },
      );
    throw new ApiError(
      data.error ?? `${res.status} ${res.statusText}`,
      res.status,
      problems,
      data.document ?? null,
      typeof data.code === "string" ? data.code : null,
      typeof data.revision === "number" ? data.revision : null,
    );
  }
  return { data: data as T, res };
}

function graphPath(id: string, query: Record<string, string | number | undefined>) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return `/graphs/${encodeURIComponent(id)}${s ? `?${s}` : ""}`;
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
  graph: (id: string, revision?: number, share?: string) =>
    api.storedGraph(id, revision, share).then((g) => g.doc),
  /** A stored graph (the head, or `revision`) with the revision it is, which a save of it
   * names as its base. `share`: someone else's graph, through its share link. */
  storedGraph: async (id: string, revision?: number, share?: string) => {
    const { data, res } = await exchange<GraphDocument>(
      "GET",
      graphPath(id, { revision: revision || undefined, share: share || undefined }),
    );
    const rev = Number(res.headers.get(REVISION_HEADER));
    return { doc: data, revision: Number.isInteger(rev) && rev > 0 ? rev : null };
  },
  create: (graph: GraphDocument) => call<GraphInfo>("POST", "/graphs", graph),
  /** A new revision of graph `id`; with `base`, only while `base` is still the head, else an
   * ApiError with status 409, code "conflict" and the head's `revision`. */
  save: (id: string, graph: GraphDocument, base?: number | null) =>
    call<GraphInfo>("PUT", graphPath(id, { base_revision: base ?? undefined }), graph),
  revisions: (id: string) =>
    call<{ revisions: RevisionInfo[] }>(
      "GET",
      `/graphs/${encodeURIComponent(id)}/revisions`,
    ).then((d) => d.revisions),
  /** The graph as Python; `weights`: which weights its docstring says it starts from (the
   * initial ones: `graph` as it was before its training). */
  // trace: the script prints every value and gradient, one line each (docs/code-export.md)
  // the answer's `weights`: the .safetensors file the script loads from beside itself (base64),
  // where the graph stores many values no seed gives (doc/exportFiles.ts)
  exportCode: (graph: GraphDocument, flavor: "engine" | "torch", weights?: "initial" | "trained", trace = false) =>
    call<{ flavor: string; code: string; weights?: string }>("POST", "/export", { graph, flavor, weights, trace }),
  /** `weights`: the script's .safetensors file as base64, where it loads one. */
  importCode: (code: string, weights?: string) => call<GraphDocument>("POST", "/import", { code, weights }),
};
