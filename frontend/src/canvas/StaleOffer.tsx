// At a node whose trained values are of an earlier size (doc/stale.ts): PyTorch's message and a
// one-click reset to fresh values of the new size, as soon as the edit that broke them is
// validated (store/shapes.ts) or a run was refused for them. The reset is an ordinary edit:
// Ctrl+Z brings the trained values back.
import type { NodeProblem } from "../api/types";
import { resetPatch, STALE_VALUES, staleOffer, withoutStale } from "../doc/stale";
import { useEditor } from "../store/editor";
import { useShapes } from "../store/shapes";
import { displayName } from "./faces";

const NONE: NodeProblem[] = [];
const staleAt = (id: string) => (p: NodeProblem) => p.node === id && p.code === STALE_VALUES;

/** `inNode`: the node draws its problem lines itself (at full detail; zoomed out its large
 * face covers them). */
export default function StaleOffer({ id, inNode }: { id: string; inNode: boolean }) {
  // each list only when it says something about this node: other edits re-render nothing here
  const fromShapes = useShapes((s) => (s.stale.some(staleAt(id)) ? s.stale : NONE));
  const fromRun = useEditor((s) => (s.problems.some(staleAt(id)) ? s.problems : NONE));
  const stale = fromShapes !== NONE || fromRun !== NONE;
  const node = useEditor((s) => (stale ? s.nodes.find((n) => n.id === id) : undefined));
  const readOnly = useEditor((s) => s.readOnly);
  if (!node || readOnly) return null;
  const name = displayName({ id, ...node.data });
  const offer = staleOffer([...fromRun, ...fromShapes], { id, op: node.data.op, name, params: node.data.params });
  if (!offer) return null;
  // a refused run lists its problems on the node already: each message is said once
  const shown = new Set(inNode ? fromRun.filter((p) => p.node === id && !p.edge).map((p) => p.message) : []);
  const reset = () => {
    const ed = useEditor.getState();
    ed.setParams(id, resetPatch(offer));
    ed.setProblems(withoutStale(useEditor.getState().problems, id));
    useShapes.getState().dropStale(id);
    ed.notify(`${name} has fresh values of its new size (Ctrl+Z brings the trained ones back)`);
  };
  return (
    <div className="stale-offer nodrag" role="group" aria-label={`trained values of ${name}`} data-testid={`stale-${id}`}>
      {offer.messages
        .filter((m) => !shown.has(m))
        .map((m) => (
          <div key={m} className="anno problem" role="alert">
            {m}
          </div>
        ))}
      <span className="stale-question">trained for another size:</span>
      <button type="button" className="nodrag" onClick={reset}>
        {offer.action}?
      </button>
    </div>
  );
}
