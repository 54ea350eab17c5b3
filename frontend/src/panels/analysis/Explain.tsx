// The chain rule on the selected edge: the gradient arriving at the consumer's output times
// the consumer's local derivative for this input is the gradient the edge carries back.
import { type ReactNode, useMemo } from "react";
import type { OpSpec, Summary } from "../../api/types";
import { formatNumber, formatShape } from "../../format/annotate";
import { useEditor } from "../../store/editor";
import { nameOf } from "../../store/names";
import { runKey } from "../../doc/modules";
import { useScope } from "../../store/modules";
import { useRun } from "../../store/run";
import { useQuiz } from "../../store/quiz";
import "./analysis.css";
import { type Chain, explainChain } from "./chainRule";

const EMPTY: Record<string, unknown> = {};

/** Why a backward run sent no gradient along the edge from `source` into `consumer`'s `port`:
 * the consumer has no derivative for that input (the registry says so: the port's `no_grad`
 * in GET /api/ops, e.g. detach, a comparison, a condition), the source does not require
 * grad, or no gradient reached the consumer at all. */
export function noGradientReason(c: {
  source: string;
  consumer: string;
  op: string | null;
  port: string;
  spec?: OpSpec; // the consumer's op, as GET /api/ops describes it
  sourceValue?: Summary; // the source's value in the run (its requires_grad)
  consumerGrad?: Summary; // the consumer's own gradient in the run
}): string {
  const { source, consumer, op, port } = c;
  const why = c.spec?.inputs.find((p) => p.name === port)?.no_grad;
  if (why) return why.replaceAll("{op}", op ?? "?").replaceAll("{source}", source);
  if (c.sourceValue && !c.sourceValue.requires_grad)
    return `${source} does not require grad, so autograd does not track it.`;
  if (!c.consumerGrad)
    return `no gradient reached ${consumer} itself: it is not on the way from the backward target to a leaf that requires grad.`;
  return `${consumer} (${op ?? "?"}) sent no gradient back to ${source} along this edge.`;
}

export default function Explain() {
  const edgeId = useRun((s) => s.selectedEdge);
  const selectEdge = useRun((s) => s.selectEdge);
  // a room's question about this edge's gradient (store/quiz.ts): not "no gradient flowed"
  const hiddenByQuiz = useQuiz((s) => !!edgeId && s.hiddenEdges.includes(edgeId));
  // edge objects and node data keep their identity across drags, so these settle quickly
  const edge = useEditor((s) => (edgeId ? s.edges.find((e) => e.id === edgeId) : undefined));
  const consumer = useEditor((s) =>
    edge ? s.nodes.find((n) => n.id === edge.target)?.data : undefined,
  );
  const consumerSpec = useEditor((s) => (consumer ? s.ops[consumer.op] : undefined));
  // whether the port the op's `scalar` param stands in for has an edge (mul's other)
  const scalarFor = consumerSpec?.scalar_for;
  const scalarPortConnected = useEditor((s) =>
    edge && scalarFor ? s.edges.some((e) => e.target === edge.target && e.targetHandle === scalarFor) : true,
  );
  // inside an opened module, the opened instance's records (`l1/<id>`: doc/modules.ts)
  const scope = useScope();
  const upstream = useRun((s) => (edge ? s.annotations.nodeGrads[runKey(scope, edge.target)] : undefined));
  const edgeGrad = useRun((s) => (edgeId ? s.annotations.edgeGrads[runKey(scope, edgeId)] : undefined));
  const notTaken = useRun((s) => (edgeId ? s.annotations.notTaken[runKey(scope, edgeId)] : undefined));
  const sourceValue = useRun((s) => (edge ? s.annotations.values[runKey(scope, edge.source)] : undefined));
  const backwardDone = useRun(
    (s) =>
      s.mode === "backward" &&
      (s.finished !== null || Object.keys(s.annotations.nodeGrads).length > 0),
  );

  const port = edge?.targetHandle ?? "input";
  const chain = useMemo(
    () =>
      explainChain({
        port,
        spec: consumerSpec,
        params: consumer?.params ?? EMPTY,
        scalarPortConnected,
        upstream,
        edgeGrad,
        notTaken,
        backwardDone,
      }),
    [port, consumerSpec, consumer, scalarPortConnected, upstream, edgeGrad, notTaken, backwardDone],
  );

  if (!edgeId) return null;

  // people read the names they gave the nodes, not ids
  const P = edge ? nameOf(edge.source) : "?";
  const C = edge ? nameOf(edge.target) : "?";
  const local = `∂${C}/∂${port}`;

  let body;
  if (!edge) {
    body = <p className="ex-note">This edge is no longer in the graph.</p>;
  } else if (chain.kind === "not-taken") {
    body = (
      <p className="ex-note">
        This edge is on the '{chain.port}' branch of {C}, which was not taken: the branch did
        not run, so no gradient flows back along it.
      </p>
    );
  } else if (chain.kind === "needs-backward") {
    body = <p className="ex-note">Run backward to see the gradient this edge carries.</p>;
  } else if (hiddenByQuiz) {
    body = <p className="ex-note">Hidden until your teacher reveals it: predict the gradient this edge carries.</p>;
  } else if (chain.kind === "no-gradient") {
    body = (
      <p className="ex-note">
        No gradient flowed along this edge in the last backward run:{" "}
        {noGradientReason({
          source: P,
          consumer: C,
          op: consumer?.op ?? null,
          port,
          spec: consumerSpec,
          sourceValue,
          consumerGrad: upstream,
        })}
      </p>
    );
  } else {
    const rule = consumer && chain.known ? `the rule for ${consumer.op}` : "formula";
    const formulaLine = !chain.known ? (
      <li className="ex-formula">
        formula: <code>{chain.formula}</code>
      </li>
    ) : chain.form === "grad" ? (
      <li className="ex-formula">
        {rule}: edge gradient = <code>{chain.formula}</code>{" "}
        <span className="ex-aside">(grad: the upstream gradient)</span>
      </li>
    ) : (
      <li className="ex-formula">
        {rule}: {local} = <code>{chain.formula}</code>
      </li>
    );
    body =
      chain.kind === "scalar" ? (
        <ul className="ex-steps">
          <li className="ex-upstream">
            upstream ∂L/∂{C} ={" "}
            <span className="ex-grad">
              {chain.upstream === null ? "unknown" : formatNumber(chain.upstream)}
            </span>
          </li>
          <li className="ex-local">
            local {local} ={" "}
            {chain.local !== null ? (
              <>
                <span className="ex-num">{formatNumber(chain.local)}</span>{" "}
                <span className="ex-aside">(edge gradient ÷ upstream)</span>
              </>
            ) : (
              <span className="ex-aside">
                {chain.upstream === 0
                  ? "not recoverable: the upstream gradient is 0, so the edge gets 0 whatever it is"
                  : "unknown"}
              </span>
            )}
          </li>
          {formulaLine}
          <li className="ex-product">
            ∂L/∂{C} × {local} ={" "}
            {chain.product ? (
              <span className="ex-grad">{chain.product}</span>
            ) : (
              <span className="ex-grad">{formatNumber(chain.edgeGrad)}</span>
            )}{" "}
            <span className="ex-aside">the gradient on this edge, back to {P}</span>
          </li>
        </ul>
      ) : chain.numbers ? (
        <TensorSteps C={C} P={P} local={local} chain={chain} formulaLine={formulaLine} />
      ) : (
        <ul className="ex-steps">
          <li className="ex-upstream">
            upstream ∂L/∂{C}: shape{" "}
            <span className="ex-grad">
              {chain.upstreamShape ? formatShape(chain.upstreamShape) : "unknown"}
            </span>
          </li>
          {formulaLine}
          <li className="ex-product">
            edge gradient: shape <span className="ex-grad">{formatShape(chain.edgeShape)}</span>{" "}
            <span className="ex-aside">
              {chain.form === "elementwise"
                ? `(upstream ⊙ ${local}, summed over broadcast dims)`
                : NOT_ELEMENTWISE[chain.form]}
            </span>
          </li>
        </ul>
      );
  }

  return (
    <section className="ex-panel" role="region" aria-label="chain rule">
      <header className="ex-header">
        <h2 className="ex-title">
          Chain rule
          {edge && (
            <span className="ex-sub" title={`edge ${edgeId}`}>
              {" "}
              on {P} → {C}.{port}
              {consumer ? ` (${consumer.op})` : ""}
            </span>
          )}
        </h2>
        <button
          type="button"
          className="ex-close"
          aria-label="close explanation"
          onClick={() => selectEdge(null)}
        >
          ×
        </button>
      </header>
      {(sourceValue || edgeGrad) && (
        <div className="inspector-actions">
          {/* the edge's tensors in the tensor viewer: its value is its producer's (the server
              keeps it once, by node), its gradient the edge's own */}
          {sourceValue && edge && (
            <button type="button" onClick={() => useRun.getState().view({ node: runKey(scope, edge.source), kind: "value" })}>
              view value
            </button>
          )}
          {edgeGrad && (
            <button type="button" onClick={() => useRun.getState().view({ edge: runKey(scope, edgeId), kind: "grad" })}>
              view gradient
            </button>
          )}
        </div>
      )}
      {body}
    </section>
  );
}

