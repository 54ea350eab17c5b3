// One node on the canvas: its op and name, its typed ports (from the registry), and what the
// last run found: value, gradient, leaf .grad, problems. Subscribes to its own entries only, so
// a run's records re-render the nodes they are about and no others.
import { Handle, type NodeProps, Position } from "@xyflow/react";
import { memo, useMemo } from "react";
import type { NodeProblem } from "../api/types";
import type { OpNode } from "../doc/convert";
import { formatCompact, formatSummary } from "../format/annotate";
import { type EditorState, useEditor } from "../store/editor";
import { useRun } from "../store/run";
import { useShapes } from "../store/shapes";
import { useDetail } from "./detail";
import { InplaceBadge, RunErrorLine, VersionLine } from "./InplaceMarks";
import { allFaces, displayName, leafTag, leafValue, readableName, shapeText } from "./faces";
import { flattenHint, matmulHint } from "./shapeHints";
import { annoFontSize, annoLines, LINE, nodeSize, portsOf } from "./nodeSize";
import { CompactLine } from "./CompactLine";
import { measureText } from "./textWrap";
import { useFaceType } from "../store/faceType";
import StaleOffer from "./StaleOffer";
import { useRunSlice } from "./runSlice";
import { useRunKey } from "../store/modules";
import { useOverlay } from "../store/overlay";
import Breakable from "./Breakable";

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

/** A result line's style at full detail: smaller where its text is wider than the node
 * (nodeSize.ts annoFontSize), so that it is never cut. */
function fitted(text: string, width: number) {
  const px = annoFontSize(text, width);
  return px < 12 ? { fontSize: `${px}px` } : undefined;
}

const NO_PROBLEMS: NodeProblem[] = [];
const isNodeProblem = (id: string) => (p: NodeProblem) => p.node === id && !p.edge;

/** The validation problems of node `id`: a refused run's, and those the validation after
 * each edit finds before any run (store/shapes.ts `early`), each message once. Its
 * subscriptions answer with the same empty list for a node without any, so an edit elsewhere
 * (a drag moves a node on every frame) does not re-render it. */
function useNodeProblems(id: string) {
  const all = useEditor((s) => (s.problems.some(isNodeProblem(id)) ? s.problems : NO_PROBLEMS));
  const early = useShapes((s) => (s.early.some(isNodeProblem(id)) ? s.early : NO_PROBLEMS));
  return useMemo(() => {
    const mine = all.filter(isNodeProblem(id));
    const said = new Set(mine.map((p) => p.message));
    return [...mine, ...early.filter((p) => isNodeProblem(id)(p) && !said.has(p.message))];
  }, [all, early, id]);
}

/** The names of the nodes wired into `id`'s ports `input` and `other` (a matmul's). */
function operandNames(id: string): { input: string; other: string } {
  const { nodes, edges } = useEditor.getState();
  const nameAt = (port: string) => {
    const e = edges.find((x) => x.target === id && (x.targetHandle ?? "input") === port);
    const n = e && nodes.find((x) => x.id === e.source);
    return n ? readableName({ id: n.id, ...n.data }) : port;
  };
  return { input: nameAt("input"), other: nameAt("other") };
}

/** A flatten's warning (shapeHints.ts): from dim 0 of a batch into a linear layer. `key`: the
 * node's run key, under which (with its scope) the validation gave its input's shape. */
function useFlattenHint(id: string, key: string, data: OpNode["data"]): string | null {
  const flatten = data.op === "flatten";
  const source = useEditor((s) =>
    flatten ? (s.edges.find((e) => e.target === id && (e.targetHandle ?? "input") === "input")?.source ?? null) : null,
  );
  const feedsLinear = useEditor((s) =>
    flatten ? s.edges.some((e) => e.source === id && s.nodes.find((n) => n.id === e.target)?.data.op === "linear") : false,
  );
  const scope = key.slice(0, key.length - id.length);
  const shape = useShapes((s) => (source ? s.shapes[scope + source] : undefined));
  return flatten ? flattenHint(data.params, shape, feedsLinear) : null;
}

