// One wire: its producer's value and, after backward, the gradient its consumer sent back
// along it (in the gradient colour). A branch an `if` did not take is dimmed. Wires joining the
// same two nodes stack their labels (parallelEdges.ts).
import { BaseEdge, EdgeLabelRenderer, type EdgeProps, getBezierPath, useStoreApi } from "@xyflow/react";
import { memo } from "react";
import type { WireEdge } from "../doc/convert";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { useDetailed } from "./detail";
import { type Box, labelSize, placeLabel } from "./labelPlace";
import { labelShift, parallelPlaces } from "./parallelEdges";
import { useRunSlice } from "./runSlice";
import { useRunKey } from "../store/modules";
import { useOverlay } from "../store/overlay";

/** What the latest run says about edge `id`. The producer's value is only ever shown in a
 * label: an edge drawn without one does not re-render when that value arrives. */
function useEdgeRun(id: string, source: string, port: string, labelled: boolean) {
  return useRunSlice((s) => {
    const a = s.annotations;
    const focused = s.focus.edge === id;
    return {
      // a module instance's output port: the value of its output node (doc/modules.ts)
      value: labelled || focused ? (a.values[source] ?? a.values[`${source}/${port}`]) : undefined,
      grad: a.edgeGrads[id],
      notTaken: a.notTaken[id],
      focused,
    };
  });
}

type NodeLookup = ReturnType<ReturnType<typeof useStoreApi>["getState"]>["nodeLookup"];

function* nodeBoxes(lookup: NodeLookup): Iterable<Box> {
  for (const n of lookup.values()) {
    const p = n.internals.positionAbsolute;
    yield { x: p.x, y: p.y, width: n.measured.width ?? n.width ?? 0, height: n.measured.height ?? n.height ?? 0 };
  }
}

function WireEdgeView(props: EdgeProps<WireEdge>) {
  const { id, source, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  // zoomed far out, labels would be specks: the wire's colour says what arrived on it, and
  // a thousand labels fewer keep panning and streaming smooth
  const detailed = useDetailed();
  // inside an opened module, the opened instance's records (`l1/<id>`)
  const key = useRunKey(id);
  const { value, grad, notTaken, focused } = useEdgeRun(
    key,
    useRunKey(source),
    props.sourceHandleId ?? "out",
    detailed || !!props.selected,
  );
  const problem = useEditor((s) => s.problems.find((p) => p.edge === key));
  const overlay = useOverlay((s) => s.edges[key]); // the overlay's colour, over the usual ones
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
    overlay ? "overlay-on" : "",
  ].join(" ");
  const hasLabel = (detailed || focused || props.selected) && (value || grad || problem || notTaken);
  const flow = useStoreApi();
  // the label's place: off any node (labelPlace.ts). Read from the store when drawn, not
  // subscribed to: the edge is drawn again whenever one of its ends moves. Stacked labels of
  // parallel edges keep the middle their stack is built around.
  let at = { x: labelX, y: labelY };
  if (hasLabel && !shift) {
    const lines = [
      notTaken ? "not taken" : value ? formatSummary(value) : "",
      grad ? `∇ ${formatSummary(grad)}` : "",
      problem ? problem.message.slice(0, 40) : "",
    ].filter(Boolean);
    at = placeLabel(path, labelSize(lines), nodeBoxes(flow.getState().nodeLookup), at);
  }
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        className={cls}
        interactionWidth={16}
        style={overlay ? { stroke: overlay, strokeWidth: 4 } : undefined}
      />
      {hasLabel && (
        <EdgeLabelRenderer>
          <div
            className={`wire-label ${cls}`}
            style={{ transform: `translate(-50%, -50%) translate(${at.x}px, ${at.y + shift}px)` }}
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
