// In-place ops on a node (docs/graph-format.md, "In-place ops"): the "in place" badge of a node
// that writes into its input, the tensor's name at its version once a run gives one (`x @ v1`),
// and a run error shown on the node it belongs to, a version error explained: which node saved
// the value, which write overwrote it, and the versions.
import type { OpSpec } from "../api/types";
import type { EditorState } from "../store/editor";
import { useEditor } from "../store/editor";
import { displayName } from "./faces";
import { useRunSlice } from "./runSlice";
import "./inplace.css";

/** The node whose tensor node `id`'s value is: up through the inputs in-place ops write. */
export function writtenRoot(s: Pick<EditorState, "nodes" | "edges" | "ops">, id: string): string {
  let cur = id;
  for (let hops = 0; hops < 1000; hops++) {
    const node = s.nodes.find((n) => n.id === cur);
    const port = node ? s.ops[node.data.op]?.writes : undefined;
    const into = port ? s.edges.find((e) => e.target === cur && e.targetHandle === port) : undefined;
    if (!into) return cur;
    cur = into.source;
  }
  return cur;
}

function nameOf(s: EditorState, id: string | null | undefined): string {
  const n = id ? s.nodes.find((x) => x.id === id) : undefined;
  return n ? displayName({ id: n.id, ...n.data }) : (id ?? "?");
}

/** Whether node `id` writes into its input, or its tensor is written by a later node. */
function isWritten(s: EditorState, id: string): boolean {
  return s.edges.some((e) => {
    if (e.source !== id) return false;
    const t = s.nodes.find((n) => n.id === e.target);
    return !!t && s.ops[t.data.op]?.writes === e.targetHandle;
  });
}

export function InplaceBadge({ spec }: { spec: OpSpec | undefined }) {
  if (!spec?.writes) return null;
  return (
    <span className="inplace-badge" title={`writes into its ${spec.writes}: its value is that tensor, one version later`}>
      in place
    </span>
  );
}

/** `x @ v1` under the node's value: for writes and for the tensors they write. */
export function VersionLine({ id, spec }: { id: string; spec: OpSpec | undefined }) {
  const { version } = useRunSlice((s) => ({ version: s.annotations.versions[id] }));
  const label = useEditor((s) =>
    version === undefined || !(spec?.writes || version > 0 || isWritten(s, id))
      ? null
      : `${nameOf(s, writtenRoot(s, id))} @ v${version}`,
  );
  if (label === null) return null;
  return (
    <div className="anno version" data-testid={`version-${id}`} title="the tensor and its version counter">
      {label}
    </div>
  );
}

/** The run's error, on the node it is about; a version error with who saved and who wrote. */
export function RunErrorLine({ id }: { id: string }) {
  const { error } = useRunSlice((s) => ({ error: s.annotations.error?.node === id ? s.annotations.error : null }));
  const why = useEditor((s) => {
    if (!error || error.saved_by === undefined) return null;
    const writer = error.overwritten_by ? nameOf(s, error.overwritten_by) : "an in-place write";
    return (
      `${nameOf(s, error.saved_by)} (${error.saved_op}) saved a value at version ${error.expected_version} ` +
      `for its backward; ${writer} wrote into it in place, so it is at version ${error.version}.`
    );
  });
  if (!error) return null;
  return (
    <div className="anno problem run-error" role="note" data-testid={`error-${id}`}>
      {error.message}
      {why && <div className="run-error-why" data-testid={`error-why-${id}`}>{why}</div>}
    </div>
  );
}
