// One node on the canvas: its op and name, its typed ports (from the registry), and what the
// last run found: value, gradient, leaf .grad, problems. Subscribes to its own entries only, so
// a run's records re-render the nodes they are about and no others.
import { Handle, type NodeProps, Position, useStore } from "@xyflow/react";
import { memo } from "react";
import { useShallow } from "zustand/react/shallow";
import type { OpNode } from "../doc/convert";
import { formatSummary } from "../format/annotate";
import { useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { annoLines, LINE } from "./nodeSize";
import { DETAIL_ZOOM } from "./WireEdgeView";

function OpNodeView({ id, data, selected }: NodeProps<OpNode>) {
  const spec = useEditor((s) => s.ops[data.op]);
  const problems = useEditor(useShallow((s) => s.problems.filter((p) => p.node === id && !p.edge)));
  const isTarget = useEditor((s) => s.meta.target === id);
  const value = useRun((s) => s.annotations.values[id]);
  const grad = useRun((s) => s.annotations.nodeGrads[id]);
  const leafGrad = useRun((s) => s.annotations.leafGrads[id]);
  // a linear node's own parameters are leaves too: their .grad is shown on the node
  const weightGrad = useRun((s) => s.annotations.leafGrads[`${id}.weight`]);
  const biasGrad = useRun((s) => s.annotations.leafGrads[`${id}.bias`]);
  const skipped = useRun((s) => s.annotations.skipped[id]);
  const failed = useRun((s) => s.annotations.error?.node === id);
  const focused = useRun((s) => s.focus.node === id);
  // zoomed far out, text is unreadable: the node's stripe colours say what arrived instead
  const detailed = useStore((s) => s.transform[2] >= DETAIL_ZOOM);

  const name = (data.params.name as string) || id;
  const title = data.label || (spec?.source ? `${name} = ${data.op}` : `${id} = ${data.op}`);
  const inputs = spec?.inputs ?? [];
  const outputs = spec?.outputs ?? ["out"];
  const cls = [
    "op-node",
    spec?.source ? "source" : "",
    spec ? `cat-${spec.category.replace(/\s+/g, "-")}` : "unknown",
    problems.length || failed ? "has-problem" : "",
    skipped ? "skipped" : "",
    focused ? "focused" : "",
    selected ? "selected" : "",
    value ? "has-value" : "",
    grad || leafGrad || weightGrad ? "has-grad" : "",
  ].join(" ");

  return (
    <div className={cls} aria-label={`node ${id}`} data-testid={`node-${id}`} title={spec?.doc}>
      <div className="op-node-title" title={title}>
        {title}
        {isTarget && <span className="target-badge" title="backward starts here"> ◎</span>}
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
              <span>
                {p.name}
                {p.variadic ? "…" : p.optional ? "?" : ""}
              </span>
            </div>
          ))}
        </div>
        <div className="op-node-outputs">
          {outputs.map((o) => (
            <div key={o} className="port port-out">
              <span>{o}</span>
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
            <div className="anno value" data-testid={`value-${id}`} title={`value: ${formatSummary(value, 64)}`}>
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
