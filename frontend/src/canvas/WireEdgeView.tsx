// One wire: its producer's value and, after backward, the gradient its consumer sent back
// along it (in the gradient colour). A branch an `if` did not take is dimmed. Wires joining the
// same two nodes stack their labels (parallelEdges.ts).
import { BaseEdge, EdgeLabelRenderer, type EdgeProps, getBezierPath } from "@xyflow/react";
import { memo } from "react";
import type { WireEdge } from "../doc/convert";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { useDetailed } from "./detail";
import { labelShift, parallelPlaces } from "./parallelEdges";
import { useRunSlice } from "./runSlice";

/** What the latest run says about edge `id`. The producer's value is only ever shown in a
 * label: an edge drawn without one does not re-render when that value arrives. */
function useEdgeRun(id: string, source: string, labelled: boolean) {
  return useRunSlice((s) => {
    const a = s.annotations;
    const focused = s.focus.edge === id;
    return {
      value: labelled || focused ? a.values[source] : undefined,
      grad: a.edgeGrads[id],
      notTaken: a.notTaken[id],
      focused,
    };
  });
}

function WireEdgeView(props: EdgeProps<WireEdge>) {
  const { id, source, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  // zoomed far out, labels would be specks: the wire's colour says what arrived on it, and
  // a thousand labels fewer keep panning and streaming smooth
  const detailed = useDetailed();
  const { value, grad, notTaken, focused } = useEdgeRun(id, source, detailed || !!props.selected);
  const problem = useEditor((s) => s.problems.find((p) => p.edge === id));
  const shift = labelShift(useEditor((s) => parallelPlaces(s.edges, s.nodes, s.ops).get(id)));
  const [path, labelX, labelY] = getBezierPath({
    sourceX,
    sourceY,
    targetX,
    targetY,
    sourcePosition,
    targetPosition,
  });
  const cls = [
    "wire",
    grad ? "has-grad" : "",
    notTaken ? "not-taken" : "",
    focused ? "focused" : "",
    problem ? "has-problem" : "",
    props.selected ? "selected" : "",
  ].join(" ");
  const hasLabel = (detailed || focused || props.selected) && (value || grad || problem || notTaken);
  return (
    <>
      <BaseEdge id={id} path={path} className={cls} interactionWidth={16} />
      {hasLabel && (
        <EdgeLabelRenderer>
          <div
            className={`wire-label ${cls}`}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY + shift}px)` }}
            data-testid={`edge-${id}`}
            onClick={() => useRun.getState().selectEdge(id)}
          >
            {notTaken && <div className="muted">not taken</div>}
            {value && !notTaken && (
              <div className="anno value" data-testid={`edge-value-${id}`}>
                {formatSummary(value)}
              </div>
            )}
            {grad && (
              <div className="anno grad" data-testid={`edge-grad-${id}`}>
                ∇ {formatSummary(grad)}
              </div>
            )}
            {problem && (
              <div className="anno problem" role="alert">
                {problem.message}
              </div>
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export default memo(WireEdgeView);