type TensorChain = Extract<Chain, { kind: "tensor" }>;

/** Why a tensor edge's numbers have no per-element local derivative, by the derivative's kind. */
const NOT_ELEMENTWISE = {
  grad: "(the rule applied to the upstream gradient, not elementwise)",
  jacobian: "(the upstream gradient times a Jacobian, not elementwise)",
} as const;

/** The chain rule on a tensor edge with its numbers: upstream ⊙ local = edge (written in full
 * up to 16 elements, as a compact matrix beyond). */
function TensorSteps(props: { C: string; P: string; local: string; chain: TensorChain; formulaLine: ReactNode }) {
  const { C, P, local, chain } = props;
  const n = chain.numbers!;
  const shape = (s: number[] | null) => (s ? ` (${formatShape(s)})` : "");
  const num = (text: string, cls: string) => <code className={`ex-tensor ${cls}`}>{text}</code>;
  return (
    <ul className="ex-steps" data-full={n.full ? "true" : "false"}>
      <li className="ex-upstream">
        upstream ∂L/∂{C}
        {shape(chain.upstreamShape)} = {n.upstream ? num(n.upstream, "ex-grad") : <span className="ex-grad">unknown</span>}
      </li>
      {props.formulaLine}
      {chain.form !== "elementwise" ? (
        <li className="ex-product">
          edge gradient{shape(chain.edgeShape)} = {num(n.edge, "ex-grad")}{" "}
          <span className="ex-aside">
            {NOT_ELEMENTWISE[chain.form]}, back to {P}
          </span>
        </li>
      ) : (
        <li className="ex-product" aria-label="upstream times local equals edge">
          {n.upstream ? num(n.upstream, "ex-grad") : "upstream"} ⊙ {n.local ? num(n.local, "ex-num") : local} ={" "}
          {num(n.edge, "ex-grad")}{" "}
          <span className="ex-aside">
            {n.local
              ? `upstream ⊙ ${local} = the gradient on this edge, back to ${P}`
              : `upstream ⊙ ${local}, summed over the broadcast dims: the gradient back to ${P}`}
          </span>
        </li>
      )}
    </ul>
  );
}
