// At a node whose trained values are of an earlier size (doc/stale.ts): PyTorch's message and a
// one-click reset to fresh values of the new size, as soon as the edit that broke them is
// validated (store/shapes.ts) or a run was refused for them. A module instance gets the same
// offer for the trained values in its `state` (its layers fed a new size): the reset takes
// them out, and those layers start from their fresh initialisation, as a new instance's do.
// The reset is an ordinary edit: Ctrl+Z brings the trained values back.
import type { NodeProblem } from "../api/types";
import {
  instanceResetPatch,
  instanceStaleOffer,
  resetPatch,
  type StaleOffer as Offer,
  STALE_VALUES,
  staleOffer,
  withoutStale,
  withoutStaleInside,
} from "../doc/stale";
import { useEditor } from "../store/editor";
import { useRunKey } from "../store/modules";
import { useShapes } from "../store/shapes";
import { displayName } from "./faces";

const NONE: NodeProblem[] = [];
const staleAt = (id: string) => (p: NodeProblem) => p.node === id && p.code === STALE_VALUES;
const staleInside = (key: string) => (p: NodeProblem) => p.code === STALE_VALUES && Boolean(p.node?.startsWith(`${key}/`));

/** The stale-values problems of the latest validation and of a refused run, each list only
 * when it says something `about` this node: other edits re-render nothing here. */
function useStaleProblems(about: (p: NodeProblem) => boolean) {
  const fromShapes = useShapes((s) => (s.stale.some(about) ? s.stale : NONE));
  const fromRun = useEditor((s) => (s.problems.some(about) ? s.problems : NONE));
  return { fromShapes, fromRun, stale: fromShapes !== NONE || fromRun !== NONE };
}

/** `inNode`: the node draws its problem lines itself (at full detail; zoomed out its large
 * face covers them). */
export default function StaleOffer({ id, inNode }: { id: string; inNode: boolean }) {
  const { fromShapes, fromRun, stale } = useStaleProblems(staleAt(id));
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
  return <OfferView id={id} name={name} offer={offer} shown={shown} reset={reset} />;
}

/** The offer at module instance `id`: its inner layers' trained values of an earlier size. */
export function InstanceStaleOffer({ id }: { id: string }) {
  const key = useRunKey(id);
  const { fromShapes, fromRun, stale } = useStaleProblems(staleInside(key));
  const node = useEditor((s) => (stale ? s.nodes.find((n) => n.id === id) : undefined));
  const readOnly = useEditor((s) => s.readOnly);
  if (!node || readOnly) return null;
  const name = node.data.label || id;
  const offer = instanceStaleOffer([...fromRun, ...fromShapes], { id, key, name, params: node.data.params });
  if (!offer) return null;
  const reset = () => {
    const ed = useEditor.getState();
    ed.setParams(id, instanceResetPatch(offer, node.data.params));
    ed.setProblems(withoutStaleInside(useEditor.getState().problems, key));
    useShapes.getState().dropStale(key);
    ed.notify(`${offer.reset.join(", ")} in ${name}: fresh values of the new size (Ctrl+Z brings the trained ones back)`);
  };
  return <OfferView id={id} name={name} offer={offer} shown={new Set()} reset={reset} />;
}

function OfferView(props: { id: string; name: string; offer: Offer; shown: Set<string>; reset: () => void }) {
  const { id, name, offer, shown, reset } = props;
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
