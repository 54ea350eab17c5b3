// One node on the canvas: its op and name, its typed ports (from the registry), and what the
// last run found: value, gradient, leaf .grad, problems. Subscribes to its own entries only, so
// a run's records re-render the nodes they are about and no others.
import { Handle, type NodeProps, Position } from "@xyflow/react";
import { memo, useMemo } from "react";
import type { NodeProblem } from "../api/types";
import type { OpNode } from "../doc/convert";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useDetailed } from "./detail";
import { annoLines, LINE, portsOf } from "./nodeSize";
import { useRunSlice } from "./runSlice";

/** What the latest run says about node `id`. */
function useNodeRun(id: string) {
  return useRunSlice((s) => {
    const a = s.annotations;
    return {
      value: a.values[id],
      cached: a.cached[id], // the value came from the forward cache: not recomputed
      grad: a.nodeGrads[id],
      leafGrad: a.leafGrads[id],
      // a linear node's own parameters are leaves too: their .grad is shown on the node
      weightGrad: a.leafGrads[`${id}.weight`],
      biasGrad: a.leafGrads[`${id}.bias`],
      skipped: a.skipped[id],
      failed: a.error?.node === id,
      focused: s.focus.node === id,
    };
  });
}

const NO_PROBLEMS: NodeProblem[] = [];
const isNodeProblem = (id: string) => (p: NodeProblem) => p.node === id && !p.edge;

/** The validation problems of node `id`. Its subscription answers with the same empty list
 * for a node without any, so an edit elsewhere (a drag moves a node on every frame) does not
 * re-render it. */
function useNodeProblems(id: string) {
  const all = useEditor((s) => (s.problems.some(isNodeProblem(id)) ? s.problems : NO_PROBLEMS));
  return useMemo(() => all.filter(isNodeProblem(id)), [all, id]);
}

function OpNodeView({ id, data, selected }: NodeProps<OpNode>) {
  const spec = useEditor((s) => s.ops[data.op]);
  const problems = useNodeProblems(id);
  const isTarget = useEditor((s) => s.meta.target === id);
  const { value, cached, grad, leafGrad, weightGrad, biasGrad, skipped, failed, focused } =
    useNodeRun(id);
  // zoomed far out, text is unreadable: the node is drawn without it, and its stripe colours
  // say what arrived
  const detailed = useDetailed();

  const name = (data.params.name as string) || id;
  const title = data.label || (spec?.source ? `${name} = ${data.op}` : `${id} = ${data.op}`);
  const { inputs, outputs } = portsOf(spec);
  const cls = [
    "op-node",
    spec?.source ? "source" : "",
    spec ? `cat-${spec.category.replace(/\s+/g, "-")}` : "unknown",
    problems.length || failed ? "has-problem" : "",
    skipped ? "skipped" : "",
    focused ? "focused" : "",
    selected ? "selected" : "",
    value ? "has-value" : "",
    value && cached ? "cached" : "",
    grad || leafGrad || weightGrad ? "has-grad" : "",
  ].join(" ");

  return (
    <div className={cls} aria-label={`node ${id}`} data-testid={`node-${id}`} title={spec?.doc}>
      <div className="op-node-title" title={title}>
        {detailed && title}
        {detailed && isTarget && <span className="target-badge" title="backward starts here"> ◎</span>}
      </div>
      <div className="op-node-ports">
        <div className="op-node-inputs">
          {inputs.map((p) => (
            <div key={p.name} className="port port-in">
              <Handle
                type="target"
                position={Position.Left}
                id={p.name}
                aria-label={`${id} input ${p.name}`}
                className={p.variadic ? "variadic" : p.optional ? "optional" : ""}
              />
              {detailed && (
                <span>
                  {p.name}
                  {p.variadic ? "…" : p.optional ? "?" : ""}
                </span>
              )}
            </div>
          ))}
        </div>
        <div className="op-node-outputs">
          {outputs.map((o) => (
            <div key={o} className="port port-out">
              {detailed && <span>{o}</span>}
              <Handle type="source" position={Position.Right} id={o} aria-label={`${id} output ${o}`} />
            </div>
          ))}
        </div>
      </div>
      {/* Every line a run can write has its place from the start, and the node a fixed
          width: a node that grew as values arrived would be re-measured by React Flow and
          re-route its edges, record after record. */}
      <div className="annos" style={{ height: `${annoLines(spec) * LINE}px` }}>
        {!detailed ? null : skipped ? (
          <div className="anno muted">not run</div>
        ) : (
          value && (
            <div
              className="anno value"
              data-testid={`value-${id}`}
              data-cached={cached ? "true" : undefined}
              title={`value${cached ? " (unchanged since the last run: from the cache)" : ""}: ${formatSummary(value, 64)}`}
            >
              {formatSummary(value)}
            </div>
          )
        )}
        {detailed && grad && (
          <div className="anno grad" data-testid={`grad-${id}`} title="gradient">
            ∇ {formatSummary(grad)}
          </div>
        )}
        {detailed && leafGrad && (
          <div className="anno leaf-grad" data-testid={`leafgrad-${id}`} title=".grad">
            .grad {formatSummary(leafGrad)}
          </div>
        )}
        {detailed && weightGrad && (
          <div className="anno leaf-grad" data-testid={`leafgrad-${id}.weight`} title="weight.grad">
            weight.grad {formatSummary(weightGrad)}
          </div>
        )}
        {detailed && biasGrad && (
          <div className="anno leaf-grad" data-testid={`leafgrad-${id}.bias`} title="bias.grad">
            bias.grad {formatSummary(biasGrad)}
          </div>
        )}
      </div>
      {problems.map((p, i) => (
        <div key={i} className="anno problem" role="alert">
          {p.param ? `${p.param}: ` : p.port ? `${p.port}: ` : ""}
          {p.message}
        </div>
      ))}
    </div>
  );
}

export default memo(OpNodeView);
