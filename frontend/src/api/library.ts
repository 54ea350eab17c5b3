// The module library's HTTP calls (docs/protocol.md: /api/module-library): its entries with
// their constructor arguments, and a definition built from argument values.
import { ApiError, apiFetch } from "./http";
import type { ModuleDef, ParamSpec } from "./types";

export interface LibraryEntry {
  name: string; // the class name its definition gets
  doc: string;
  torch: string; // the PyTorch it computes, as code
  args: ParamSpec[]; // described as op params are, so the dialog uses the same controls
}

/** A 400 for bad arguments: the problem of each, by the argument's name. */
export class LibraryArgsError extends ApiError {
  constructor(
    message: string,
    readonly fieldErrors: Record<string, string>,
  ) {
    super(message, 400);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await apiFetch(method, `/module-library${path}`, body);
  const data = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (res.ok) return data as T;
  if (data.field_errors) throw new LibraryArgsError(data.error, data.field_errors);
  throw new ApiError(data.error ?? `${res.status} ${res.statusText}`, res.status);
}

export const library = {
  entries: () => call<{ modules: LibraryEntry[] }>("GET", "").then((d) => d.modules),
  build: (name: string, args: Record<string, unknown>) =>
    call<{ module: ModuleDef }>("POST", `/${encodeURIComponent(name)}`, args).then((d) => d.module),
};
