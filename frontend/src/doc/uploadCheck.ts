// Checking an uploaded file before anything is replaced: it must be JSON and a graph document
// the server accepts; a document with problems at its nodes can still be opened (as a draft),
// but the person sees the problems first. Every problem is one line, for a list.
import type { GraphDocument, NodeProblem } from "../api/types";

export type UploadCheck =
  | { kind: "ok"; doc: GraphDocument }
  | { kind: "refused"; reason: string; problems: string[] } // cannot be opened
  | { kind: "problems"; doc: GraphDocument; problems: string[]; nodeErrors: NodeProblem[] };

/** What the server answers: `node_errors` when it is a document, else an error with lines. */
export type Validate = (doc: GraphDocument) => Promise<{ ok: boolean; node_errors: NodeProblem[] }>;

/** JSON.parse's complaint with a line and column (engines give a character position). */
export function jsonProblem(text: string, err: Error): string {
  // V8 echoes the start of the text (`Unexpected token ',', "{ ..." is not valid JSON`): the
  // person has the file; the echo, possibly long, says nothing more
  const msg = err.message.replace(/^JSON\.parse: /, "").replace(/, ".*" is not valid JSON$/s, "");
  const at = /position (\d+)/.exec(msg);
  if (!at || /line \d+/.test(msg)) return msg;
  const before = text.slice(0, Number(at[1])).split("\n");
  return `line ${before.length}, column ${before[before.length - 1].length + 1}: ${msg.replace(/ in JSON at position \d+.*/, "")}`;
}

/** "node a, param lr: ..." — where a problem is, then what it is. */
export function problemLine(p: NodeProblem): string {
  const where = [
    p.node ? `node ${p.node}` : p.edge ? `edge ${p.edge}` : null,
    p.port ? `port ${p.port}` : null,
    p.param ? `param ${p.param}` : null,
  ].filter(Boolean);
  return where.length ? `${where.join(", ")}: ${p.message}` : p.message;
}

export async function checkUpload(text: string, validate: Validate): Promise<UploadCheck> {
  if (!text.trim()) return { kind: "refused", reason: "the file is empty", problems: [] };
  let doc: GraphDocument;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { kind: "refused", reason: "it is not JSON", problems: [jsonProblem(text, err as Error)] };
  }
  let answer: Awaited<ReturnType<Validate>>;
  try {
    answer = await validate(doc);
  } catch (err) {
    const e = err as Error & { problems?: NodeProblem[] };
    const lines = (e.problems ?? []).map(problemLine);
    return {
      kind: "refused",
      reason: "it is not a Wiregrad graph document",
      problems: lines.length ? lines : [e.message],
    };
  }
  if (answer.ok || !answer.node_errors.length) return { kind: "ok", doc };
  return { kind: "problems", doc, problems: answer.node_errors.map(problemLine), nodeErrors: answer.node_errors };
}