// Every node's face line, computed once per edit for the whole graph (each node's selector
// then only looks its own up): a face depends on the names of the nodes wired into it. A memo
// of the pure allFaces of the editor's nodes, edges and ops: no state of its own.
let faces: { nodes: unknown; edges: unknown; ops: unknown; text: Record<string, string> } | null = null;
function faceOf(s: EditorState, id: string): string | undefined {
  if (!faces || faces.nodes !== s.nodes || faces.edges !== s.edges || faces.ops !== s.ops)
    faces = { nodes: s.nodes, edges: s.edges, ops: s.ops, text: allFaces(s, s.ops) };
  return faces.text[id];
}

function OpNodeView({ id, data, selected }: NodeProps<OpNode>) {
  const spec = useEditor((s) => s.ops[data.op]);
  // inside an opened module, the opened instance's records (`l1/<id>`): doc/modules.ts
  const key = useRunKey(id);
  const problems = useNodeProblems(key);
  const warning = useFlattenHint(id, key, data);
  const isTarget = useEditor((s) => s.meta.target === id && !s.meta.open?.length); // the graph's own
  const { value, cached, grad, leafGrad, weightGrad, biasGrad, skipped, failed, focused } =
    useNodeRun(key);
  const overlay = useOverlay((s) => s.nodes[key]); // the overlay's colour (store/overlay.ts)
  // the level of detail at this zoom (canvas/detail.ts): full text; name and value in large
  // type; or, far out, no text (stripe colours say what arrived)
  const detail = useDetail();
  const detailed = detail === "full";
  const face = useEditor((s) => faceOf(s, id)) ?? `${id} = ${data.op}`;
  // far out no port is drawn: the shapes' arrival then re-renders no node
  const inferred = useShapes((s) => (detail === "none" ? undefined : s.shapes[key]));
  const name = displayName({ id, ...data });
  // as tall as its face needs at every zoom (nodeSize.ts): the same box the document opened
  // with, and a title of the same height whether or not its text is drawn, so that the
  // handles stay where React Flow measured them
  // (in the type the large faces are sized for: the projector's while presenting)
  const type = useFaceType((s) => s.type);
  const size = useMemo(
    () => nodeSize(spec, { face, name, target: isTarget }, measureText, type),
    [spec, face, name, isTarget, type],
  );
  const tag = leafTag({ id, ...data }, spec);
  // before any run a leaf shows the value it holds; after one, what the run computed
  const ownValue = value ? null : leafValue({ id, ...data }, spec);
  const outShape = shapeText(value?.shape ?? inferred);
  const { inputs, outputs } = portsOf(spec);
  const cls = [
    "op-node",
    spec?.source ? "source" : "",
    spec?.writes ? "writes" : "",
    spec ? `cat-${spec.category.replace(/\s+/g, "-")}` : "unknown",
    problems.length || failed ? "has-problem" : "",
    warning ? "has-warning" : "",
    skipped ? "skipped" : "",
    focused ? "focused" : "",
    selected ? "selected" : "",
    value ? "has-value" : "",
    value && cached ? "cached" : "",
    grad || leafGrad || weightGrad ? "has-grad" : "",
    overlay ? "overlay-on" : "",
  ].join(" ");

  return (
    <div
      className={cls}
      aria-label={`node ${id}`}
      data-testid={`node-${id}`}
      title={spec?.doc}
      style={{ width: `${size.width}px`, minHeight: `${size.height}px`, ...(overlay && { "--overlay": overlay }) }}
    >
      <div className="op-node-title" title={face} data-testid={`face-${id}`} style={{ minHeight: `${size.title}px` }}>
        {detailed && (
          <>
            <span className="face-name">
              <Breakable text={name} />
            </span>
            <Breakable text={face.slice(name.length)} />
          </>
        )}
        {detailed && isTarget && <span className="target-badge" title="backward starts here"> ◎</span>}
      </div>
      {detailed && tag && (
        <span className="leaf-tag" title={tag === "parameter" ? "a parameter: a leaf that requires grad" : "requires_grad=True"}>
          {tag === "parameter" ? "param" : "grad"}
        </span>
      )}
      {detailed && <InplaceBadge spec={spec} />}
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
              {detailed && (
                <span data-testid={`shape-${id}-${o}`} title={outShape ? `${o}: shape ${outShape}` : o}>
                  {outShape && outputs.length === 1 ? outShape : o}
                </span>
              )}
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
        ) : ownValue !== null ? (
          <div
            className="anno value leaf-value"
            data-testid={`leafvalue-${id}`}
            title="the value it holds (before a run)"
            style={fitted(ownValue, size.width)}
          >
            {ownValue}
          </div>
        ) : (
          value && (
            <div
              className="anno value"
              data-testid={`value-${id}`}
              data-cached={cached ? "true" : undefined}
              title={`value${cached ? " (unchanged since the last run: from the cache)" : ""}: ${formatSummary(value, 64)}`}
              style={fitted(formatSummary(value), size.width)}
            >
              {formatSummary(value)}
            </div>
          )
        )}
        {detailed && grad && (
          <div className="anno grad" data-testid={`grad-${id}`} title="gradient" style={fitted(`∇ ${formatSummary(grad)}`, size.width)}>
            ∇ {formatSummary(grad)}
          </div>
        )}
        {detailed && leafGrad && (
          <div className="anno leaf-grad" data-testid={`leafgrad-${id}`} title=".grad" style={fitted(`.grad ${formatSummary(leafGrad)}`, size.width)}>
            .grad {formatSummary(leafGrad)}
          </div>
        )}
        {detailed && weightGrad && (
          <button
            type="button"
            className="anno leaf-grad anno-open nodrag"
            data-testid={`leafgrad-${id}.weight`}
            title="weight.grad: open the whole tensor"
            style={fitted(`weight.grad ${formatSummary(weightGrad)}`, size.width)}
            onClick={() => useRun.getState().view({ node: key, kind: "grad", param: "weight" })}
          >
            weight.grad {formatSummary(weightGrad)}
          </button>
        )}
        {detailed && biasGrad && (
          <button
            type="button"
            className="anno leaf-grad anno-open nodrag"
            data-testid={`leafgrad-${id}.bias`}
            title="bias.grad: open the whole tensor"
            style={fitted(`bias.grad ${formatSummary(biasGrad)}`, size.width)}
            onClick={() => useRun.getState().view({ node: key, kind: "grad", param: "bias" })}
          >
            bias.grad {formatSummary(biasGrad)}
          </button>
        )}
      </div>
      {detail === "compact" && (
        // zoomed out or presenting: the name and what arrived, in a font sized for the zoom
        // the face line starts with the name, so an ellipsis only ever cuts the op
        // a problem's or a hint's text is too long for the large type: a mark says there is
        // one, the tooltip says it, zoomed in the node writes it out
        <div className="lod" title={[face, ...problems.map((p) => `⚠ ${p.message}`), ...(warning ? [`⚠ ${warning}`] : [])].join("\n")}>
          <div className="lod-name">
            <Breakable text={name} />
            {face.length > name.length && (
              <span className="lod-op">
                <Breakable text={face.slice(name.length)} />
              </span>
            )}
            {isTarget && <span className="target-badge"> ◎</span>}
            {(problems.length > 0 || failed || warning) && (
              <span className={`lod-mark ${problems.length || failed ? "problem" : "hint"}`} data-testid={`mark-${id}`}>
                {" "}
                ⚠
              </span>
            )}
          </div>
          {value && !skipped ? (
            <CompactLine className="value" testId={`value-${id}`} text={formatCompact(value)} kind="value" type={type} />
          ) : (
            <div className="lod-line leaf-value" data-testid={ownValue !== null && !skipped ? `leafvalue-${id}` : undefined}>
              {skipped ? "not run" : (ownValue ?? outShape ?? "")}
            </div>
          )}
          {grad && (
            <CompactLine className="lod-grad grad" testId={`grad-${id}`} text={`∇ ${formatCompact(grad)}`} kind="grad" type={type} />
          )}
        </div>
      )}
      {detailed && <VersionLine id={id} spec={spec} />}
      {failed && <RunErrorLine id={key} />}
      {problems.map((p, i) => {
        const hint = data.op === "matmul" ? matmulHint(p.message, operandNames(id)) : null;
        return (
          <div key={i}>
            <div className="anno problem" role="alert">
              {p.param ? `${p.param}: ` : p.port ? `${p.port}: ` : ""}
              {p.message}
            </div>
            {hint && (
              <div className="anno hint" role="note" data-testid={`hint-${id}`}>
                {hint}
              </div>
            )}
          </div>
        );
      })}
      {warning && (
        <div className="anno hint" role="note" data-testid={`hint-${id}`}>
          {warning}
        </div>
      )}
      <StaleOffer id={id} inNode={detailed} />
    </div>
  );
}

export default memo(OpNodeView);
