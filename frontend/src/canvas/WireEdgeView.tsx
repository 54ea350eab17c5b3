// One wire: its producer's value and, after backward, the gradient its consumer sent back
// along it (in the gradient colour). A branch an `if` did not take is dimmed.
import { BaseEdge, EdgeLabelRenderer, type EdgeProps, getBezierPath, useStore } from "@xyflow/react";
import { memo } from "react";
import type { WireEdge } from "../doc/convert";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";

function WireEdgeView(props: EdgeProps<WireEdge>) {
  const { id, source, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  const value = useRun((s) => s.annotations.values[source]);
  const grad = useRun((s) => s.annotations.edgeGrads[id]);
  const notTaken = useRun((s) => s.annotations.notTaken[id]);
  const focused = useRun((s) => s.focus.edge === id);
  const problem = useEditor((s) => s.problems.find((p) => p.edge === id));
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
  // zoomed far out, labels would be specks: the wire's colour says what arrived on it, and
  // a thousand labels fewer keep panning and streaming smooth
  const detailed = useStore((s) => s.transform[2] >= DETAIL_ZOOM);
  const hasLabel = (detailed || focused || props.selected) && (value || grad || problem || notTaken);
  return (
    <>
      <BaseEdge id={id} path={path} className={cls} interactionWidth={16} />
      {hasLabel && (
        <EdgeLabelRenderer>
          <div
            className={`wire-label ${cls}`}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
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

/** Below this zoom, edge labels are not drawn. */
export const DETAIL_ZOOM = 0.45;

export default memo(WireEdgeView);
